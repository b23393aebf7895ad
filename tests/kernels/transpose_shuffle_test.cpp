// transpose.shuffle: the in-register transpose network on its own (every T, against a plain
// index transpose), the template against the reference on ranks 2-5 with extents that are
// and are not multiples of the tile (partial tiles masked), f32 on AVX-512, AVX2 and NEON
// (qemu), f16/bf16 on the half targets, fallback and random configs; where it applies and
// where transpose.tiled keeps the workload; and assembly checks (as Halide's simd_op_check)
// that the tile is transposed by shuffles, not element moves.
#include "schedules/data_movement/transpose_shuffle.h"

#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "compiler/ir/printer.h"
#include "schedules/data_movement/data_movement.h"
#include "schedules/registry.h"
#include "tests/kernels/asm_check.h"
#include "tests/kernels/template_harness.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::Workload;
using Shape = std::vector<int64_t>;

Workload transpose(const Shape& in, const Shape& perm, DataType t = DataType::f32()) {
  Workload w{"transpose", {{"ndim", int64_t(in.size())}}, t, {}};
  for (size_t i = 0; i < in.size(); ++i) {
    w.params["D" + std::to_string(i)] = in[i];
    w.params["P" + std::to_string(i)] = perm[i];
  }
  return w;
}

const schedules::OpTemplate& shuffle() {
  return schedules::transpose_shuffle_template();
}

// Lanes of a shuffle network evaluated on constants: a ramp's values, a shuffle's picks, a
// bound variable's value.
using LaneValues = std::map<const ir::VarNode*, std::vector<int64_t>>;
std::vector<int64_t> lanes_of(const ir::Expr& e, const LaneValues& bound) {
  if (const auto* v = e.as<ir::VarNode>()) return bound.at(v);
  if (const auto* ramp = e.as<ir::RampNode>()) {
    std::vector<int64_t> out;
    for (int l = 0; l < ramp->lanes; ++l) out.push_back(*ir::as_const_int(ramp->base) + l);
    return out;
  }
  const auto* call = e.as<ir::CallNode>();
  internal_check(call && call->call_kind == ir::CallKind::Shuffle) << "not a shuffle: " << e;
  std::vector<int64_t> both = lanes_of(call->args[0], bound), b = lanes_of(call->args[1], bound);
  both.insert(both.end(), b.begin(), b.end());
  std::vector<int64_t> out;
  for (size_t i = 2; i < call->args.size(); ++i)
    out.push_back(both.at(*ir::as_const_int(call->args[i])));
  return out;
}

// Row r's lane c holds r * T + c; after the network, column c's lane r must hold it.
TEST(TransposeInRegisters, EveryTileEdgeTransposes) {
  for (int t : {2, 4, 8, 16}) {
    std::vector<ir::Expr> rows;
    for (int r = 0; r < t; ++r) rows.push_back(ir::make_ramp(ir::Expr(int64_t{r * t}), 1, t));
    std::vector<ir::Expr> cols;
    ir::Stmt s = schedules::transpose_in_registers(rows, "t", [&](const std::vector<ir::Expr>& c) {
      cols = c;
      return ir::make_evaluate(ir::Expr(0));
    });
    LaneValues bound;
    for (ir::Stmt cur = s; const auto* let = cur.as<ir::LetStmtNode>(); cur = let->body)
      bound[let->var.node()] = lanes_of(let->value, bound);
    ASSERT_EQ(cols.size(), size_t(t));
    for (int c = 0; c < t; ++c) {
      const std::vector<int64_t> col = lanes_of(cols[c], bound);
      for (int r = 0; r < t; ++r) EXPECT_EQ(col[r], r * t + c) << "T " << t << " column " << c;
    }
  }
}

std::vector<TemplateCase> cases() {
  std::vector<TemplateCase> out;
  const std::vector<Workload> shapes = {
      transpose({37, 53}, {1, 0}),                    // rank 2, both ends partial
      transpose({64, 48}, {1, 0}),                    // whole tiles only
      transpose({3, 19, 40}, {0, 2, 1}),              // attention-style, partial
      transpose({2, 17, 5, 33}, {0, 2, 3, 1}),        // NCHW -> NHWC, odd sizes
      transpose({1, 33, 4, 18}, {0, 3, 1, 2}),        // NHWC -> NCHW
      transpose({2, 3, 18, 4, 20}, {0, 1, 4, 3, 2}),  // rank 5
      transpose({2, 20, 3, 17, 2}, {0, 3, 2, 1, 4}),  // rank 5, innermost kept: tiled
  };
  for (const Workload& w : shapes) {
    for (int c = -1; c < 2; ++c) out.push_back({w, "x86-avx512", c});
    out.push_back({w, "x86-avx2", -1});
    out.push_back({w, "x86-avx2", 3});
    out.push_back({w, "arm-neon", -1});
    out.push_back({w, "arm-neon", 2});
  }
  for (const auto& [t, d] : half_targets()) {
    out.push_back({transpose({35, 40}, {1, 0}, d), t, -1});
    out.push_back({transpose({2, 19, 3, 36}, {0, 3, 2, 1}, d), t, 1});
  }
  // Network shapes natively: ResNet's stem activation to NHWC, BERT's key transpose.
  add_native_cases(
      out, {transpose({1, 64, 112, 112}, {0, 2, 3, 1}), transpose({12, 128, 64}, {0, 2, 1})});
  return out;
}

