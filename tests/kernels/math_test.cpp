// The math library (schedules/math.h): each function compiled into a small vectorized
// kernel, run over a dense sweep of inputs plus special values, and compared with the C++
// standard library in double. The max errors measured here are the ones math.h documents;
// the test prints them and fails when one grows past its documented bound.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <sstream>

#include "compiler/target/target.h"
#include "compiler/ir/printer.h"
#include "tests/kernels/kernel_harness.h"
#include "compiler/lower/lower.h"
#include "schedules/math.h"
#include "compiler/te/schedule.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using ir::Expr;

using MathFn = std::function<Expr(const Expr&)>;

// y[i] = fn(x[i]) in vectors of the target's width; empty with `skip` set when the target
// cannot run here.
std::vector<float> run_math(const MathFn& fn, const std::vector<float>& xs,
                            const std::string& target_name, std::string* skip) {
  Target target = target_from_name(target_name);
  int64_t n = static_cast<int64_t>(xs.size());
  te::Tensor x = te::placeholder({n}, DataType::f32(), "x");
  te::Tensor y = te::compute({n}, [&](ir::Var i) { return fn(x(i)); }, "y");
  te::Schedule s({y});
  auto [outer, lanes] = s[y].split(s[y].axis(0), target.lanes(DataType::f32()));
  s[y].vectorize(lanes);
  ir::LoweredFunc f = lower::lower(s, {x, y}, "math_kernel");
  std::ostringstream ir_text;
  ir_text << f.body;
  // The point of writing these as IR: they must vectorize, not fall back to scalar code.
  EXPECT_NE(ir_text.str().find("y[ramp("), std::string::npos) << "math kernel did not vectorize";
  TargetRun run = run_on_target(f, target_name, {encode(xs, DataType::f32()),
                                                 Bytes(xs.size() * 4, 0)}, {1});
  *skip = run.skip_reason;
  if (!skip->empty()) return {};
  return decode(run.outputs[0], DataType::f32());
}

double ulp_at(double want) {
  int e = std::ilogb(std::max(std::fabs(want), double(FLT_MIN)));
  return std::ldexp(1.0, e - 23);
}

struct Errors {
  double max_ulp = 0, max_abs = 0, max_rel = 0;
  float worst_x = 0;
  int special_mismatches = 0;
  std::string first_mismatch;
};

// Non-finite or zero results must match exactly (NaN with NaN); finite ones by error.
Errors measure(const std::vector<float>& xs, const std::vector<float>& got,
               const std::function<double(double)>& ref, double abs_scale_floor = 0) {
  Errors e;
  for (size_t i = 0; i < xs.size(); ++i) {
    double want = ref(double(xs[i]));
    float want_f = static_cast<float>(want);
    double g = got[i];
    if (std::isnan(want_f) || std::isinf(want_f) || std::isnan(g) || std::isinf(g)) {
      bool same = (std::isnan(want_f) && std::isnan(g)) || (want_f == g);
      if (!same && e.special_mismatches++ == 0) {
        std::ostringstream os;
        os << "x=" << xs[i] << " got " << g << " want " << want;
        e.first_mismatch = os.str();
      }
      continue;
    }
    double err = std::fabs(g - want);
    double ulp = err / ulp_at(want);
    if (ulp > e.max_ulp) e.max_ulp = ulp, e.worst_x = xs[i];
    double scale = std::max(std::fabs(double(xs[i])), 1.0);
    if (abs_scale_floor > 0) e.max_abs = std::max(e.max_abs, err / scale);
    if (std::fabs(want) >= FLT_MIN) e.max_rel = std::max(e.max_rel, err / std::fabs(want));
  }
  return e;
}

std::vector<float> grid(double lo, double hi, int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(lo + (hi - lo) * i / (n - 1));
  return v;
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> with_specials(std::vector<float> v) {
  for (float s : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-5f, -1e-5f, FLT_MIN, 1e-40f, kInf, -kInf, kNaN,
                  1.0f, -1.0f, 0.5f, 100.0f, -100.0f, 1e30f, -1e30f, FLT_MAX, -FLT_MAX})
    v.push_back(s);
  return v;
}

// -|x| for each x (NaN kept): exp_nonpositive's domain, same count.
std::vector<float> as_nonpositive(std::vector<float> v) {
  for (float& x : v) x = -std::fabs(x);
  return v;
}

