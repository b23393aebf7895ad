// concat, channel shuffle, transpose, pad and reshape templates: fallback and random configs over
// network shapes (ranks 1-5) (BERT head split/merge, ResNet/ MobileNet concat and pad) and awkward
// ones, on every target preset, f32 everywhere, f16/bf16 where the target has them, and u8/i8 for
// the copies a quantized model makes between its integer layers (concat, slice, reshape); bad
// shapes.
#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "schedules/data_movement/channel_shuffle.h"
#include "schedules/data_movement/data_movement.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::OpTemplate;
using schedules::Workload;
using Shape = std::vector<int64_t>;

void put(Workload& w, const std::string& prefix, const Shape& v) {
  for (size_t i = 0; i < v.size(); ++i) w.params[prefix + std::to_string(i)] = v[i];
}
Workload concat(const Shape& out, int64_t axis, const Shape& extents, DataType t = DataType::f32()) {
  Workload w{"concat", {{"ndim", int64_t(out.size())}, {"axis", axis},
                        {"inputs", int64_t(extents.size())}}, t, {}};
  put(w, "D", out);
  put(w, "E", extents);
  return w;
}
Workload transpose(const Shape& in, const Shape& perm, DataType t = DataType::f32()) {
  Workload w{"transpose", {{"ndim", int64_t(in.size())}}, t, {}};
  put(w, "D", in);
  put(w, "P", perm);
  return w;
}
Workload pad(const Shape& in, const Shape& before, const Shape& after, double value = 0,
             DataType t = DataType::f32()) {
  Workload w{"pad", {{"ndim", int64_t(in.size())}, {"value", value}}, t, {}};
  put(w, "D", in);
  put(w, "B", before);
  put(w, "A", after);
  return w;
}
// The pad kernel's edge (1) and reflect (2) modes.
Workload with_mode(Workload w, int64_t mode) {
  w.params["mode"] = mode;
  return w;
}
Workload reshape(const Shape& in, const Shape& out, DataType t = DataType::f32()) {
  Workload w{"reshape", {{"ndim", int64_t(in.size())}, {"ondim", int64_t(out.size())}}, t, {}};
  put(w, "D", in);
  put(w, "O", out);
  return w;
}

// A channel shuffle of `group` groups over inputs of `channels` held in `blocks` (1: NCHW),
// written in blocks of `block`.
Workload shuffle(int64_t n, int64_t hw, int64_t group, int64_t block, const Shape& channels,
                 const Shape& blocks, DataType t = DataType::f32()) {
  Workload w{"channel_shuffle",
             {{"N", n},
              {"HW", hw},
              {"group", group},
              {"block", block},
              {"inputs", int64_t(channels.size())}},
             t,
             {}};
  put(w, "E", channels);
  put(w, "B", blocks);
  return w;
}

Workload slice(const Shape& in, const Shape& start, const Shape& step, const Shape& out,
               DataType t = DataType::f32()) {
  Workload w{"slice", {{"ndim", int64_t(in.size())}}, t, {}};
  put(w, "D", in);
  put(w, "S", start);
  put(w, "T", step);
  put(w, "O", out);
  return w;
}

const OpTemplate& template_for(const Workload& w) {
  if (w.op == "slice") return schedules::slice_template();
  if (w.op == "concat") return schedules::concat_template();
  if (w.op == "channel_shuffle") return schedules::channel_shuffle_template();
  if (w.op == "transpose") return schedules::transpose_template();
  if (w.op == "pad") return schedules::pad_template();
  return schedules::reshape_template();
}

