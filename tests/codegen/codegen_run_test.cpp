// Correctness: hand-built kernels compiled for each runnable x86 target, linked, loaded
// with dlopen and compared against plain C++ results.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "tests/codegen/codegen_test_util.h"
#include "compiler/ir/op.h"

namespace kiln::codegen::testing {
namespace {

using ir::Buffer;
using ir::DataType;
using ir::Expr;
using ir::ForKind;
using ir::LoweredFunc;
using ir::MemScope;
using ir::Stmt;
using ir::Var;

Expr load(const Buffer& b, Expr index, Expr pred = Expr()) {
  return ir::make_load(b, {std::move(index)}, std::move(pred));
}
Stmt store(const Buffer& b, Expr value, Expr index, Expr pred = Expr()) {
  return ir::make_store(b, std::move(value), {std::move(index)}, std::move(pred));
}
Stmt loop(const Var& v, int64_t extent, Stmt body, ForKind kind = ForKind::Serial) {
  return ir::make_for(v, 0, extent, kind, std::move(body));
}

// An f32 constant (a scalar meeting a vector is broadcast by the IR's operators).
Expr fc(double v) {
  return ir::make_float(DataType::f32(), v);
}

std::vector<float> iota_floats(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 97) - 40);
  return v;
}

class CodegenRun : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    target_ = target_from_name(GetParam());
    if (!host_can_run(target_)) GTEST_SKIP() << "this machine cannot run " << GetParam() << " code";
    api_ = TestRuntime::api();
  }
  // Builds, checks the .so is self-contained, loads and initialises it.
  std::unique_ptr<LoadedModule> load_module(const std::vector<LoweredFunc>& funcs,
                                            bool with_api = true) {
    std::string path = build(funcs, target_);
    ElfSummary elf = read_elf(path);
    EXPECT_TRUE(elf.needed.empty()) << path << " needs " << elf.needed[0];
    EXPECT_TRUE(elf.undefined.empty()) << path << " has undefined symbol " << elf.undefined[0];
    auto m = std::make_unique<LoadedModule>(path);
    EXPECT_EQ(m->init(with_api ? &api_ : nullptr), 0);
    return m;
  }
  Target target_;
  kiln_runtime_api api_{};
};

TEST_P(CodegenRun, ScalarAddLoop) {
  const int64_t n = 1003;
  Buffer a = ir::make_buffer("A", DataType::f32(), {n});
  Buffer b = ir::make_buffer("B", DataType::f32(), {n});
  Buffer c = ir::make_buffer("C", DataType::f32(), {n});
  Var i("i");
  LoweredFunc f{"vadd", {a, b, c}, loop(i, n, store(c, load(a, i) + load(b, i), i))};
  auto m = load_module({f});
  auto av = iota_floats(n, 0.5f), bv = iota_floats(n, -0.25f);
  std::vector<float> cv(n, 0);
  ASSERT_EQ(m->call("vadd", {av.data(), bv.data(), cv.data()}), 0);
  for (int64_t k = 0; k < n; ++k) ASSERT_EQ(cv[k], av[k] + bv[k]) << k;
}

TEST_P(CodegenRun, VectorFmaWithRamps) {
  const int64_t n = 1024;
  Buffer a = ir::make_buffer("A", DataType::f32(), {n});
  Buffer b = ir::make_buffer("B", DataType::f32(), {n});
  Buffer c = ir::make_buffer("C", DataType::f32(), {n});
  Var i("i");
  Expr r = ir::make_ramp(i * 16, 1, 16);
  LoweredFunc f{
      "vfma", {a, b, c}, loop(i, n / 16, store(c, load(a, r) * load(b, r) + load(c, r), r))};
  auto m = load_module({f});
  auto av = iota_floats(n, 0.37f), bv = iota_floats(n, 1.13f), cv = iota_floats(n, -0.71f);
  auto expect = cv;
  ASSERT_EQ(m->call("vfma", {av.data(), bv.data(), cv.data()}), 0);
  for (int64_t k = 0; k < n; ++k) {
    float want = std::fma(av[k], bv[k], expect[k]);  // contracted into one rounding
    ASSERT_NEAR(cv[k], want, 1e-5f * (1 + std::fabs(want))) << k;
  }
}