class TransposeShuffleTest : public TemplateTest {};

TEST_P(TransposeShuffleTest, MatchesReference) {
  check();
}

INSTANTIATE_TEST_SUITE_P(TransposeShuffle, TransposeShuffleTest, ::testing::ValuesIn(cases()),
                         template_case_name);

TEST(TransposeShuffle, AppliesWhereTheInnermostMovesAndTilesFit) {
  const Target avx512 = target_from_name("x86-avx512"), neon = target_from_name("arm-neon");
  EXPECT_TRUE(shuffle().applies(transpose({16, 16}, {1, 0}), avx512));
  EXPECT_FALSE(shuffle().applies(transpose({15, 64}, {1, 0}), avx512));         // a column of 15
  EXPECT_TRUE(shuffle().applies(transpose({15, 64}, {1, 0}), neon));            // 4x4 tiles fit
  EXPECT_FALSE(shuffle().applies(transpose({64, 32, 16}, {1, 0, 2}), avx512));  // inner kept
  EXPECT_FALSE(shuffle().applies(transpose({2, 3}, {0, 0}), avx512));           // not a permutation
  EXPECT_FALSE(shuffle().applies(transpose({64, 64}, {1, 0}, DataType::i8()), avx512));
  // The registry's default: the shuffle where it applies, transpose.tiled elsewhere.
  EXPECT_EQ(schedules::templates_for(transpose({64, 64}, {1, 0}), avx512).front()->name(),
            "transpose.shuffle");
  EXPECT_EQ(schedules::templates_for(transpose({8, 64}, {1, 0}), avx512).front()->name(),
            "transpose.tiled");
  const Workload small = transpose({8, 64}, {1, 0});
  EXPECT_THROW(shuffle().instantiate(small, avx512, shuffle().fallback(small, avx512)), UserError);
}

// The tile of each target: its row loads and column stores are whole vectors, and the
// transpose between them shuffles (no element extracts or inserts).
TEST(TransposeShuffleAsm, X86Avx512ShufflesZmm) {
  const std::string s = template_assembly(shuffle(), transpose({64, 64}, {1, 0}), "x86-avx512");
  const int shuffles =
      count_instructions(s, "vshufps", "zmm") + count_instructions(s, "vunpck", "zmm") +
      count_instructions(s, "vpermt2", "zmm") + count_instructions(s, "vpermi2", "zmm") +
      count_instructions(s, "vshuff", "zmm") + count_instructions(s, "vinsertf", "zmm");
  // 16 rows, log2(16) = 4 stages of one shuffle per row.
  EXPECT_GE(shuffles, 64) << s;
  EXPECT_EQ(count_instructions(s, "vextract", ""), 0) << s;
  EXPECT_EQ(count_instructions(s, "vmovss", ""), 0) << s;
}

// bf16 partial tiles are masked loads and stores whose mask varies; without AVX512-BF16 the
// backend scalarised such a store into bfloat stores rounded by __truncsfbf2, which a kernel
// cannot link. kiln moves them as 16-bit integers: no call at all.
TEST(TransposeShuffleAsm, Bf16PartialTilesCallNothing) {
  const Workload w = transpose({2, 19, 3, 36}, {0, 3, 2, 1}, DataType::bf16());
  for (const char* target : {"x86-avx2", "x86-avx512"}) {
    const std::string s =
        template_assembly(shuffle(), w, target, {{"order", 0}, {"block", 1}, {"parallel", 0}});
    EXPECT_EQ(count_instructions(s, "call", ""), 0) << target << "\n" << s;
    EXPECT_GE(count_instructions(s, "vmovdqu16", "") + count_instructions(s, "vpmaskmov", "") +
                  count_instructions(s, "vpextrw", ""),
              1)
        << target << "\n"
        << s;
  }
}

TEST(TransposeShuffleAsm, X86Avx2ShufflesYmm) {
  const std::string s = template_assembly(shuffle(), transpose({64, 64}, {1, 0}), "x86-avx2");
  const int shuffles =
      count_instructions(s, "vshufps", "ymm") + count_instructions(s, "vunpck", "ymm") +
      count_instructions(s, "vperm2f128", "ymm") + count_instructions(s, "vinsertf128", "ymm") +
      count_instructions(s, "vblendps", "ymm");
  EXPECT_GE(shuffles, 24) << s;  // 8 rows, 3 stages
  EXPECT_EQ(count_instructions(s, "vmovss", ""), 0) << s;
}

TEST(TransposeShuffleAsm, ArmNeonTrnZip) {
  const std::string s = template_assembly(shuffle(), transpose({64, 64}, {1, 0}), "arm-neon");
  const int shuffles = count_instructions(s, "trn", "") + count_instructions(s, "zip", "") +
                       count_instructions(s, "uzp", "") + count_instructions(s, "ext", "v");
  EXPECT_GE(shuffles, 8) << s;  // 4 rows, 2 stages
  EXPECT_EQ(count_instructions(s, "ins", "v"), 0) << s;
  EXPECT_EQ(count_instructions(s, "mov", ".s["), 0) << s;
}

}  // namespace
}  // namespace kiln::testing