std::vector<TemplateCase> cases() {
  std::vector<TemplateCase> out;
  add_small_shape_cases(out,
                        {
                            concat({2, 0, 5, 7}, 1, {3, 1, 4}),
                            concat({3, 19}, 1, {5, 14}),
                            concat({6, 3}, 0, {2, 1, 2, 1}),
                            concat({17}, 0, {9, 8}),
                            concat({2, 3, 0, 4, 5}, 2, {3, 7}),   // rank 5
                            concat({1, 0, 3, 5, 16}, 1, {2, 3}),  // NCHW16c blocks
                            concat({5, 0}, 1, {37, 70, 3}),       // runs of 37, 70, 3
                            concat({2, 0, 5}, 1, {3}),            // one input: a copy
                            concat({1, 0, 4, 3}, 1, {1, 2, 3, 4, 5, 6, 7, 8, 9}),  // DenseNet's
                            transpose({3, 5, 7, 9}, {0, 2, 1, 3}),
                            transpose({19, 37}, {1, 0}),
                            transpose({2, 3, 4, 5}, {3, 1, 0, 2}),
                            transpose({4, 6, 5}, {2, 0, 1}),
                            transpose({2, 3, 4, 5, 3}, {4, 1, 3, 0, 2}),  // rank 5
                            pad({2, 3, 5, 7}, {0, 0, 1, 2}, {0, 1, 1, 0}, 0.25),
                            pad({13}, {3}, {0}),
                            with_mode(pad({2, 3, 5, 7}, {0, 0, 2, 3}, {0, 0, 1, 3}), 1),
                            with_mode(pad({1, 4, 6, 5}, {0, 0, 3, 1}, {0, 0, 2, 4}), 2),
                            with_mode(pad({9}, {8}, {0}), 2),
                            reshape({3, 5, 7}, {105}),
                            reshape({2, 3, 1, 1}, {6, 1}),
                            slice({3, 4, 2, 37}, {1, 0, 0, 2}, {1, 1, 1, 1}, {1, 4, 2, 35}),
                            slice({13, 29}, {2, 3}, {3, 2}, {4, 13}),
                            slice({3, 8, 96}, {0, 0, 32}, {1, 1, 1}, {3, 8, 32}),
                            // Channel shuffles: NCHW, one input and two (a concat folded in);
                            // blocked, interleaving runs of 4 lanes (inputs in blocks of 8 and
                            // 32, the latter partial); groups of 4 in runs of 2; 3 groups and
                            // blocks that do not split into runs (channel by channel).
                            shuffle(2, 13, 2, 1, {12}, {1}),
                            shuffle(1, 37, 2, 1, {10, 10}, {1, 1}),
                            shuffle(2, 9, 2, 8, {24, 24}, {8, 32}),
                            shuffle(1, 5, 4, 8, {16, 16}, {4, 8}),
                            shuffle(2, 7, 3, 4, {16, 8}, {4, 1}),
                            shuffle(1, 6, 2, 16, {16}, {16}),
                        });
  for (const auto& [t, d] : half_targets())
    for (int c = -1; c < 1; ++c) {
      out.push_back({concat({2, 0, 9}, 1, {3, 2}, d), t, c});
      out.push_back({concat({2, 3, 21}, 2, {5, 16}, d), t, c});
      out.push_back({transpose({6, 35}, {1, 0}, d), t, c});
      out.push_back({transpose({2, 5, 3, 20}, {0, 2, 1, 3}, d), t, c});
      out.push_back({pad({3, 10}, {1, 2}, {2, 5}, -1.0 / 3, d), t, c});
      out.push_back({with_mode(pad({3, 10}, {1, 2}, {2, 5}, 0, d), 2), t, c});
      out.push_back({slice({4, 40}, {1, 3}, {2, 1}, {2, 37}, d), t, c});
      out.push_back({shuffle(1, 9, 2, 8, {16, 16}, {8, 16}, d), t, c});
    }
  for (const char* t : {"x86-avx2", "arm-neon"})
    for (DataType d : {DataType::u8(), DataType::i8()})
      for (int c = -1; c < 1; ++c) {
        out.push_back({concat({2, 3, 21}, 2, {5, 16}, d), t, c});
        out.push_back({slice({4, 40}, {1, 3}, {2, 1}, {2, 37}, d), t, c});
        out.push_back({reshape({2, 3, 5, 7}, {6, 35}, d), t, c});
        out.push_back({shuffle(2, 11, 2, 4, {8, 8}, {4, 4}, d), t, c});
      }
  // transpose.tiled where transpose.shuffle is the default, so both keep their coverage.
  for (const Workload& w : {transpose({19, 37}, {1, 0}), transpose({2, 17, 5, 33}, {0, 2, 3, 1})})
    for (int c = -1; c < 2; ++c)
      out.push_back({w, c < 1 ? "x86-avx512" : "arm-neon", c, &schedules::transpose_template()});
  // Network shapes, natively: BERT-base head split and merge, a DenseNet/Inception-style
  // channel concat, a ResNet stem pad, a flatten before the classifier.
  add_native_cases(
      out,
      {transpose({1, 128, 12, 64}, {0, 2, 1, 3}), transpose({12, 128, 64}, {0, 2, 1}),
       concat({1, 0, 28, 28}, 1, {64, 96, 128, 32}), concat({1, 0, 26, 26}, 1, {256, 128}),
       concat({4096, 0}, 1, {48, 80}), shuffle(1, 784, 2, 8, {24, 24}, {8, 32}),
       shuffle(1, 196, 2, 16, {48, 48}, {16, 16}), shuffle(1, 3136, 2, 1, {58, 58}, {1, 1}),
       pad({1, 3, 224, 224}, {0, 0, 3, 3}, {0, 0, 3, 3}), reshape({1, 512, 7, 7}, {1, 25088})});
  return out;
}