TEST_P(CodegenRun, ParallelLoopWithAndWithoutRuntime) {
  const int64_t rows = 37, cols = 64;
  Buffer a = ir::make_buffer("A", DataType::f32(), {rows * cols});
  Buffer c = ir::make_buffer("C", DataType::f32(), {rows * cols});
  Var i("i"), j("j");
  Expr idx = i * cols + j;
  Stmt body =
      loop(j, cols, store(c, load(a, idx) * fc(2) + ir::make_cast(DataType::f32(), i), idx));
  LoweredFunc f{"par", {a, c}, loop(i, rows, body, ForKind::Parallel)};
  auto av = iota_floats(rows * cols, 0.5f);
  for (bool with_api : {true, false}) {
    auto m = load_module({f}, with_api);
    std::vector<float> cv(rows * cols, -1);
    int before = TestRuntime::parallel_calls();
    ASSERT_EQ(m->call("par", {av.data(), cv.data()}), 0);
    EXPECT_EQ(TestRuntime::parallel_calls() - before, with_api ? 1 : 0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k)
        ASSERT_EQ(cv[r * cols + k], av[r * cols + k] * 2 + r) << r << "," << k;
  }
}

TEST_P(CodegenRun, NestedParallelRunsInnerSerially) {
  const int64_t n = 8;
  Buffer c = ir::make_buffer("C", DataType::i64(), {n * n});
  Var i("i"), j("j");
  Stmt inner = loop(j, n, store(c, i * 100 + j, i * n + j), ForKind::Parallel);
  LoweredFunc f{"nested", {c}, ir::make_for(i, 0, n, ForKind::Parallel, inner)};
  auto m = load_module({f});
  std::vector<int64_t> cv(n * n, -1);
  int before = TestRuntime::parallel_calls();
  ASSERT_EQ(m->call("nested", {cv.data()}), 0);
  EXPECT_EQ(TestRuntime::parallel_calls() - before, 1);
  for (int64_t k = 0; k < n * n; ++k) ASSERT_EQ(cv[k], (k / n) * 100 + k % n);
}

TEST_P(CodegenRun, LocalAllocate) {
  const int64_t rows = 10, cols = 16;
  Buffer a = ir::make_buffer("A", DataType::f32(), {rows * cols});
  Buffer c = ir::make_buffer("C", DataType::f32(), {rows * cols});
  Buffer t = ir::make_buffer("T", DataType::f32(), {cols}, MemScope::Local);
  Var i("i"), j("j"), k("k");
  Stmt fill = loop(j, cols, store(t, load(a, i * cols + j) * fc(3), j));
  Stmt use = loop(k, cols, store(c, load(t, cols - 1 - k) + fc(1), i * cols + k));
  LoweredFunc f{"local",
                {a, c},
                loop(i, rows, ir::make_allocate(t, ir::make_seq({fill, use})), ForKind::Parallel)};
  auto m = load_module({f});
  auto av = iota_floats(rows * cols, 0.25f);
  std::vector<float> cv(rows * cols);
  ASSERT_EQ(m->call("local", {av.data(), cv.data()}), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t q = 0; q < cols; ++q)
      ASSERT_EQ(cv[r * cols + q], av[r * cols + cols - 1 - q] * 3 + 1);
}

LoweredFunc global_allocate_kernel(ForKind outer) {
  const int64_t n = 300;
  Buffer a = ir::make_buffer("A", DataType::f32(), {n});
  Buffer c = ir::make_buffer("C", DataType::f32(), {n});
  Buffer w = ir::make_buffer("W", DataType::f32(), {n}, MemScope::Global);
  Var i("i"), j("j"), r("r");
  Stmt fill = loop(i, n, store(w, load(a, i) * load(a, i), i));
  Stmt use = loop(j, n, store(c, load(w, j) + load(w, n - 1 - j), j));
  Stmt body = ir::make_allocate(w, ir::make_seq({fill, use}));
  return {"global", {a, c}, ir::make_for(r, 0, 2, outer, body)};
}

