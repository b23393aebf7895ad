#include "schedules/math.h"

#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"

namespace kiln::schedules::math {

using ir::DataType;
using ir::Expr;

namespace {

DataType f32_of(const Expr& x) {
  internal_check(x.type().code == ir::TypeCode::Float && x.type().bits == 32)
      << "math functions take f32, got " << x.type().str();
  return x.type();
}

Expr f(const Expr& like, double v) {
  return ir::make_float(like.type(), v);
}
Expr i32(const Expr& like, int64_t v) {
  return ir::make_int(DataType::i32(like.type().lanes), v);
}

// Binds `value` to a fresh variable for `body`: a subexpression used several times is then
// computed once, and the tree the passes walk stays linear in the formula's size.
Expr let(const Expr& value, const char* name, const std::function<Expr(const Expr&)>& body) {
  ir::Var v(name, value.type());
  return ir::make_let(v, value, body(v));
}

// Horner's rule, coefficients from the highest power down; the codegen contracts each
// step into an FMA where the target has one.
Expr horner(const Expr& x, std::initializer_list<double> coeffs) {
  Expr acc;
  for (double c : coeffs) acc = acc.defined() ? acc * x + f(x, c) : f(x, c);
  return acc;
}

Expr as_int(const Expr& x) {
  return ir::make_call(DataType::i32(x.type().lanes), "reinterpret", {x},
                       ir::CallKind::Reinterpret);
}
Expr as_float(const Expr& bits) {
  return ir::make_call(DataType::f32(bits.type().lanes), "reinterpret", {bits},
                       ir::CallKind::Reinterpret);
}

// 2^n for integer n in [-126, 127], built from the exponent field.
Expr pow2i(const Expr& n) {
  return as_float((n + 127) * (1 << 23));
}

Expr fabs(const Expr& x) {
  return ir::make_call(x.type(), "fabs", {x});
}
Expr is_nan(const Expr& x) {
  return x != x;
}
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Keeps x within [lo, hi] as `x < lo ? lo : x` (and the same above): a NaN fails both
// compares and passes through, in one vmaxps/vminps or fmax/fmin each.
Expr clamp_keeping_nan(const Expr& x, double lo, double hi) {
  Expr low = ir::make_select(x < f(x, lo), f(x, lo), x);
  return std::isinf(hi) ? low : ir::make_select(low > f(x, hi), f(x, hi), low);
}

// e^x = 2^n e^r for x clamped to [-104, hi]: `body(n, er)` gets n as an integer and e^r,
// and applies 2^n. n is rounded by adding 1.5 2^23, whose f32 ulp is 1: the sum's low bits
// then hold n as an integer, with no round or convert instruction.
Expr exp_parts(const Expr& x_in, double hi,
               const std::function<Expr(const Expr& n, const Expr& er)>& body) {
  f32_of(x_in);
  const double kShifter = 12582912.0;  // 1.5 2^23
  return let(clamp_keeping_nan(x_in, -104.0, hi), "exp_x", [&](const Expr& x) {
    return let(x * f(x, 1.44269504088896341) + f(x, kShifter), "exp_t", [&](const Expr& t) {
      // x = n ln2 + r, |r| <= ln2 / 2; ln2 split in two so that n * hi is exact.
      Expr nf = t - f(x, kShifter);
      return let(
          x - nf * f(x, 0.693359375) + nf * f(x, 2.12194440e-4), "exp_r", [&](const Expr& r) {
            // Cephes expf: e^r = 1 + r + r^2 P(r), under 1 ulp on the reduced range, by Horner's
            // rule in r to the end, as 1 + r (1 + r P(r)). No r^2 is formed: for |r| < 1e-19 it
            // would be subnormal, and each operation on it costs a microcode assist (~150
            // cycles) on x86 cores; random-weight networks reach attention scores of 1e-21.
            Expr er = horner(r, {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2,
                                 1.6666665459E-1, 5.0000001201E-1, 1.0, 1.0});
            // A NaN reaches er through r, and any scale keeps it NaN.
            return body(as_int(t) - i32(t, 0x4B400000), er);
          });
    });
  });
}

// 1 / d for d in [1, 2] (so finite and nonzero): an estimate and a Newton step on
// AVX-512, a division elsewhere (the codegen's fast_reciprocal).
Expr reciprocal_1_to_2(const Expr& d) {
  return ir::make_call(d.type(), "fast_reciprocal", {d});
}

}  // namespace

Expr exp(const Expr& x_in) {
  // Beyond [-104, 89] exp is 0 / inf. 2^n is applied as two factors, each a normal number:
  // n in [-150, 129] covers subnormal results (rounded once, in the last multiply) and
  // overflow to inf.
  return exp_parts(x_in, 89.0, [](const Expr& n, const Expr& er) {
    return let(n, "exp_n", [&](const Expr& nv) {
      Expr n1 = ir::floordiv(nv, i32(nv, 2));
      return er * pow2i(n1) * pow2i(nv - n1);
    });
  });
}

Expr exp_nonpositive(const Expr& x_in) {
  // n in [-150, 63]: 2^(n + 64) is a normal number, er times it is exact, and the constant
  // 2^-64 rounds a subnormal result once: one factor fewer than exp's, no upper clamp.
  return exp_parts(
      x_in, std::numeric_limits<double>::infinity(),
      [](const Expr& n, const Expr& er) { return er * pow2i(n + 64) * f(er, 0x1p-64); });
}

Expr log(const Expr& x) {
  f32_of(x);
  // Subnormal inputs are scaled into the normal range first so the exponent field is exact.
  Expr tiny = x < f(x, 1.17549435e-38);
  return let(ir::make_select(tiny, x * f(x, 8388608.0), x), "log_x", [&](const Expr& xs) {
    return let(as_int(xs), "log_bits", [&](const Expr& bits) {
      // xs = m 2^e with m in [0.5, 1): exponent field minus 126, mantissa under 0.5's exponent.
      Expr e = ir::floordiv(bits, i32(bits, 1 << 23)) - i32(bits, 126) -
               ir::make_select(tiny, i32(bits, 23), i32(bits, 0));
      Expr m = as_float(ir::floormod(bits, i32(bits, 1 << 23)) + i32(bits, 0x3f000000));
      return let(m, "log_m", [&](const Expr& mv) {
        // Cephes logf: keep m in [sqrt(1/2), sqrt(2)) so that f = m - 1 is small.
        Expr low = mv < f(x, 0.707106781186547524);
        Expr ef = ir::make_cast(x.type(), e - ir::make_select(low, i32(bits, 1), i32(bits, 0)));
        return let(ef, "log_e", [&](const Expr& ev) {
          return let(ir::make_select(low, mv + mv, mv) - f(x, 1.0), "log_f", [&](const Expr& fv) {
            return let(fv * fv, "log_z", [&](const Expr& z) {
              Expr p = horner(fv, {7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                                   -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                                   2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1});
              Expr y = fv * z * p + ev * f(x, -2.12194440e-4) - z * f(x, 0.5);
              Expr r = fv + y + ev * f(x, 0.693359375);
              Expr special = ir::make_select(x == f(x, 0.0), f(x, -kInf), f(x, kNaN));
              r = ir::make_select(x == f(x, kInf), x, r);
              // NaN and negative inputs fail x > 0 and get NaN; zero gets -inf.
              return ir::make_select(x > f(x, 0.0), r, special);
            });
          });
        });
      });
    });
  });
}

Expr tanh(const Expr& x_in) {
  f32_of(x_in);
  return let(x_in, "tanh_x", [&](const Expr& x) {
    return let(fabs(x), "tanh_ax", [&](const Expr& ax) {
      // Small |x|: Cephes tanhf's odd polynomial (1 - 2/(e+1) would cancel there).
      Expr z = x * x;
      Expr small = horner(z, {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2,
                              1.33314422036E-1, -3.33332819422E-1}) *
                       z * x +
                   x;
      // Elsewhere (1 - e) / (1 + e) with e = e^{-2|x|} <= e^{-1.25}: no cancellation, and
      // 1 + e in [1, 2] takes the division-free reciprocal.
      Expr t = let(exp_nonpositive(-(ax + ax)), "tanh_e", [&](const Expr& e) {
        return (f(x, 1.0) - e) * reciprocal_1_to_2(f(x, 1.0) + e);
      });
      Expr large = ir::make_select(x < f(x, 0.0), -t, t);
      return ir::make_select(ax < f(x, 0.625), small, large);
    });
  });
}

Expr sigmoid(const Expr& x_in) {
  f32_of(x_in);
  return let(x_in, "sig_x", [&](const Expr& x) {
    // e = e^{-|x|} never overflows; 1/(1+e) for x >= 0 and e/(1+e) for x < 0 keep full
    // relative accuracy at both tails (no 1 - s cancellation, no inf/inf).
    return let(exp_nonpositive(-fabs(x)), "sig_e", [&](const Expr& e) {
      return let(reciprocal_1_to_2(f(x, 1.0) + e), "sig_r",
                 [&](const Expr& r) { return ir::make_select(x >= f(x, 0.0), r, e * r); });
    });
  });
}

Expr erf(const Expr& x_in) {
  f32_of(x_in);
  // The rational approximation of TensorFlow/Eigen: x P(x^2) / Q(x^2) on [-4, 4], where
  // erf is +-1 in f32 beyond.
  return let(ir::min(ir::max(x_in, f(x_in, -4.0)), f(x_in, 4.0)), "erf_x", [&](const Expr& x) {
    return let(x * x, "erf_x2", [&](const Expr& x2) {
      Expr p = horner(x2, {-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                           -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                           -1.60960333262415e-02});
      Expr q = horner(x2, {-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                           -7.37332916720468e-03, -1.42647390514189e-02});
      Expr v = ir::min(ir::max(x * (p / q), f(x, -1.0)), f(x, 1.0));
      // The clamp's compare-and-select would turn NaN into -4: keep it.
      return ir::make_select(is_nan(x_in), x_in, v);
    });
  });
}

Expr gelu(const Expr& x_in) {
  f32_of(x_in);
  return let(x_in, "gelu_x", [&](const Expr& x) {
    return f(x, 0.5) * x * (f(x, 1.0) + erf(x * f(x, 0.70710678118654752)));
  });
}

Expr softplus(const Expr& x_in) {
  f32_of(x_in);
  return let(x_in, "softplus_x", [&](const Expr& x) {
    // log1p(e) for e = e^-|x| in (0, 1], as log(u) e / (u - 1) with u = 1 + e rounded: the
    // rounding of u cancels (Goldberg's log1p), so a tiny e keeps its full relative accuracy
    // where log(1 + e) would round to 0 (softplus(-68) is 2.9e-30, not 0).
    return let(exp_nonpositive(-fabs(x)), "softplus_e", [&](const Expr& e) {
      return let(f(x, 1.0) + e, "softplus_u", [&](const Expr& u) {
        Expr log1p = ir::make_select(u == f(x, 1.0), e, log(u) * (e / (u - f(x, 1.0))));
        return ir::max(x, f(x, 0.0)) + log1p;
      });
    });
  });
}

Expr mish(const Expr& x_in) {
  f32_of(x_in);
  // tanh(log(1 + n)) with n = e^x is ((1 + n)^2 - 1) / ((1 + n)^2 + 1) = t / (t + 2) with
  // t = n (n + 2): one exp and one division instead of exp, log and tanh (a fifth of the
  // instructions), with no cancellation at either tail (t is a product, t + 2 >= 2). Past
  // x = 20 the factor is 1 in f32; n stays finite because x is clamped there.
  return let(x_in, "mish_x", [&](const Expr& x) {
    return let(exp(ir::min(x, f(x, 20.0))), "mish_n", [&](const Expr& n) {
      return let(n * (n + f(x, 2.0)), "mish_t", [&](const Expr& t) {
        return ir::make_select(x > f(x, 20.0), x, x * (t / (t + f(x, 2.0))));
      });
    });
  });
}

namespace {

// sin(x + q0 pi/2): x = k pi/2 + r with |r| <= pi/4, then the sine or cosine polynomial of r
// by the quadrant (k + q0) mod 4. pi/2 is split in four f32 parts (Cephes' DP1-DP3 doubled,
// then the remainder): k times the first is exact for |k| < 2^16, and the fourth keeps r
// accurate to its last bits near the zeros of sin and cos, where r itself is tiny.
Expr sin_quadrant(const Expr& x_in, double q0) {
  f32_of(x_in);
  return let(x_in, "sin_x", [&](const Expr& x) {
    return let(
        ir::make_call(x.type(), "round", {x * f(x, 0.63661977236758134)}), "sin_k",
        [&](const Expr& k) {
          Expr r = x - k * f(x, 1.5703125) - k * f(x, 4.837512969970703125e-4) -
                   k * f(x, 7.549790126404332e-8) - k * f(x, -1.7151245100058819e-15);
          return let(r, "sin_r", [&](const Expr& rv) {
            return let(rv * rv, "sin_z", [&](const Expr& z) {
              // Cephes sinf and cosf on [-pi/4, pi/4].
              Expr s =
                  horner(z, {-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1}) * z * rv + rv;
              Expr c =
                  horner(z, {2.443315711809948E-5, -1.388731625493765E-3, 4.166664568298827E-2}) *
                      z * z -
                  z * f(x, 0.5) + f(x, 1.0);
              // The quadrant in float: exact while k is (|x| < 2^24 pi/2), an integer in [0, 3].
              Expr kq = k + f(x, q0);
              Expr q = kq - f(x, 4.0) * ir::make_call(x.type(), "floor", {kq * f(x, 0.25)});
              return let(q, "sin_q", [&](const Expr& qv) {
                Expr v = ir::make_select(
                    qv == f(x, 0.0), s,
                    ir::make_select(qv == f(x, 1.0), c, ir::make_select(qv == f(x, 2.0), -s, -c)));
                // Far beyond the accurate range r is no longer small: stay within [-1, 1]. The
                // compare-and-select clamp would lose NaN (and inf gives NaN through r): keep it.
                v = ir::min(ir::max(v, f(x, -1.0)), f(x, 1.0));
                return ir::make_select(is_nan(rv), rv, v);
              });
            });
          });
        });
  });
}

}  // namespace

Expr sin(const Expr& x) {
  return sin_quadrant(x, 0.0);
}
Expr cos(const Expr& x) {
  return sin_quadrant(x, 1.0);
}

}  // namespace kiln::schedules::math
