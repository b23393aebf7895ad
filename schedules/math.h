// The math library of generated code: exp, log, tanh, erf, sigmoid, gelu, softplus and mish
// as IR.
//
// Kernels link against nothing (no libm), so transcendental functions are written here as
// range reduction + polynomial, with exponent bits handled as integers through Reinterpret
// calls. Every function takes and returns f32 (scalar or vector); the expressions use only
// arithmetic, compares, selects, bit-casts and the codegen's fast_reciprocal (sigmoid and
// tanh's 1 / (1 + e): AVX-512's estimate and a Newton step, a divide elsewhere), so they
// vectorize like any other body.
// Half-precision callers widen to f32 first and round the result once. exp forms no
// subnormal on the way from a tiny argument (no r^2 of a tiny r), so sigmoid, softplus and
// softmax of the near-zero values of random-weight networks stay fast: on x86 each
// operation on a subnormal costs a microcode assist of ~150 cycles.
//
// Measured max errors over dense sweeps against the C++ standard library in double
// (tests/kernels/math_test.cpp measures and asserts them; "ulp" is the spacing of f32 at
// the exact result):
//   exp      <= 2 ulp (measured 0.89); 0 below -103.97, inf above 88.72, NaN kept; the
//            same for exp_nonpositive on x <= 0 (measured 0.88)
//   log      <= 2 ulp (measured 0.75) for x > 0, subnormals included; log(0) = -inf,
//            log(x < 0) = NaN, log(inf) = inf
//   tanh     <= 3 ulp (measured 1.99); exactly +-1 for large |x|
//   sigmoid  <= 3 ulp (measured 2.45) over all x: e^-|x| never overflows and the x < 0 side is
//            e/(1+e), so there is no 1 - s cancellation at either tail
//   erf      abs 2e-7 (measured 1.8e-7) everywhere; rel 3e-7 (measured 2.4e-7, ~4 ulp) on
//            [-1, 1]; the TensorFlow/Eigen rational approximation x P(x^2) / Q(x^2)
//   gelu     abs 3e-7 * max(1, |x|) (measured 2.4e-7), erf form 0.5 x (1 + erf(x / sqrt 2));
//            an absolute bound because 1 + erf cancels for very negative x
//   softplus <= 3 ulp (measured 2.7) where the result is not subnormal (x >= -87)
//   mish     <= 5 ulp (measured 3.8) there too
//   sin, cos <= 2 ulp (measured 1.5) for |x| <= 1e5, the floats nearest their zeros included
//            (checked up to 1e4); NaN for +-inf and NaN; past 1e5 within [-1, 1], losing
//            accuracy as k pi/2 stops being exact
#pragma once

#include "compiler/ir/expr.h"

namespace kiln::schedules::math {

ir::Expr exp(const ir::Expr& x);
// e^x for x <= 0, as accurate as exp and cheaper (one scale factor, no overflow side): what
// sigmoid, tanh and softplus take of e^-|x|, and softmax of e^(x - max). Exact up to x = 43,
// so an argument a rounding above 0 is harmless; undefined beyond.
ir::Expr exp_nonpositive(const ir::Expr& x);
ir::Expr log(const ir::Expr& x);
ir::Expr tanh(const ir::Expr& x);
ir::Expr erf(const ir::Expr& x);
ir::Expr sigmoid(const ir::Expr& x);
ir::Expr gelu(const ir::Expr& x);
// softplus(x) = log(1 + e^x), as max(x, 0) + log(1 + e^-|x|): e^x never overflows (YOLOv4's
// Mish reaches activations of 100 and more). mish(x) = x tanh(softplus(x)), computed as
// x t / (t + 2) with t = e^x (e^x + 2) (see math.cpp).
ir::Expr softplus(const ir::Expr& x);
ir::Expr mish(const ir::Expr& x);
// sin and cos by Cody-Waite reduction modulo pi/2 and Cephes' polynomials: the arguments of
// timestep and Fourier-feature embeddings (|x| up to thousands) keep full accuracy.
ir::Expr sin(const ir::Expr& x);
ir::Expr cos(const ir::Expr& x);

}  // namespace kiln::schedules::math