TEST_P(CodegenRun, GlobalAllocateUsesWorkspace) {
  for (ForKind kind : {ForKind::Serial, ForKind::Parallel}) {
    auto m = load_module({global_allocate_kernel(kind)});
    auto av = iota_floats(300, 0.5f);
    std::vector<float> cv(300);
    ASSERT_EQ(m->call("global", {av.data(), cv.data()}), 0);
    EXPECT_EQ(TestRuntime::live_workspaces(), 0);
    for (int k = 0; k < 300; ++k) ASSERT_EQ(cv[k], av[k] * av[k] + av[299 - k] * av[299 - k]);
    // Allocation failure is a status, not a crash, and frees nothing twice.
    TestRuntime::fail_next_allocations(true);
    EXPECT_NE(m->call("global", {av.data(), cv.data()}), 0);
    TestRuntime::fail_next_allocations(false);
    EXPECT_EQ(TestRuntime::live_workspaces(), 0);
  }
  // Without a runtime there is no workspace: the kernel says so.
  auto m = load_module({global_allocate_kernel(ForKind::Serial)}, false);
  std::vector<float> av(300), cv(300);
  EXPECT_NE(m->call("global", {av.data(), cv.data()}), 0);
}

TEST_P(CodegenRun, NestedGlobalAllocationFailureFreesOuter) {
  const int64_t n = 64;
  Buffer c = ir::make_buffer("C", DataType::f32(), {n});
  Buffer w1 = ir::make_buffer("W1", DataType::f32(), {n});
  Buffer w2 = ir::make_buffer("W2", DataType::f32(), {n});
  Var i("i");
  Stmt inner = ir::make_allocate(w2, loop(i, n, store(w2, fc(1), i)));
  Stmt body = ir::make_allocate(w1, ir::make_seq({loop(i, n, store(c, fc(2), i)), inner}));
  LoweredFunc f{"nested_ws", {c}, body};
  auto m = load_module({f});
  std::vector<float> cv(n);
  ASSERT_EQ(m->call("nested_ws", {cv.data()}), 0);
  EXPECT_EQ(TestRuntime::live_workspaces(), 0);
}

TEST_P(CodegenRun, FloorAndTruncDivisionOfNegatives) {
  const int64_t n = 15;
  Buffer a = ir::make_buffer("A", DataType::i64(), {n});
  Buffer d = ir::make_buffer("D", DataType::i64(), {n});
  std::vector<Buffer> outs;
  for (int k = 0; k < 8; ++k)
    outs.push_back(ir::make_buffer(numbered("O", k), DataType::i64(), {n}));
  Var i("i");
  Expr x = load(a, i), y = load(d, i);
  std::vector<Expr> vals{ir::floordiv(x, 3), ir::floormod(x, 3), ir::floordiv(x, 4),
                         ir::floormod(x, 4), ir::truncdiv(x, 3), ir::truncmod(x, 3),
                         ir::floordiv(x, y), ir::floormod(x, y)};
  std::vector<Stmt> stores;
  for (int k = 0; k < 8; ++k) stores.push_back(store(outs[k], vals[k], i));
  std::vector<Buffer> args{a, d};
  args.insert(args.end(), outs.begin(), outs.end());
  LoweredFunc f{"divmod", args, loop(i, n, ir::make_seq(stores))};
  auto m = load_module({f});
  std::vector<int64_t> av(n), dv(n);
  std::vector<std::vector<int64_t>> ov(8, std::vector<int64_t>(n));
  for (int k = 0; k < n; ++k) av[k] = k - 7, dv[k] = (k % 2) ? -3 : 5;
  std::vector<void*> ptrs{av.data(), dv.data()};
  for (auto& o : ov) ptrs.push_back(o.data());
  ASSERT_EQ(m->call("divmod", ptrs), 0);
  auto fdiv = [](int64_t p, int64_t q) { return (p / q) - ((p % q != 0) && ((p < 0) != (q < 0))); };
  auto fmod = [&](int64_t p, int64_t q) { return p - fdiv(p, q) * q; };
  for (int k = 0; k < n; ++k) {
    int64_t p = av[k], q = dv[k];
    EXPECT_EQ(ov[0][k], fdiv(p, 3)) << p;
    EXPECT_EQ(ov[1][k], fmod(p, 3)) << p;
    EXPECT_EQ(ov[2][k], fdiv(p, 4)) << p;
    EXPECT_EQ(ov[3][k], fmod(p, 4)) << p;
    EXPECT_EQ(ov[4][k], p / 3) << p;
    EXPECT_EQ(ov[5][k], p % 3) << p;
    EXPECT_EQ(ov[6][k], fdiv(p, q)) << p << "/" << q;
    EXPECT_EQ(ov[7][k], fmod(p, q)) << p << "%" << q;
  }
  EXPECT_EQ(fdiv(-7, 3), -3);  // the reference itself
  EXPECT_EQ(fmod(-7, 3), 2);
}