void report(const char* name, const Errors& e) {
  std::cout << "[math] " << name << ": max " << e.max_ulp << " ulp (at x=" << e.worst_x
            << "), max rel " << e.max_rel << ", max abs/max(1,|x|) " << e.max_abs << "\n";
  EXPECT_EQ(e.special_mismatches, 0) << name << ": first " << e.first_mismatch;
}

TEST(MathLibrary, Exp) {
  std::vector<float> xs = with_specials(grid(-104.5, 89.5, 1 << 21));
  for (float s : {88.72283f, 88.72284f, -87.33654f, -103.97f, -103.98f, -150.0f}) xs.push_back(s);
  std::string skip;
  auto got = run_math([](const Expr& x) { return schedules::math::exp(x); }, xs, "host", &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  Errors e = measure(xs, got, [](double x) { return std::exp(x); });
  report("exp", e);
  EXPECT_LE(e.max_ulp, 2.0);
}

// exp_nonpositive: exp's bound over x <= 0 (and the slack it allows above 0), tiny
// arguments and the subnormal results below -87.3 included.
TEST(MathLibrary, ExpNonpositive) {
  std::vector<float> xs = grid(-104.5, 0.0, 1 << 21);
  for (float v : grid(0.0, 43.0, 1 << 12)) xs.push_back(v);
  for (float s : {0.0f, -0.0f, -1e-30f, -1e-10f, -FLT_MIN, -1e-40f, -kInf, kNaN, -87.33654f,
                  -103.97f, -103.98f, -150.0f, -1e30f, -FLT_MAX})
    xs.push_back(s);
  std::string skip;
  auto got = run_math([](const Expr& x) { return schedules::math::exp_nonpositive(x); }, xs, "host",
                      &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  Errors e = measure(xs, got, [](double x) { return std::exp(x); });
  report("exp_nonpositive", e);
  EXPECT_LE(e.max_ulp, 2.0);
}

// The codegen's fast_reciprocal (an estimate and a Newton step on AVX-512, a divide
// elsewhere): within an ulp over finite nonzero x of either sign.
TEST(MathLibrary, FastReciprocal) {
  std::vector<float> xs = grid(1.0, 2.0, 1 << 20);
  for (float v : grid(-1000.0, 1000.0, 1 << 16))
    if (v != 0.0f) xs.push_back(v);
  for (float s : {1e-30f, -1e-30f, 3e37f, FLT_MIN, 0.1f, -7.0f}) xs.push_back(s);
  std::string skip;
  auto got = run_math([](const Expr& x) { return ir::make_call(x.type(), "fast_reciprocal", {x}); },
                      xs, "host", &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  Errors e = measure(xs, got, [](double x) { return 1.0 / x; });
  report("fast_reciprocal", e);
  EXPECT_LE(e.max_ulp, 1.0);
}

TEST(MathLibrary, Log) {
  // Every 997th positive float from the smallest subnormal to the largest finite one.
  std::vector<float> xs;
  for (uint32_t b = 1; b < 0x7f800000u; b += 997) xs.push_back(std::bit_cast<float>(b));
  xs = with_specials(std::move(xs));
  for (float s : {-1.0f, -1e-30f, 0.70710677f, 0.70710678f, 1.0000001f, 0.99999994f})
    xs.push_back(s);
  std::string skip;
  auto got = run_math([](const Expr& x) { return schedules::math::log(x); }, xs, "host", &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  Errors e = measure(xs, got, [](double x) { return std::log(x); });
  report("log", e);
  EXPECT_LE(e.max_ulp, 2.0);
}

TEST(MathLibrary, Tanh) {
  std::vector<float> xs = with_specials(grid(-12, 12, 1 << 21));
  for (float s : {0.625f, -0.625f, 0.62499994f, 9.0f, -9.0f, 1e-3f}) xs.push_back(s);
  std::string skip;
  auto got = run_math([](const Expr& x) { return schedules::math::tanh(x); }, xs, "host", &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  Errors e = measure(xs, got, [](double x) { return std::tanh(x); });
  report("tanh", e);
  EXPECT_LE(e.max_ulp, 3.0);
}

TEST(MathLibrary, Sigmoid) {
  std::vector<float> xs = with_specials(grid(-110, 110, 1 << 21));
  std::string skip;
  auto got = run_math([](const Expr& x) { return schedules::math::sigmoid(x); }, xs, "host", &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  Errors e = measure(xs, got, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  report("sigmoid", e);
  EXPECT_LE(e.max_ulp, 3.0);
}

TEST(MathLibrary, Erf) {
  std::vector<float> xs = with_specials(grid(-6, 6, 1 << 21));
  std::string skip;
  auto got = run_math([](const Expr& x) { return schedules::math::erf(x); }, xs, "host", &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  Errors e = measure(xs, got, [](double x) { return std::erf(x); }, 1.0);
  report("erf", e);
  EXPECT_LE(e.max_abs, 2e-7);
  // Relative accuracy near 0, where erf(x) ~ 1.128 x.
  std::vector<float> small = grid(-1, 1, 1 << 18);
  for (float s : {1e-30f, -1e-20f, 1e-10f, 3e-5f}) small.push_back(s);
  auto got_small = run_math([](const Expr& x) { return schedules::math::erf(x); }, small, "host",
                            &skip);
  Errors es = measure(small, got_small, [](double x) { return std::erf(x); });
  std::cout << "[math] erf on [-1, 1]: max rel " << es.max_rel << ", " << es.max_ulp << " ulp\n";
  EXPECT_LE(es.max_rel, 3e-7);
}

TEST(MathLibrary, Gelu) {
  std::vector<float> xs = with_specials(grid(-12, 12, 1 << 21));
  std::string skip;
  auto got = run_math([](const Expr& x) { return schedules::math::gelu(x); }, xs, "host", &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  Errors e = measure(xs, got, [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); },
                     1.0);
  report("gelu", e);
  EXPECT_LE(e.max_abs, 3e-7);
}

double softplus_ref(double x) {
  return x > 30 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
double mish_ref(double x) {
  return x * std::tanh(softplus_ref(x));
}
// Inputs whose softplus and mish are not subnormal: finite x below -87 moved up to -87 (the
// infinities and NaN kept). There x e^x has the few significant bits of a subnormal e^x,
// which no ulp bound covers.
std::vector<float> normal_results(std::vector<float> xs) {
  for (float& x : xs)
    if (std::isfinite(x) && x < -87) x = -87;
  return xs;
}

TEST(MathLibrary, SoftplusAndMish) {
  std::vector<float> xs = normal_results(with_specials(grid(-87, 110, 1 << 21)));
  for (float s : {19.99f, 20.0f, 20.01f, -20.0f, 1e-3f, -1e-3f}) xs.push_back(s);
  std::string skip;
  auto softplus =
      run_math([](const Expr& x) { return schedules::math::softplus(x); }, xs, "host", &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  Errors e = measure(xs, softplus, softplus_ref);
  report("softplus", e);
  EXPECT_LE(e.max_ulp, 3.0);
  auto mish = run_math([](const Expr& x) { return schedules::math::mish(x); }, xs, "host", &skip);
  Errors m = measure(xs, mish, mish_ref);
  report("mish", m);
  EXPECT_LE(m.max_ulp, 5.0);
}

// Sin and cos: ulp-accurate where embeddings put their arguments (timesteps times
// frequencies, Fourier features), the floats nearest their zeros included.
std::vector<float> trig_specials(std::vector<float> v) {
  for (float s : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-5f, FLT_MIN, 1e-40f, kInf, -kInf, kNaN,
                  3.14159274f, -3.14159274f, 1.57079637f, 0.785398185f, 0.785398245f})
    v.push_back(s);
  return v;
}

TEST(MathLibrary, SinAndCos) {
  std::vector<float> xs = trig_specials(grid(-1000, 1000, 1 << 21));
  // Every float nearest a multiple of pi/2 up to 10000, where the result is the smallest.
  for (int k = 1; k < 6400; ++k)
    for (float sign : {1.0f, -1.0f}) xs.push_back(sign * static_cast<float>(k * M_PI_2));
  std::string skip;
  auto sin = run_math([](const Expr& x) { return schedules::math::sin(x); }, xs, "host", &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  Errors s = measure(xs, sin, [](double x) { return std::sin(x); });
  report("sin", s);
  EXPECT_LE(s.max_ulp, 2.0);
  auto cos = run_math([](const Expr& x) { return schedules::math::cos(x); }, xs, "host", &skip);
  Errors c = measure(xs, cos, [](double x) { return std::cos(x); });
  report("cos", c);
  EXPECT_LE(c.max_ulp, 2.0);
  std::vector<float> far = grid(-1e5, 1e5, 1 << 20);
  auto sin_far =
      run_math([](const Expr& x) { return schedules::math::sin(x); }, far, "host", &skip);
  Errors f = measure(far, sin_far, [](double x) { return std::sin(x); });
  report("sin on [-1e5, 1e5]", f);
  EXPECT_LE(f.max_ulp, 2.0);
}

// The same expressions through the AArch64 backend under qemu: a smaller sweep of each,
// each held to the bound measured natively.
TEST(MathLibrary, ArmNeonUnderQemu) {
  struct Case {
    const char* name;
    MathFn fn;
    std::function<double(double)> ref;
    std::vector<float> xs;
    double max_ulp, max_abs;
  };
  std::vector<Case> cases = {
      {"exp", schedules::math::exp, [](double x) { return std::exp(x); },
       with_specials(grid(-104.5, 89.5, 4001)), 2.0, 0},
      {"exp_nonpositive", schedules::math::exp_nonpositive, [](double x) { return std::exp(x); },
       as_nonpositive(with_specials(grid(-104.5, 0.0, 4001))), 2.0, 0},
      {"log", schedules::math::log, [](double x) { return std::log(x); },
       with_specials(grid(1e-3, 1e3, 4001)), 2.0, 0},
      {"tanh", schedules::math::tanh, [](double x) { return std::tanh(x); },
       with_specials(grid(-10, 10, 4001)), 3.0, 0},
      {"sigmoid", schedules::math::sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); },
       with_specials(grid(-100, 100, 4001)), 3.0, 0},
      {"erf", schedules::math::erf, [](double x) { return std::erf(x); },
       with_specials(grid(-5, 5, 4001)), 0, 2e-7},
      {"gelu", schedules::math::gelu,
       [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); },
       with_specials(grid(-10, 10, 4001)), 0, 3e-7},
      {"mish", schedules::math::mish, mish_ref, normal_results(with_specials(grid(-87, 100, 4001))),
       5.0, 0},
      {"sin", schedules::math::sin, [](double x) { return std::sin(x); },
       trig_specials(grid(-1000, 1000, 4006)), 2.0, 0},
      {"cos", schedules::math::cos, [](double x) { return std::cos(x); },
       trig_specials(grid(-1000, 1000, 4006)), 2.0, 0},
  };
  // One kernel computes them all (one qemu start): y = f_k(x) for the k-th block of inputs.
  std::vector<float> xs;
  for (const Case& c : cases) xs.insert(xs.end(), c.xs.begin(), c.xs.end());
  int64_t n = static_cast<int64_t>(cases[0].xs.size());
  for (const Case& c : cases) ASSERT_EQ(static_cast<int64_t>(c.xs.size()), n);
  Target target = target_from_name("arm-neon");
  te::Tensor x = te::placeholder({int64_t(cases.size()), n}, DataType::f32(), "x");
  te::Tensor y = te::compute(
      {int64_t(cases.size()), n},
      [&](ir::Var k, ir::Var i) {
        Expr v = x(k, i);
        Expr out = cases.back().fn(v);
        for (int c = static_cast<int>(cases.size()) - 2; c >= 0; --c)
          out = ir::make_select(k == int64_t(c), cases[c].fn(v), out);
        return out;
      },
      "y");
  te::Schedule s({y});
  auto [outer, lanes] = s[y].split(s[y].axis(1), target.lanes(DataType::f32()));
  s[y].vectorize(lanes);
  ir::LoweredFunc f = lower::lower(s, {x, y}, "math_all");
  std::ostringstream ir_text;
  ir_text << f.body;
  EXPECT_NE(ir_text.str().find("y[ramp("), std::string::npos) << "math kernel did not vectorize";
  TargetRun run = run_on_target(f, "arm-neon", {encode(xs, DataType::f32()),
                                                Bytes(xs.size() * 4, 0)}, {1});
  if (!run.skip_reason.empty()) GTEST_SKIP() << run.skip_reason;
  std::vector<float> got = decode(run.outputs[0], DataType::f32());
  for (size_t c = 0; c < cases.size(); ++c) {
    std::vector<float> part(got.begin() + c * n, got.begin() + (c + 1) * n);
    Errors e = measure(cases[c].xs, part, cases[c].ref, cases[c].max_abs);
    report((std::string(cases[c].name) + " (arm-neon)").c_str(), e);
    if (cases[c].max_ulp > 0) EXPECT_LE(e.max_ulp, cases[c].max_ulp) << cases[c].name;
    if (cases[c].max_abs > 0) EXPECT_LE(e.max_abs, cases[c].max_abs) << cases[c].name;
  }
}

}  // namespace
}  // namespace kiln::testing
