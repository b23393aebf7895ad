#include "schedules/registry.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "schedules/attention/attention.h"
#include "schedules/conv2d/amx.h"
#include "schedules/conv2d/depthwise_mult.h"
#include "schedules/conv2d/int8.h"
#include "schedules/conv2d/lowp.h"
#include "schedules/conv2d/templates.h"
#include "schedules/conv2d/transpose.h"
#include "schedules/conv2d/winograd.h"
#include "schedules/data_movement/channel_shuffle.h"
#include "schedules/data_movement/data_movement.h"
#include "schedules/data_movement/gather.h"
#include "schedules/data_movement/resize.h"
#include "schedules/data_movement/transpose_shuffle.h"
#include "schedules/dense/amx.h"
#include "schedules/dense/batch_matmul.h"
#include "schedules/dense/dense.h"
#include "schedules/dense/int8.h"
#include "schedules/dense/lowp.h"
#include "schedules/elementwise/batch_norm.h"
#include "schedules/elementwise/cast.h"
#include "schedules/elementwise/elementwise.h"
#include "schedules/elementwise/qlinear_add.h"
#include "schedules/elementwise/quantize.h"
#include "schedules/layout.h"
#include "schedules/pooling/blocked.h"
#include "schedules/pooling/pooling.h"
#include "schedules/reduce/arg_reduce.h"
#include "schedules/reduce/cumsum.h"
#include "schedules/reduce/reduce.h"
#include "schedules/reduce/softmax.h"