TEST_P(CodegenRun, VectorFloorDivOnI32) {
  const int64_t n = 32;
  Buffer a = ir::make_buffer("A", DataType::i32(), {n});
  Buffer q = ir::make_buffer("Q", DataType::i32(), {n});
  Buffer r = ir::make_buffer("R", DataType::i32(), {n});
  Var i("i");
  Expr idx = ir::make_ramp(i * 8, 1, 8);
  Expr x = load(a, idx);
  Expr three = ir::make_int(DataType::i32(8), 3), eight = ir::make_int(DataType::i32(8), 8);
  Stmt body =
      ir::make_seq({store(q, ir::floordiv(x, three), idx), store(r, ir::floormod(x, eight), idx)});
  auto m = load_module({LoweredFunc{"vdiv", {a, q, r}, loop(i, n / 8, body)}});
  std::vector<int32_t> av(n), qv(n), rv(n);
  for (int k = 0; k < n; ++k) av[k] = k * 7 - 100;
  ASSERT_EQ(m->call("vdiv", {av.data(), qv.data(), rv.data()}), 0);
  for (int k = 0; k < n; ++k) {
    EXPECT_EQ(qv[k], static_cast<int32_t>(std::floor(av[k] / 3.0))) << av[k];
    EXPECT_EQ(rv[k], ((av[k] % 8) + 8) % 8) << av[k];
  }
}

TEST_P(CodegenRun, GatherScatterAndBroadcastIndex) {
  const int64_t n = 64;
  Buffer a = ir::make_buffer("A", DataType::f32(), {3 * n});
  Buffer idx = ir::make_buffer("I", DataType::i64(), {n});
  Buffer c = ir::make_buffer("C", DataType::f32(), {n});
  Buffer d = ir::make_buffer("D", DataType::f32(), {2 * n});
  Var i("i");
  Expr dense = ir::make_ramp(i * 8, 1, 8);
  Expr strided = ir::make_ramp(i * 24, 3, 8);  // stride 3: a gather
  Expr indirect = load(idx, dense);            // any i64x8: a gather
  Expr same = ir::make_broadcast(i, 8);        // one element, splatted
  Stmt s1 = store(c, load(a, strided) + load(a, indirect) + load(a, same), dense);
  Stmt s2 = store(d, load(a, dense), ir::make_ramp(i * 16, 2, 8));  // a scatter
  auto m =
      load_module({LoweredFunc{"gather", {a, idx, c, d}, loop(i, n / 8, ir::make_seq({s1, s2}))}});
  auto av = iota_floats(3 * n, 1.0f);
  std::vector<int64_t> iv(n);
  for (int k = 0; k < n; ++k) iv[k] = (k * 37) % (3 * n);
  std::vector<float> cv(n), dv(2 * n, -5);
  ASSERT_EQ(m->call("gather", {av.data(), iv.data(), cv.data(), dv.data()}), 0);
  for (int k = 0; k < n; ++k) {
    EXPECT_EQ(cv[k], av[3 * k] + av[iv[k]] + av[k / 8]) << k;
    EXPECT_EQ(dv[2 * k], av[k]) << k;
    EXPECT_EQ(dv[2 * k + 1], -5) << k;
  }
}

