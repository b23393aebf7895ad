// compiler/codegen/asm_loops.h on hand-written listings: which loops are innermost, and what
// one iteration of each does (multiply-accumulates by class, loads, stores, spills).
#include "compiler/codegen/asm_loops.h"

#include <gtest/gtest.h>

namespace kiln::codegen {
namespace {

// Two loops in one function, the inner one with four FMAs, two loads, a store, and a spill
// and a reload that register allocation marked; a stack buffer access carries no mark.
const char* kAarch64 = R"(	.text
	.globl	kernel
	.type	kernel,@function
kernel:                                 // @kernel
	mov	x8, xzr
.LBB0_1:                                // =>This Loop Header: Depth=1
	mov	x9, xzr
.LBB0_2:                                //   Parent Loop BB0_1 Depth=1
	ldr	q0, [x1, x9]
	ld1r	{ v1.4s }, [x2], #4
	ldr	q5, [sp, #32]                   // 16-byte Folded Reload
	fmla	v2.4s, v0.4s, v1.s[0]
	fmla	v3.4s, v0.4s, v1.s[1]
	fmla	v4.4s, v0.4s, v5.4s
	fmla	v6.4s, v0.4s, v5.4s
	str	q7, [sp, #48]                   // 16-byte Spill
	str	q8, [sp, #64]
	add	x9, x9, #16
	cmp	x9, #256
	b.ne	.LBB0_2
// %bb.3:
	fadd	v2.4s, v2.4s, v3.4s
	add	x8, x8, #1
	cbnz	x8, .LBB0_1
	ret
)";

TEST(AsmLoops, FindsTheInnermostAarch64LoopAndCountsItsWork) {
  std::vector<AsmLoop> loops = innermost_loops(kAarch64, /*aarch64=*/true);
  ASSERT_EQ(loops.size(), 1u);
  const AsmLoop& l = loops[0];
  EXPECT_EQ(l.function, "kernel");
  EXPECT_EQ(l.label, ".LBB0_2");
  EXPECT_EQ(l.instructions.front(), ".LBB0_2:");
  EXPECT_EQ(l.instructions.back(), "b.ne\t.LBB0_2");
  EXPECT_EQ(l.mac.name, "fmla .4s");
  EXPECT_EQ(l.mac.type, "f32");
  EXPECT_EQ(l.mac_instructions, 4);
  EXPECT_EQ(l.accumulators, 4);
  EXPECT_DOUBLE_EQ(l.macs, 16);
  EXPECT_EQ(l.mac_example, "fmla\tv2.4s, v0.4s, v1.s[0]");
  EXPECT_EQ(l.loads, 3);
  EXPECT_EQ(l.stores, 2);
  EXPECT_EQ(l.spill_loads, 1);
  EXPECT_EQ(l.spill_stores, 1);
}

// AT&T: a memory source is a load, a memory destination a store, lea neither; two sibling
// innermost loops, the one denser in MACs first.
const char* kX86 = R"(	.text
kernel:                                 # @kernel
	xorl	%eax, %eax
.LBB1_1:
	vmovups	(%rsi,%rax,4), %ymm0
	vaddps	%ymm0, %ymm1, %ymm1
	addq	$8, %rax
	jne	.LBB1_1
.LBB1_2:                                # =>This Inner Loop Header: Depth=1
	vbroadcastss	(%rdx,%rcx,4), %ymm2
	vfmadd231ps	(%rsi), %ymm2, %ymm3
	vfmadd231ps	%ymm4, %ymm2, %ymm5
	vmovups	%ymm5, 32(%rdi)
	leaq	(%rdi,%rcx), %r8
	vmovups	%ymm6, 64(%rsp)                 # 32-byte Spill
	incq	%rcx
	jne	.LBB1_2
	vzeroupper
	retq
)";

TEST(AsmLoops, FindsSiblingX86LoopsDensestInMacsFirst) {
  std::vector<AsmLoop> loops = innermost_loops(kX86, /*aarch64=*/false);
  ASSERT_EQ(loops.size(), 2u);
  const AsmLoop& fma = loops[0];
  EXPECT_EQ(fma.label, ".LBB1_2");
  EXPECT_EQ(fma.mac.name, "vfmadd231ps ymm");
  EXPECT_DOUBLE_EQ(fma.macs, 16);
  EXPECT_EQ(fma.loads, 2);   // the broadcast and the FMA's memory source
  EXPECT_EQ(fma.stores, 2);  // the result and the spill; lea touches no memory
  EXPECT_EQ(fma.spill_stores, 1);
  EXPECT_EQ(fma.spill_loads, 0);
  const AsmLoop& add = loops[1];
  EXPECT_EQ(add.label, ".LBB1_1");
  EXPECT_TRUE(add.mac.name.empty());
  EXPECT_DOUBLE_EQ(add.macs, 0);
  EXPECT_EQ(add.loads, 1);
}

// An AArch64 loop `label` of `fmlas` FMLAs into `accumulators` registers (round robin) and
// `fadds` other vector instructions.
std::string loop(int label, int fmlas, int accumulators, int fadds = 0) {
  std::string l = ".LBB0_" + std::to_string(label) + ":\n";
  for (int i = 0; i < fmlas; ++i)
    l += "\tfmla\tv" + std::to_string(i % accumulators) + ".4s, v30.4s, v31.4s\n";
  for (int i = 0; i < fadds; ++i) l += "\tfadd\tv" + std::to_string(i % 30) + ".4s, v1.4s, v2.4s\n";
  return l + "\tsubs\tx8, x8, #1\n\tb.ne\t.LBB0_" + std::to_string(label) + "\n";
}

// A transform unrolled over a whole tile holds more MACs per iteration than the product's
// small loop; the product's, denser in MACs, is the micro-kernel.
TEST(AsmLoops, TheMicroKernelIsTheLoopDensestInMacs) {
  std::vector<AsmLoop> loops = innermost_loops("f:\n" + loop(1, 8, 8, 40) + loop(2, 4, 4), true);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0].label, ".LBB0_2");
  EXPECT_DOUBLE_EQ(loops[0].macs, 16);
  EXPECT_EQ(loops[1].label, ".LBB0_1");
  EXPECT_DOUBLE_EQ(loops[1].macs, 32);
}

// A remainder loop over one output column, unrolled over the whole reduction, holds more MACs
// per iteration than the register tile's loop, but with two accumulators against eight.
TEST(AsmLoops, TheMicroKernelHasTheMostAccumulators) {
  std::vector<AsmLoop> loops = innermost_loops("f:\n" + loop(1, 32, 2) + loop(2, 8, 8), true);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0].label, ".LBB0_2");
  EXPECT_EQ(loops[0].accumulators, 8);
  EXPECT_EQ(loops[1].accumulators, 2);
}

