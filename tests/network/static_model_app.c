/* A board program that links compiled models statically (their model.a) with the runtime's
 * static library, as model.h describes: no model.so, no dlopen. The tests compile it against
 * one or more model directories: every model.h is force-included (-include DIR/model.h) and
 * KILN_MODEL_ENTRIES lists their entry tables (-DKILN_MODEL_ENTRIES=&kiln_model_a,&kiln_model_b).
 *
 *   static_model_app PARAMS INPUT OUTPUT [PARAMS INPUT OUTPUT ...]    one triple per model
 *
 * INPUT holds every input's bytes back to back, OUTPUT receives every output's. Exit 1 with
 * the runtime's message on any failure, 2 on bad usage. */
#include <stdio.h>
#include <stdlib.h>

#include "kiln/kernel_abi.h"
#include "kiln/runtime_c.h"

static const kiln_model_entry* const kEntries[] = {KILN_MODEL_ENTRIES};
#define NUM_MODELS ((int)(sizeof kEntries / sizeof kEntries[0]))

static int fail(const char* what) {
  fprintf(stderr, "static_model_app: %s: %s\n", what, kiln_last_error());
  return 1;
}

/* Loads model `index`, runs it once on INPUT's bytes and writes OUTPUT. */
static int run_model(int index, const char* params, const char* input, const char* output) {
  kiln_model* model = NULL;
  if (kiln_model_load_static(kEntries[index], params, 1, &model) != KILN_OK) return fail("load");
  const int32_t n_in = kiln_model_num_inputs(model), n_out = kiln_model_num_outputs(model);
  void* in[16] = {0};
  void* out[16] = {0};
  int status = 1;
  FILE* f = fopen(input, "rb");
  if (!f || n_in > 16 || n_out > 16) {
    fprintf(stderr, "static_model_app: cannot read %s\n", input);
    goto done;
  }
  for (int32_t i = 0; i < n_in; ++i) {
    kiln_tensor_info t;
    kiln_model_input_info(model, i, &t);
    in[i] = aligned_alloc(64, (t.bytes + 63) / 64 * 64);
    if (fread(in[i], 1, t.bytes, f) != t.bytes) {
      fprintf(stderr, "static_model_app: %s is too short for input '%s'\n", input, t.name);
      goto done;
    }
  }
  for (int32_t i = 0; i < n_out; ++i) {
    kiln_tensor_info t;
    kiln_model_output_info(model, i, &t);
    out[i] = aligned_alloc(64, (t.bytes + 63) / 64 * 64);
  }
  if (kiln_model_run(model, (const void* const*)in, out) != KILN_OK) {
    status = fail("run");
    goto done;
  }
  FILE* o = fopen(output, "wb");
  for (int32_t i = 0; o && i < n_out; ++i) {
    kiln_tensor_info t;
    kiln_model_output_info(model, i, &t);
    fwrite(out[i], 1, t.bytes, o);
  }
  status = (o && fclose(o) == 0) ? 0 : 1;
  printf("model %d (%s): ran, %d input(s), %d output(s)\n", index, kEntries[index]->target,
         (int)n_in, (int)n_out);
done:
  if (f) fclose(f);
  for (int i = 0; i < 16; ++i) {
    free(in[i]);
    free(out[i]);
  }
  kiln_model_free(model);
  return status;
}

int main(int argc, char** argv) {
  if (argc != 1 + 3 * NUM_MODELS) {
    fprintf(stderr, "usage: static_model_app PARAMS INPUT OUTPUT (one triple per model, %d)\n",
            NUM_MODELS);
    return 2;
  }
  for (int m = 0; m < NUM_MODELS; ++m) {
    const int status = run_model(m, argv[1 + 3 * m], argv[2 + 3 * m], argv[3 + 3 * m]);
    if (status != 0) return status;
  }
  return 0;
}