TEST_P(CodegenRun, PredicatedLoadsAndStores) {
  const int64_t n = 100, padded = 112;
  Buffer a = ir::make_buffer("A", DataType::f32(), {n});
  Buffer c = ir::make_buffer("C", DataType::f32(), {padded});
  Var i("i");
  Expr r = ir::make_ramp(i * 16, 1, 16);
  Expr pred = r < ir::make_broadcast(Expr(n), 16);
  Stmt body = store(c, load(a, r, pred) + fc(1), r, pred);
  // The scalar form too: a guarded element.
  Var j("j");
  Buffer e = ir::make_buffer("E", DataType::f32(), {4});
  Stmt scalar = loop(j, 4, store(e, load(a, j * 50, j * 50 < n) * fc(2), j, j * 50 < n));
  auto m =
      load_module({LoweredFunc{"masked", {a, c, e}, ir::make_seq({loop(i, 7, body), scalar})}});
  auto av = iota_floats(n, 0.5f);
  std::vector<float> cv(padded, -7), ev(4, -7);
  ASSERT_EQ(m->call("masked", {av.data(), cv.data(), ev.data()}), 0);
  for (int k = 0; k < padded; ++k) EXPECT_EQ(cv[k], k < n ? av[k] + 1 : -7) << k;
  EXPECT_EQ(ev[0], av[0] * 2);
  EXPECT_EQ(ev[1], av[50] * 2);
  EXPECT_EQ(ev[2], -7);
  EXPECT_EQ(ev[3], -7);
}

TEST_P(CodegenRun, MathSelectMinMaxLetAndIf) {
  const int64_t n = 64;
  Buffer a = ir::make_buffer("A", DataType::f32(), {n});
  Buffer b = ir::make_buffer("B", DataType::f32(), {n});
  std::vector<Buffer> o;
  for (int k = 0; k < 9; ++k) o.push_back(ir::make_buffer(numbered("O", k), DataType::f32(), {n}));
  Var i("i"), x("x", DataType::f32(16)), y("y", DataType::f32(16));
  Expr r = ir::make_ramp(i * 16, 1, 16);
  auto call = [](const char* name, std::vector<Expr> args) {
    DataType t = args[0].type();
    return ir::make_call(t, name, std::move(args));
  };
  std::vector<Expr> vals{call("sqrt", {call("fabs", {x})}),
                         call("floor", {x}),
                         call("ceil", {x}),
                         call("round", {x}),
                         call("trunc", {x}),
                         call("fma", {x, y, ir::make_float(DataType::f32(16), 0.5)}),
                         ir::make_select(x > y, ir::max(x, y), ir::min(x, y) * fc(2)),
                         x / y,
                         x - y};
  std::vector<Stmt> stores;
  for (int k = 0; k < 9; ++k) stores.push_back(store(o[k], vals[k], r));
  // An if/else around the last store: odd iterations write y - x instead.
  Stmt last = ir::make_if(ir::floormod(i, 2) == 0, store(o[8], x - y, r), store(o[8], y - x, r));
  Stmt body = ir::make_let_stmt(
      x, load(a, r), ir::make_let_stmt(y, load(b, r), ir::make_seq({ir::make_seq(stores), last})));
  std::vector<Buffer> args{a, b};
  args.insert(args.end(), o.begin(), o.end());
  auto m = load_module({LoweredFunc{"math", args, loop(i, n / 16, body)}});
  std::vector<float> av(n), bv(n);
  for (int k = 0; k < n; ++k)
    av[k] = (k - 32) * 0.75f + 0.25f * (k % 3 == 0), bv[k] = 1.5f - k * 0.1f;
  av[5] = 2.5f, av[6] = -2.5f, av[7] = 3.5f;  // ties: round to even
  std::vector<std::vector<float>> ov(9, std::vector<float>(n));
  std::vector<void*> ptrs{av.data(), bv.data()};
  for (auto& v : ov) ptrs.push_back(v.data());
  ASSERT_EQ(m->call("math", ptrs), 0);
  for (int k = 0; k < n; ++k) {
    float p = av[k], q = bv[k];
    EXPECT_EQ(ov[0][k], std::sqrt(std::fabs(p)));
    EXPECT_EQ(ov[1][k], std::floor(p));
    EXPECT_EQ(ov[2][k], std::ceil(p));
    EXPECT_EQ(ov[3][k], std::nearbyint(p)) << p;
    EXPECT_EQ(ov[4][k], std::trunc(p));
    EXPECT_EQ(ov[5][k], std::fma(p, q, 0.5f));
    EXPECT_EQ(ov[6][k], p > q ? std::max(p, q) : std::min(p, q) * 2);
    EXPECT_EQ(ov[7][k], p / q);
    EXPECT_EQ(ov[8][k], (k / 16) % 2 == 0 ? p - q : q - p);
  }
}