class DataMovementTemplateTest : public TemplateTest {};

TEST_P(DataMovementTemplateTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(DataMovement, DataMovementTemplateTest, ::testing::ValuesIn(cases()),
                         template_case_name);

TEST(DataMovementTemplateErrors, BadShapesAndDtypes) {
  Target x86 = target_from_name("x86-avx512");
  auto instantiate = [&](const Workload& w) {
    const OpTemplate& t = template_for(w);
    return t.instantiate(w, x86, t.fallback(w, x86));
  };
  EXPECT_THROW(instantiate(concat({2, 0, 5}, 3, {1, 2})), UserError);   // axis out of range
  EXPECT_THROW(instantiate(concat({2, 0, 5}, 1, {})), UserError);       // no input
  EXPECT_THROW(instantiate(concat({2, 0, 5}, 1, std::vector<int64_t>(65, 1))), UserError);
  EXPECT_NO_THROW(instantiate(concat({2, 0, 5}, 1, {3})));              // one: a copy
  EXPECT_THROW(instantiate(concat({2, 0, 5}, 1, {1, 0})), UserError);   // empty input
  EXPECT_THROW(instantiate(concat({2, -1, 5}, 0, {1, 1})), UserError);  // negative dim
  EXPECT_THROW(instantiate(transpose({2, 3}, {0, 0})), UserError);      // not a permutation
  EXPECT_THROW(instantiate(transpose({2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5})), UserError);  // rank 6
  EXPECT_THROW(instantiate(pad({2, 3}, {0, -1}, {0, 0})), UserError);  // negative pad
  EXPECT_THROW(instantiate(with_mode(pad({2, 3}, {0, 3}, {0, 0}), 2)), UserError);  // mirrors twice
  EXPECT_THROW(instantiate(with_mode(pad({2, 3}, {0, 1}, {0, 0}), 3)), UserError);  // no mode 3
  EXPECT_THROW(instantiate(reshape({2, 3}, {7})), UserError);          // element count
  EXPECT_THROW(instantiate(slice({5}, {2}, {2}, {3})), UserError);      // reads element 6 of 5
  EXPECT_THROW(instantiate(slice({5}, {0}, {0}, {1})), UserError);      // step 0
  EXPECT_THROW(instantiate(transpose({2, 3}, {1, 0}, DataType::i8())), UserError);
  EXPECT_THROW(instantiate(pad({2, 3}, {0, 1}, {0, 0}, 0, DataType::u8())), UserError);
  EXPECT_THROW(instantiate(shuffle(1, 4, 3, 1, {4, 4}, {1, 1})), UserError);   // 8 in 3 groups
  EXPECT_THROW(instantiate(shuffle(1, 4, 2, 16, {4, 4}, {4, 4})), UserError);  // 8 in blocks of 16
  EXPECT_THROW(instantiate(shuffle(1, 4, 2, 1, {2, 6}, {1, 1})), UserError);   // a run spans two
  Workload missing{"pad", {{"ndim", 2}, {"D0", 2}}, DataType::f32(), {}};
  EXPECT_THROW(schedules::pad_template().inputs(missing), UserError);
}

}  // namespace
}  // namespace kiln::testing