TEST(AsmLoops, StraightLineCodeHasNoLoop) {
  EXPECT_TRUE(innermost_loops("f:\n\tfmla\tv0.4s, v1.4s, v2.4s\n\tret\n", true).empty());
  // A forward branch is not a loop.
  EXPECT_TRUE(innermost_loops("f:\n\tb\t.LBB0_2\n.LBB0_2:\n\tret\n", true).empty());
}

TEST(AsmLoops, CountsEachMultiplyAccumulateClass) {
  struct Case {
    const char* ins;
    bool aarch64;
    const char* type;
    double macs;
  };
  const Case cases[] = {
      {"fmla\tv0.8h, v1.8h, v2.h[3]", true, "f16", 8},
      {"fmla\tv0.2d, v1.2d, v2.2d", true, "f64", 2},
      {"fmadd\ts0, s1, s2, s0", true, "f32", 1},
      {"bfmmla\tv0.4s, v1.8h, v2.8h", true, "bf16", 16},
      {"bfdot\tv0.4s, v1.8h, v2.2h[1]", true, "bf16", 8},
      {"sdot\tv0.4s, v1.16b, v2.4b[0]", true, "int8", 16},
      {"smmla\tv0.4s, v1.16b, v2.16b", true, "int8", 32},
      {"vfmadd231ps\t%zmm1, %zmm2, %zmm3", false, "f32", 16},
      {"vfnmadd213pd\t(%rax), %xmm2, %xmm3", false, "f64", 2},
      {"vfmadd231ss\t%xmm1, %xmm2, %xmm3", false, "f32", 1},
      {"vfmadd231ph\t%zmm1, %zmm2, %zmm3", false, "f16", 32},
      {"vdpbf16ps\t%ymm1, %ymm2, %ymm3", false, "bf16", 16},
      {"vpdpbusd\t%zmm1, %zmm2, %zmm3", false, "int8", 64},
      {"vpmaddubsw\t%ymm1, %ymm2, %ymm3", false, "int8", 32},
      {"tdpbf16ps\t%tmm1, %tmm2, %tmm0", false, "bf16", 8192},
  };
  for (const Case& c : cases) {
    MacKind k = mac_kind_of(c.ins, c.aarch64);
    EXPECT_EQ(k.type, c.type) << c.ins;
    EXPECT_DOUBLE_EQ(k.macs, c.macs) << c.ins;
  }
  EXPECT_TRUE(mac_kind_of("fadd\tv0.4s, v1.4s, v2.4s", true).name.empty());
  // What a unit's busy cycles are put down to.
  EXPECT_EQ(role_of("fmla\tv0.4s, v1.4s, v2.4s", true), InstructionRole::Mac);
  EXPECT_EQ(role_of("ldp\tq0, q1, [x0]", true), InstructionRole::Load);
  EXPECT_EQ(role_of("str\tq0, [sp, #16]", true), InstructionRole::Store);
  EXPECT_EQ(role_of("vfmadd231ps\t(%rax), %ymm1, %ymm2", false), InstructionRole::Mac);
  EXPECT_EQ(role_of("vmovups\t(%rax,%rcx,4), %ymm0", false), InstructionRole::Load);
  EXPECT_EQ(role_of("vmovups\t%ymm0, 32(%rdi)", false), InstructionRole::Store);
  EXPECT_EQ(role_of("leaq\t(%rdi,%rcx), %r8", false), InstructionRole::Other);
  EXPECT_TRUE(mac_kind_of("vmulps\t%ymm1, %ymm2, %ymm3", false).name.empty());
}

}  // namespace
}  // namespace kiln::codegen