TEST_P(CodegenRun, CastsBetweenIntegersFloatsAndBools) {
  const int64_t n = 16;
  Buffer a = ir::make_buffer("A", DataType::f32(), {n});
  Buffer i8 = ir::make_buffer("I8", DataType::i8(), {n});
  Buffer u8 = ir::make_buffer("U8", DataType::u8(), {n});
  Buffer bl = ir::make_buffer("BL", DataType::boolean(), {n});
  Buffer f = ir::make_buffer("F", DataType::f64(), {n});
  Var i("i");
  Expr r = ir::make_ramp(i * 16, 1, 16);
  Expr x = load(a, r);
  Stmt body = ir::make_seq({
      store(i8, ir::make_cast(DataType::i8(16), x), r),
      store(u8, ir::make_cast(DataType::u8(16), ir::make_cast(DataType::i8(16), x)), r),
      store(bl, x > fc(0), r),
      store(f,
            ir::make_cast(DataType::f64(16), ir::make_cast(DataType::i8(16), x)) +
                ir::make_cast(DataType::f64(16), load(bl, r)),
            r),
  });
  auto m = load_module({LoweredFunc{"casts", {a, i8, u8, bl, f}, loop(i, 1, body)}});
  std::vector<float> av(n);
  for (int k = 0; k < n; ++k) av[k] = (k - 8) * 1.75f;
  std::vector<int8_t> iv(n);
  std::vector<uint8_t> uv(n), bv(n);
  std::vector<double> fv(n);
  ASSERT_EQ(m->call("casts", {av.data(), iv.data(), uv.data(), bv.data(), fv.data()}), 0);
  for (int k = 0; k < n; ++k) {
    EXPECT_EQ(iv[k], static_cast<int8_t>(av[k]));
    EXPECT_EQ(uv[k], static_cast<uint8_t>(static_cast<int8_t>(av[k])));
    EXPECT_EQ(bv[k], av[k] > 0 ? 1 : 0);
    EXPECT_EQ(fv[k], static_cast<int8_t>(av[k]) + (av[k] > 0 ? 1.0 : 0.0));
  }
}

TEST_P(CodegenRun, SeveralKernelsInOneModule) {
  const int64_t n = 10;
  Buffer a = ir::make_buffer("A", DataType::i32(), {n});
  Var i("i"), j("j");
  LoweredFunc k1{"fill", {a}, loop(i, n, store(a, ir::make_cast(DataType::i32(), i), i))};
  LoweredFunc k2{
      "twice", {a}, loop(j, n, store(a, load(a, j) * ir::make_int(DataType::i32(), 2), j))};
  std::string path = build({k1, k2}, target_);
  ElfSummary elf = read_elf(path);
  std::sort(elf.exported.begin(), elf.exported.end());
  EXPECT_EQ(elf.exported, (std::vector<std::string>{"fill", "kiln_module_init", "kiln_module_target", "twice"}));
  LoadedModule m(path);
  ASSERT_EQ(m.init(&api_), 0);
  std::vector<int32_t> av(n);
  ASSERT_EQ(m.call("fill", {av.data()}), 0);
  ASSERT_EQ(m.call("twice", {av.data()}), 0);
  for (int k = 0; k < n; ++k) EXPECT_EQ(av[k], 2 * k);
  kiln_runtime_api wrong = api_;
  wrong.abi_version = 99;
  EXPECT_NE(m.init(&wrong), 0);
}

INSTANTIATE_TEST_SUITE_P(Targets, CodegenRun, ::testing::Values("host", "x86-avx2", "x86-avx512"),
                         [](const auto& info) {
                           std::string s = info.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

}  // namespace
}  // namespace kiln::codegen::testing
