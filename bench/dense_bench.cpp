// f32 dense M=N=K=1024, single thread: kiln's dense.packed template (register tile) on
// x86-avx512 against oneDNN's matmul (weights in the layout each library prefers, packed
// once outside the timed loop), in one binary. Prints GFLOPS of each and their ratio.
//
//   build/bench/dense_bench [--benchmark_min_time=1]
#include <benchmark/benchmark.h>
#include <omp.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "compiler/target/target.h"
#include "kiln/runtime.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "schedules/dense/dense.h"
#include "tuner/builder.h"

namespace {

constexpr int64_t kSize = 1024;

std::vector<float> random_matrix(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// GFLOPS as a rate counter: Google Benchmark divides by the measured time.
void report(benchmark::State& state) {
  double gflop = 2.0 * kSize * kSize * kSize / 1e9;
  state.counters["GFLOPS"] =
      benchmark::Counter(gflop * double(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_kiln_dense(benchmark::State& state) {
  using namespace kiln;
  schedules::Workload w{"dense", {{"M", kSize}, {"N", kSize}, {"K", kSize}}, ir::DataType::f32(), {}};
  Target target = target_from_name("x86-avx512");
  const schedules::OpTemplate& tpl = schedules::dense_packed_template();
  schedules::Config cfg = tpl.fallback(w, target);
  cfg.set("mr", state.range(0));
  cfg.set("nr_vecs", state.range(1));
  cfg.set("k_unroll", state.range(2));
  cfg.set("parallel", 0);
  std::string so = (std::filesystem::temp_directory_path() /
                    ("kiln-dense-bench-" + std::to_string(getpid()) + ".so")).string();
  tuner::BuiltKernel k = tuner::build_template(tpl, w, target, cfg, "dense", so);
  ThreadPool pool(1);
  KernelModule module(so, pool);
  std::filesystem::remove(so);
  Kernel kernel = module.kernel("dense");

  auto a = random_matrix(kSize * kSize, 1), b = random_matrix(kSize * kSize, 2);
  auto packed = k.args[1].pack(b);  // B in the template's panel layout, once
  AlignedBuffer A(a.size() * 4), B(packed.size() * 4), C(kSize * kSize * 4);
  std::memcpy(A.data(), a.data(), a.size() * 4);
  std::memcpy(B.data(), packed.data(), packed.size() * 4);
  void* args[] = {A.data(), B.data(), C.data()};
  kernel(args);
  // spot-check one element against the reference before timing
  double want = 0;
  for (int64_t kk = 0; kk < kSize; ++kk) want += double(a[5 * kSize + kk]) * b[kk * kSize + 7];
  float got = static_cast<float*>(C.data())[5 * kSize + 7];
  if (std::abs(got - want) > 1e-3 * std::max(1.0, std::abs(want))) {
    state.SkipWithError("kiln dense result is wrong");
    return;
  }
  for (auto _ : state) kernel(args);
  report(state);
}

void BM_onednn_matmul(benchmark::State& state) {
  using namespace dnnl;
  omp_set_num_threads(1);
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  memory::dims a_dims{kSize, kSize}, b_dims{kSize, kSize}, c_dims{kSize, kSize};
  auto a_md = memory::desc(a_dims, memory::data_type::f32, memory::format_tag::ab);
  auto b_any = memory::desc(b_dims, memory::data_type::f32, memory::format_tag::any);
  auto b_plain = memory::desc(b_dims, memory::data_type::f32, memory::format_tag::ab);
  auto c_md = memory::desc(c_dims, memory::data_type::f32, memory::format_tag::ab);
  auto pd = matmul::primitive_desc(matmul::desc(a_md, b_any, c_md), eng);
  auto a = random_matrix(kSize * kSize, 1), b = random_matrix(kSize * kSize, 2);
  memory A(a_md, eng, a.data()), Bplain(b_plain, eng, b.data()), C(c_md, eng);
  memory B(pd.weights_desc(), eng);
  reorder(Bplain, B).execute(strm, Bplain, B);  // weights in oneDNN's own layout
  matmul prim(pd);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, A}, {DNNL_ARG_WEIGHTS, B}, {DNNL_ARG_DST, C}};
  prim.execute(strm, args);
  strm.wait();
  for (auto _ : state) {
    prim.execute(strm, args);
    strm.wait();
  }
  report(state);
}

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      auto it = r.counters.find("GFLOPS");
      if (it == r.counters.end() || r.error_occurred) continue;
      std::string name = r.benchmark_name();
      double g = it->second.value;
      if (name.find("onednn") != std::string::npos) onednn_ = std::max(onednn_, g);
      else if (g > best_kiln_) best_kiln_ = g, best_name_ = name;
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    if (onednn_ > 0 && best_kiln_ > 0)
      std::printf("\nf32 dense 1024^3, 1 thread: kiln %.1f GFLOPS (%s), oneDNN %.1f GFLOPS, "
                  "kiln/oneDNN = %.2f\n",
                  best_kiln_, best_name_.c_str(), onednn_, best_kiln_ / onednn_);
  }

 private:
  double onednn_ = 0, best_kiln_ = 0;
  std::string best_name_;
};

}  // namespace

// Args: dense.packed knobs mr (tile rows), nr_vecs (tile columns in zmm), k_unroll.
BENCHMARK(BM_kiln_dense)->Args({8, 2, 1})->Args({12, 2, 1})->Args({6, 4, 1})->Args({6, 4, 4})
    ->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_onednn_matmul)->Unit(benchmark::kMillisecond)->MinTime(0.5);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