namespace kiln::schedules {

const std::vector<const OpTemplate*>& all_templates() {
  // Where several templates apply to a workload, the first listed is its default.
  static const std::vector<const OpTemplate*> k = {
      // dense (AMX first: where a CPU has it, it is the fastest bf16 path by far)
      &dense_bf16_amx_template(),
      &dense_bf16_x86_template(),
      &dense_bf16_arm_template(),
      &dense_f16_arm_template(),
      &dense_int8_dot_template(),
      &dense_int8_template(),
      &dense_packed_template(),
      // elementwise: one template per op
      &elementwise_flat_template("relu"),
      &elementwise_flat_template("clip"),
      &elementwise_flat_template("sigmoid"),
      &elementwise_flat_template("tanh"),
      &elementwise_flat_template("gelu"),
      &elementwise_flat_template("exp"),
      &elementwise_flat_template("log"),
      &elementwise_flat_template("sqrt"),
      &elementwise_flat_template("neg"),
      &elementwise_flat_template("abs"),
      &elementwise_flat_template("reciprocal"),
      &elementwise_flat_template("add"),
      &elementwise_flat_template("sub"),
      &elementwise_flat_template("mul"),
      &elementwise_flat_template("div"),
      &elementwise_flat_template("min"),
      &elementwise_flat_template("max"),
      &elementwise_flat_template("pow"),
      &elementwise_flat_template("prelu"),
      &elementwise_flat_template("erf"),
      &elementwise_flat_template("leaky_relu"),
      &elementwise_flat_template("hard_sigmoid"),
      &elementwise_flat_template("hard_swish"),
      &elementwise_flat_template("silu"),
      &elementwise_flat_template("not"),
      &elementwise_flat_template("nonzero"),
      &elementwise_flat_template("trunc"),
      &elementwise_flat_template("copy"),
      &elementwise_flat_template("softplus"),
      &elementwise_flat_template("mish"),
      &elementwise_flat_template("elu"),
      &elementwise_flat_template("selu"),
      &elementwise_flat_template("celu"),
      &elementwise_flat_template("softsign"),
      &elementwise_flat_template("thresholded_relu"),
      &elementwise_flat_template("floor"),
      &elementwise_flat_template("ceil"),
      &elementwise_flat_template("round"),
      &elementwise_flat_template("sign"),
      &elementwise_flat_template("sin"),
      &elementwise_flat_template("cos"),
      &elementwise_flat_template("equal"),
      &elementwise_flat_template("less"),
      &elementwise_flat_template("greater"),
      &elementwise_flat_template("less_equal"),
      &elementwise_flat_template("greater_equal"),
      &elementwise_flat_template("and"),
      &elementwise_flat_template("or"),
      &elementwise_flat_template("xor"),
      &elementwise_flat_template("where"),
      &elementwise_flat_template("elementwise_chain"),
      // conv2d (AMX first, as for dense). The depthwise forms before conv2d.nchwc: the first
      // template that applies is the default of `kiln tune --op` and `kiln inspect`, and
      // conv2d.nchwc computes a depthwise conv through block-diagonal weights, groups x the
      // FLOPs (MobileNet's 96-channel 112x112 layer tuned on it for 200 trials: 1.0 GFLOPS,
      // against oneDNN's 40).
      &conv2d_bf16_amx_template(),
      &conv2d_bf16_x86_template(),
      &conv2d_bf16_arm_template(),
      &conv2d_f16_arm_template(),
      &conv2d_int8_dot_template(),
      &conv2d_int8_template(),
      &conv2d_int8_depthwise_template(),
      &conv2d_depthwise_template(),
      &conv2d_depthwise_mult_template(),
      &conv2d_nchwc_template(),
      &conv2d_1x1_template(),
      &conv2d_transpose_template(),
      &conv2d_winograd_template(),
      // layout transforms
      &layout_nchw_to_nchwc_template(),
      &layout_nchwc_to_nchw_template(),
      &layout_nchwc_to_nchwc_template(),
      // pooling, normalisation
      &max_pool2d_template(),
      &avg_pool2d_template(),
      &global_avg_pool2d_template(),
      // the blocked forms after the NCHW ones: the default for an NCHW producer stays NCHW
      &max_pool2d_blocked_template(),
      &avg_pool2d_blocked_template(),
      &global_avg_pool2d_blocked_template(),
      &softmax_template(),
      &layer_norm_template(),
      &batch_norm_template(),
      // data movement, batched matmul
      &concat_template(),
      &channel_shuffle_template(),
      &transpose_shuffle_template(),  // before transpose.tiled: its default where it applies
      &transpose_template(),
      &pad_template(),
      &gather_template(),
      &slice_template(),
      &resize_template(),
      &reduce_template("reduce_sum"),
      &reduce_template("reduce_mean"),
      &reduce_template("reduce_max"),
      &reduce_template("reduce_min"),
      &arg_reduce_template("arg_max"),
      &arg_reduce_template("arg_min"),
      &cumsum_template(),
      &reshape_template(),
      &batch_matmul_template(),
      &attention_template(),
      // precision conversion at the edges of low-precision regions
      &cast_template(),
      &quantize_template(),
      &dequantize_template(),
      &qlinear_add_template(),
  };
  return k;
}

namespace {

// A template whose dtypes() lack the workload's would refuse it in validate(): integer
// workloads go to the int8 templates, float ones never do.
bool accepts_dtype(const OpTemplate& tpl, const Workload& w) {
  const std::vector<ir::DataType> types = tpl.dtypes();
  return std::find(types.begin(), types.end(), w.dtype) != types.end();
}

}  // namespace

std::vector<const OpTemplate*> templates_for(const Workload& w, const Target& t) {
  std::vector<const OpTemplate*> out;
  std::vector<std::string> dtypes;  // what the op's templates take, for the error
  for (const OpTemplate* tpl : all_templates()) {
    if (tpl->op() != w.op) continue;
    for (ir::DataType d : tpl->dtypes())
      if (std::find(dtypes.begin(), dtypes.end(), d.str()) == dtypes.end()) dtypes.push_back(d.str());
    if (accepts_dtype(*tpl, w) && tpl->applies(w, t)) out.push_back(tpl);
  }
  if (out.empty() && !dtypes.empty() &&
      std::find(dtypes.begin(), dtypes.end(), w.dtype.str()) == dtypes.end()) {
    std::string valid;
    for (const std::string& d : dtypes) valid += (valid.empty() ? "" : ", ") + d;
    user_error() << w.op << ": dtype " << w.dtype.str() << " is not supported (valid: " << valid << ")";
  }
  user_check(!out.empty()) << "no schedule template implements " << w.str() << " for target "
                           << t.name;
  return out;
}

const OpTemplate& template_named(const std::string& name) {
  std::string names;
  for (const OpTemplate* t : all_templates()) {
    if (t->name() == name) return *t;
    names += (names.empty() ? "" : ", ") + t->name();
  }
  user_error() << "unknown schedule template '" << name << "' (known: " << names << ")";
  return *all_templates().front();
}

}  // namespace kiln::schedules
