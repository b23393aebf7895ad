// Operator benchmark: for each row (dense and ResNet-18 conv2d shapes, bf16 dense), the
// GFLOPS of the template's fallback config, of the best config a bounded local search
// finds, and of oneDNN (and OpenBLAS for f32 dense), side by side, on x86-avx512 (or the
// preset `--target` names, e.g. x86-avx2 on a CPU without AVX-512) with 1 and 2 threads. Nothing is
// asserted; the summary prints the ratios the operator library aims at (fallback within 1.5x of
// best; best >= 0.9x oneDNN; bf16 >= 1.8x f32).
//
//   build/bench/ops_bench [--threads 1,2] [--evals 24] [--filter conv] [--target x86-avx2]
//   build/bench/ops_bench --winograd [--threads 1,2] [--evals N]   (the Winograd table)
//   build/bench/ops_bench --bf16 [--threads 1] [--evals N]          (the bf16 conv table)
//   build/bench/ops_bench --movement [--threads 1,2] [--evals N]    (concat and transpose)
//   build/bench/ops_bench --int8 [--threads 1,2] [--evals N]        (int8 dense and conv)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <string>

#include "compiler/target/target.h"
#include "bench/bf16_peaks.h"
#include "bench/peers.h"
#include "schedules/registry.h"
#include "schedules/conv2d/winograd.h"
#include "tuner/builder.h"
#include "tuner/check_kernel.h"

namespace {

using kiln::schedules::Config;
using kiln::schedules::OpTemplate;
using kiln::schedules::Workload;
using kiln::tuner::Bytes;

struct Row {
  std::string label;
  Workload w;
  bool resnet_conv = false;
  std::string tmpl;  // a specific template, or the default for the workload
};

Workload dense(int64_t m, int64_t n, int64_t k, kiln::ir::DataType t = kiln::ir::DataType::f32()) {
  return {"dense", {{"M", m}, {"N", n}, {"K", k}}, t, {}};
}
Workload conv(int64_t c, int64_t hw, int64_t o, int64_t k, int64_t stride, int64_t pad) {
  return {"conv2d",
          {{"N", 1}, {"C", c}, {"H", hw}, {"W", hw}, {"O", o}, {"KH", k}, {"KW", k},
           {"stride", stride}, {"pad", pad}},
          kiln::ir::DataType::f32(),
          {}};
}

std::vector<Row> rows() {
  std::vector<Row> r = {
      {"dense 1024x1024x1024", dense(1024, 1024, 1024)},
      {"dense 1x1000x512", dense(1, 1000, 512)},
      {"dense 128x768x768", dense(128, 768, 768)},
      {"dense 128x3072x768", dense(128, 3072, 768)},
      {"conv 3->64 7x7 s2 224 (stem)", conv(3, 224, 64, 7, 2, 3), true},
      {"conv 64->64 3x3 56", conv(64, 56, 64, 3, 1, 1), true},
      {"conv 64->128 3x3 s2 56", conv(64, 56, 128, 3, 2, 1), true},
      {"conv 64->128 1x1 s2 56", conv(64, 56, 128, 1, 2, 0), true},
      {"conv 128->128 3x3 28", conv(128, 28, 128, 3, 1, 1), true},
      {"conv 128->256 3x3 s2 28", conv(128, 28, 256, 3, 2, 1), true},
      {"conv 128->256 1x1 s2 28", conv(128, 28, 256, 1, 2, 0), true},
      {"conv 256->256 3x3 14", conv(256, 14, 256, 3, 1, 1), true},
      {"conv 256->512 3x3 s2 14", conv(256, 14, 512, 3, 2, 1), true},
      {"conv 256->512 1x1 s2 14", conv(256, 14, 512, 1, 2, 0), true},
      {"conv 512->512 3x3 7", conv(512, 7, 512, 3, 1, 1), true},
      {"bf16 dense 1024x1024x1024", dense(1024, 1024, 1024, kiln::ir::DataType::bf16())},
  };
  return r;
}

struct Timing {
  double ms = 0;
  bool ok = false;
  std::string error;
};

// What time_config reports of its repeats: the median, or (the bf16 table) the fastest, the
// least disturbed on a loaded machine (see kiln::bench::set_peer_best_of).
bool g_best_of = false;

// Builds one config and times it (median or best, enough repeats for ~30 ms of work).
Timing time_config(const OpTemplate& tpl, const Workload& w, const kiln::Target& t,
                   const Config& cfg, int threads, bool check) {
  Timing out;
  try {
    auto k = kiln::tuner::lower_template(tpl, w, t, cfg, "bench");
    kiln::tuner::RunOptions o;
    o.threads = threads;
    o.repeat = 3;
    if (check) {
      auto c = kiln::tuner::check_built_kernel(tpl, w, t, k, o);
      if (!c.comparison.close) {
        out.error = "wrong result: " + c.comparison.message();
        return out;
      }
    }
    std::vector<Bytes> args;
    for (size_t i = 0; i < k.args.size(); ++i)
      args.emplace_back(static_cast<size_t>(k.args[i].kernel_elements) * k.func.args[i]->dtype.bytes(), 0);
    // Inputs of random values keep denormals and zeros out of the timing; each in its
    // argument's type (int8 kernels take i16 weights, an i32 bias, f32 scales).
    uint32_t seed = 3;
    for (size_t i = 0; i + 1 < k.args.size(); ++i) {
      const kiln::ir::DataType t = k.func.args[i]->dtype;
      args[i] = kiln::tuner::encode(kiln::tuner::random_values(k.args[i].kernel_elements, seed++, t), t);
    }
    auto probe = kiln::tuner::run_lowered(k.func, t, args, {}, o);
    o.repeat = static_cast<int>(
        std::clamp(30.0 / std::max(probe.median_ms, 1e-3), g_best_of ? 10.0 : 3.0, 200.0));
    auto run = kiln::tuner::run_lowered(k.func, t, args, {}, o);
    out.ms = g_best_of ? run.best_ms : run.median_ms;
    out.ok = true;
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

// Hill climbing from the fallback: try each knob one step up and down, move to the best
// improvement, stop when none improves or the budget is spent; random restarts use what
// is left.
std::pair<Config, double> local_search(const OpTemplate& tpl, const Workload& w,
                                       const kiln::Target& t, const Config& start,
                                       double start_ms, int threads, int budget) {
  auto space = tpl.space(w, t);
  std::set<std::string> seen = {start.to_json()};
  Config best = start;
  double best_ms = start_ms;
  int evals = 0;
  auto try_config = [&](const Config& c) {
    if (evals >= budget || !seen.insert(c.to_json()).second) return false;
    ++evals;
    Timing tm = time_config(tpl, w, t, c, threads, false);
    if (tm.ok && tm.ms < best_ms) {
      best_ms = tm.ms, best = c;
      return true;
    }
    return false;
  };
  bool improved = true;
  while (improved && evals < budget) {
    improved = false;
    Config center = best;
    for (const auto& knob : space.knobs()) {
      auto it = std::find(knob.choices.begin(), knob.choices.end(), center[knob.name]);
      size_t i = static_cast<size_t>(it - knob.choices.begin());
      for (int step : {-1, 1}) {
        if ((step < 0 && i == 0) || i + step >= knob.choices.size()) continue;
        Config c = center;
        c.set(knob.name, knob.choices[i + step]);
        improved |= try_config(c);
      }
    }
  }
  std::mt19937_64 rng(1);
  while (evals < budget && seen.size() < space.size()) try_config(space.random(rng));
  return {best, best_ms};
}

double peer_ms(const Workload& w, int repeat) {
  if (w.op == "dense")
    return kiln::bench::onednn_matmul_ms(w.param("M"), w.param("N"), w.param("K"),
                                         w.dtype == kiln::ir::DataType::bf16()
                                             ? kiln::bench::PeerPrecision::bf16
                                             : kiln::bench::PeerPrecision::f32,
                                         repeat);
  return kiln::bench::onednn_conv_ms(w.param("N"), w.param("C"), w.param("H"), w.param("W"),
                                     w.param("O"), w.param("KH"), w.param("KW"), w.param("stride"),
                                     w.param("pad"), w.param_or("groups", 1), repeat);
}

double flops_of(const OpTemplate& tpl, const Workload& w, const kiln::Target& t) {
  return tpl.instantiate(w, t, tpl.fallback(w, t)).flops;
}

// The Winograd table (--winograd): every 3x3 stride-1 layer of ResNet-18 (ResNet-50's are the
// same four shapes), in effective GFLOPS (direct-convolution FLOPs / time): the direct
// conv2d.nchwc fallback, conv2d.winograd's fallback with each output tile size m, the
// template's fallback as is (its own pick of m), the best of a local search over its space
// (`evals` builds), oneDNN direct and oneDNN's Winograd ("n/a" where it has none).
void winograd_table(const kiln::Target& t, int threads, int evals) {
  const OpTemplate& direct = kiln::schedules::template_named("conv2d.nchwc");
  const OpTemplate& wg = kiln::schedules::template_named("conv2d.winograd");
  std::printf("\n== Winograd, %s, %d thread(s), effective GFLOPS ==\n", t.name.c_str(), threads);
  std::printf("%-20s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s  %s\n", "layer", "direct", "F(2)",
              "F(4)", "F(6)", "wg fb", "wg best", "dnn dir", "dnn wino", "best/dir", "best/dnn",
              "rule / best config");
  // "-": not offered (or oneDNN has no Winograd here); "fail": did not build or check.
  auto cell = [](double gflops) {
    char b[16];
    std::snprintf(b, sizeof b, "%8.1f", gflops);
    return gflops > 0 ? std::string(b) : std::string(gflops < 0 ? "    fail" : "       -");
  };
  for (auto [c, hw] : {std::pair<int64_t, int64_t>{64, 56}, {128, 28}, {256, 14}, {512, 7}}) {
    Workload w = conv(c, hw, c, 3, 1, 1);
    const double gflop = flops_of(direct, w, t) / 1e9;
    auto g = [&](const Timing& tm) { return tm.ok ? gflop / (tm.ms / 1e3) : -1.0; };
    Timing d = time_config(direct, w, t, direct.fallback(w, t), threads, true);
    std::string row = cell(g(d));
    const std::vector<int64_t> offered = kiln::schedules::winograd_tile_choices(w);
    for (int64_t m : {2, 4, 6}) {
      if (std::find(offered.begin(), offered.end(), m) == offered.end()) {
        row += " " + cell(0);
        continue;
      }
      Config cfg = kiln::schedules::winograd_fallback(w, t, m);
      row += " " + cell(g(time_config(wg, w, t, cfg, threads, true)));
    }
    Config fb = wg.fallback(w, t), best = fb;
    Timing f = time_config(wg, w, t, fb, threads, true);
    double best_ms = f.ok ? f.ms : 0;
    if (f.ok && evals > 0) std::tie(best, best_ms) = local_search(wg, w, t, fb, f.ms, threads, evals);
    Timing b{best_ms, f.ok, ""};
    double dnn = peer_ms(w, 20);
    double wino = kiln::bench::onednn_conv_ms(1, c, hw, hw, c, 3, 3, 1, 1, 1, 20, true);
    row += " " + cell(g(f)) + " " + cell(g(b)) + " " + cell(gflop / (dnn / 1e3)) + " " +
           cell(wino > 0 ? gflop / (wino / 1e3) : 0);
    std::printf("conv %3lld->%-3lld 3x3 %-3lld %s %8.2f %8.2f  %s %s\n", (long long)c,
                (long long)c, (long long)hw, row.c_str(), d.ok && b.ok ? d.ms / best_ms : 0.0,
                b.ok ? dnn / best_ms : 0.0,
                kiln::schedules::winograd_preferred(w, t) ? "winograd" : "direct",
                best.to_json().c_str());
    std::fflush(stdout);
  }
}

// The bf16 table (--bf16): ResNet-18's convolutions (and ResNet-50's stride-1 1x1 ones) in
// bf16, in GFLOPS and as a share of this CPU's measured bf16 peaks (bf16_peaks.h): kiln's
// vdpbf16ps template (conv2d.bf16.x86 on the cooperlake profile, AVX-512 with AVX512-BF16:
// fallback and the best of a local
// search of `evals` configs), kiln on AMX (host: conv2d.bf16.amx for stride 1; a stride-2
// 1x1 as the GEMM dense.bf16.amx over its output pixels, i.e. with the input already
// subsampled, marked "g"), and oneDNN's bf16 convolution (format_tag::any).
void bf16_table(int threads, int evals) {
  using kiln::ir::DataType;
  const kiln::Target bf16_x86 = kiln::target_from_name("cooperlake");
  const kiln::Target host = kiln::target_from_name("host");
  // Kernels of a few milliseconds at load 10 on 2 cores: a median counts the other processes'
  // time slices (2-3x on the stride-1 3x3 layers, ~2 ms a call); every column takes the best run.
  g_best_of = true;
  kiln::bench::set_peer_best_of(true);
  const double vdp_peak = kiln::bench::vdpbf16ps_peak_gflops() * threads;
  const double amx_peak = kiln::bench::amx_bf16_peak_gflops() * threads;
  std::printf("\n== bf16 conv, %d thread(s), GFLOPS (best run); peaks: vdpbf16ps %.0f, AMX %.0f ==\n",
              threads, vdp_peak, amx_peak);
  std::printf("%-26s %8s %8s %8s %8s %8s %7s %7s %7s %8s\n", "layer", "vdp fb", "vdp best",
              "amx fb", "amx best", "oneDNN", "vdp%pk", "amx%pk", "dnn%pk", "amx/dnn");
  auto cell = [](double v, const char* suffix = "") {
    char b[24];
    std::snprintf(b, sizeof b, "%7.1f%s", v, suffix);
    return v > 0 ? std::string(b) : std::string("      -") + (suffix[0] ? " " : "");
  };
  std::vector<Row> layers;
  for (const Row& r : rows())
    if (r.resnet_conv) layers.push_back(r);
  layers.push_back({"conv 64->256 1x1 56 (R50)", conv(64, 56, 256, 1, 1, 0), true});
  layers.push_back({"conv 256->64 1x1 56 (R50)", conv(256, 56, 64, 1, 1, 0), true});
  std::vector<double> amx_vs_dnn;
  for (Row row : layers) {
    row.w.dtype = DataType::bf16();
    const OpTemplate& vdp = kiln::schedules::template_named("conv2d.bf16.x86");
    const double gflop = flops_of(vdp, row.w, bf16_x86) / 1e9;
    auto g = [&](double ms) { return ms > 0 ? gflop / (ms / 1e3) : 0.0; };
    // (fallback ms, best ms) of `tpl` for `w` on `t`; zeros when it does not build or check.
    auto fallback_and_best = [&](const OpTemplate& tpl, const Workload& w, const kiln::Target& t) {
      Config fb = tpl.fallback(w, t);
      Timing f = time_config(tpl, w, t, fb, threads, true);
      if (!f.ok) {
        std::printf("  (%s failed: %s)\n", tpl.name().c_str(), f.error.c_str());
        return std::pair<double, double>{0, 0};
      }
      double best_ms = f.ms;
      if (evals > 0) best_ms = local_search(tpl, w, t, fb, f.ms, threads, evals).second;
      return std::pair<double, double>{f.ms, best_ms};
    };
    auto [vdp_fb, vdp_best] = fallback_and_best(vdp, row.w, bf16_x86);
    double amx_fb = 0, amx_best = 0;
    bool as_gemm = false;
    const OpTemplate& amx_conv = kiln::schedules::template_named("conv2d.bf16.amx");
    if (amx_peak > 0 && amx_conv.applies(row.w, host)) {
      std::tie(amx_fb, amx_best) = fallback_and_best(amx_conv, row.w, host);
    } else if (amx_peak > 0 && row.w.param("KH") == 1 && row.w.param("pad") == 0) {
      const int64_t s = row.w.param("stride"), ohw = (row.w.param("H") - 1) / s + 1;
      Workload gemm{"dense", {{"M", ohw * ohw}, {"N", row.w.param("O")}, {"K", row.w.param("C")}},
                    DataType::bf16(), {}};
      std::tie(amx_fb, amx_best) =
          fallback_and_best(kiln::schedules::template_named("dense.bf16.amx"), gemm, host);
      as_gemm = true;
    }
    const Workload& w = row.w;
    double dnn = kiln::bench::onednn_conv_ms(1, w.param("C"), w.param("H"), w.param("W"),
                                             w.param("O"), w.param("KH"), w.param("KW"),
                                             w.param("stride"), w.param("pad"), 1, 20, false,
                                             kiln::bench::PeerPrecision::bf16);
    auto pct = [](double gflops, double peak) { return peak > 0 ? 100 * gflops / peak : 0.0; };
    const char* mark = as_gemm ? "g" : " ";
    std::printf("%-26s %s %s %s %s %s %s %s %s %8.2f\n", row.label.c_str(),
                cell(g(vdp_fb)).c_str(), cell(g(vdp_best)).c_str(), cell(g(amx_fb), mark).c_str(),
                cell(g(amx_best), mark).c_str(), cell(g(dnn)).c_str(),
                cell(pct(g(vdp_best), vdp_peak)).c_str(), cell(pct(g(amx_best), amx_peak)).c_str(),
                cell(pct(g(dnn), amx_peak > 0 ? amx_peak : vdp_peak)).c_str(),
                amx_best > 0 ? dnn / amx_best : 0.0);
    std::fflush(stdout);
    if (amx_best > 0 && !as_gemm) amx_vs_dnn.push_back(dnn / amx_best);
  }
  if (!amx_vs_dnn.empty()) {
    double lg = 0;
    for (double r : amx_vs_dnn) lg += std::log(r);
    std::printf("geomean AMX conv / oneDNN bf16 over %zu stride-1 layers: %.2f\n", amx_vs_dnn.size(),
                std::exp(lg / amx_vs_dnn.size()));
  }
  std::printf("(%%pk: share of the peak of the instruction used; oneDNN against the AMX peak "
              "where there is one. g: the 1x1 stride-2 layer as a GEMM on the subsampled input)\n");
  g_best_of = false;
  kiln::bench::set_peer_best_of(false);
}

// The int8 table (--int8): dense and the ResNet-18 conv layers in GOPS (2 x multiply-adds /
// time): kiln's f32 default template (fallback), dense.int8 / conv2d.int8 (fallback and the
// best of a local search), oneDNN f32 and oneDNN int8 (u8 data, s8 weights, u8 output with
// per-channel scales). int8/f32 is kiln's own speedup; dnn/kiln > 1 means kiln's int8 is
// faster than oneDNN's.
void int8_table(const kiln::Target& t, int threads, int evals) {
  using kiln::ir::DataType;
  using kiln::bench::PeerPrecision;
  // The int8 peak where this CPU has VNNI and the target uses it (vpdpbusd zmm).
  const double peak = t.has("avx512vnni") ? kiln::bench::vpdpbusd_peak_gops() * threads : 0;
  std::printf("\n== int8, %s, %d thread(s), GOPS; vpdpbusd peak %.0f ==\n", t.name.c_str(),
              threads, peak);
  std::printf("%-30s %8s %8s %8s %8s %8s %9s %9s %6s %6s  %s\n", "workload", "f32 fb", "i8 fb",
              "i8 best", "dnn f32", "dnn i8", "i8/f32", "dnn/kiln", "%pk", "dnn%pk",
              "template, best config");
  std::vector<double> speedup, vs_dnn;
  for (const Row& row : rows()) {
    if (row.w.dtype != DataType::f32()) continue;
    Workload q = row.w;
    q.dtype = DataType::u8();
    q.params["a_zero"] = 128;  // an activation's zero point, as quantize_static gives
    const OpTemplate& f32 = *kiln::schedules::templates_for(row.w, t).front();
    const OpTemplate& i8 = *kiln::schedules::templates_for(q, t).front();
    const double gop = flops_of(f32, row.w, t) / 1e9;
    auto g = [&](double ms) { return ms > 0 ? gop / (ms / 1e3) : 0.0; };
    Timing ff = time_config(f32, row.w, t, f32.fallback(row.w, t), threads, true);
    Config fb = i8.fallback(q, t);
    Timing qf = time_config(i8, q, t, fb, threads, true);
    if (!qf.ok || !ff.ok) {
      std::printf("%-30s failed: %s\n", row.label.c_str(), (qf.ok ? ff : qf).error.c_str());
      continue;
    }
    auto [best, best_ms] = local_search(i8, q, t, fb, qf.ms, threads, evals);
    const Workload& w = row.w;
    auto dnn = [&](PeerPrecision p) {
      if (w.op == "dense") return kiln::bench::onednn_matmul_ms(w.param("M"), w.param("N"), w.param("K"), p, 20);
      return kiln::bench::onednn_conv_ms(1, w.param("C"), w.param("H"), w.param("W"), w.param("O"),
                                         w.param("KH"), w.param("KW"), w.param("stride"),
                                         w.param("pad"), 1, 20, false, p);
    };
    const double dnn_f32 = dnn(PeerPrecision::f32), dnn_i8 = dnn(PeerPrecision::int8);
    auto pct = [&](double ms) { return peak > 0 && ms > 0 ? 100 * g(ms) / peak : 0.0; };
    std::printf("%-30s %8.1f %8.1f %8.1f %8.1f %8.1f %9.2f %9.2f %6.0f %6.0f  %s %s\n",
                row.label.c_str(), g(ff.ms), g(qf.ms), g(best_ms), g(dnn_f32), g(dnn_i8),
                ff.ms / best_ms, dnn_i8 / best_ms, pct(best_ms), pct(dnn_i8), i8.name().c_str(),
                best.to_json().c_str());
    std::fflush(stdout);
    speedup.push_back(ff.ms / best_ms);
    vs_dnn.push_back(dnn_i8 / best_ms);
  }
  auto geomean = [](const std::vector<double>& v) {
    double lg = 0;
    for (double r : v) lg += std::log(r);
    return v.empty() ? 0.0 : std::exp(lg / v.size());
  };
  std::printf("geomean kiln int8 best / kiln f32 fallback: %.2fx; oneDNN int8 / kiln int8: %.2f "
              "(goal >= 1.0)\n", geomean(speedup), geomean(vs_dnn));
}

// The data movement table (--movement): concat and transpose rows (channel concats of
// Inception/DenseNet/YOLO-style blocks in NCHW and NCHW16c, a short-row concat, NCHW <-> NHWC,
// attention's head transposes) in GB/s moved (bytes read + written / time): the default
// template's fallback and best (local search of `evals` configs), transpose.tiled's fallback
// (the template before transpose.shuffle), memcpy of the same bytes (the roofline) and
// oneDNN's reorder for transposes.
void movement_table(const kiln::Target& t, int threads, int evals) {
  using Shape = std::vector<int64_t>;
  auto put = [](Workload& w, const char* prefix, const Shape& v) {
    for (size_t i = 0; i < v.size(); ++i) w.params[prefix + std::to_string(i)] = v[i];
  };
  auto concat = [&](const Shape& out, int64_t axis, const Shape& extents) {
    Workload w{"concat",
               {{"ndim", int64_t(out.size())}, {"axis", axis}, {"inputs", int64_t(extents.size())}},
               kiln::ir::DataType::f32(),
               {}};
    put(w, "D", out), put(w, "E", extents);
    return w;
  };
  auto transpose = [&](const Shape& in, const Shape& perm) {
    Workload w{"transpose", {{"ndim", int64_t(in.size())}}, kiln::ir::DataType::f32(), {}};
    put(w, "D", in), put(w, "P", perm);
    return w;
  };
  const std::vector<Row> rows = {
      {"concat 64+96+128+32 28x28", concat({1, 0, 28, 28}, 1, {64, 96, 128, 32})},
      {"concat 128+128 56x56", concat({1, 0, 56, 56}, 1, {128, 128})},
      {"concat 256+128 26x26", concat({1, 0, 26, 26}, 1, {256, 128})},
      {"concat NCHW16c 8+8 blocks 56", concat({1, 0, 56, 56, 16}, 1, {8, 8})},
      {"concat rows 4096x(48+80)", concat({4096, 0}, 1, {48, 80})},
      {"concat 32+32 14x14 (in L1)", concat({1, 0, 14, 14}, 1, {32, 32})},
      {"concat rows 256x(48+80) (in L2)", concat({256, 0}, 1, {48, 80})},
      {"transpose 64x112x112 NCHW>NHWC", transpose({1, 64, 112, 112}, {0, 2, 3, 1})},
      {"transpose 112x112x64 NHWC>NCHW", transpose({1, 112, 112, 64}, {0, 3, 1, 2})},
      {"transpose 56x56x24 NHWC>NCHW", transpose({1, 56, 56, 24}, {0, 3, 1, 2})},
      {"transpose 12x128x64 (0,2,1)", transpose({12, 128, 64}, {0, 2, 1})},
      {"transpose 1024x1024", transpose({1024, 1024}, {1, 0})},
      {"transpose 128x12x64 (1,0,2)", transpose({128, 12, 64}, {1, 0, 2})},
  };
  std::printf("\n== data movement, %s, %d thread(s), GB/s (read + written) ==\n", t.name.c_str(),
              threads);
  std::printf("%-32s %-18s %8s %8s %8s %8s %8s %8s %8s  %s\n", "workload", "template", "fallback",
              "best", "tiled fb", "memcpy", "oneDNN", "best/cpy", "best/tld", "best config");
  const OpTemplate& tiled = kiln::schedules::template_named("transpose.tiled");
  for (const Row& row : rows) {
    const OpTemplate& tpl = *kiln::schedules::templates_for(row.w, t).front();
    const int64_t bytes = 2 * tpl.output(row.w).elements() * row.w.dtype.bytes();
    auto gbs = [&](double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; };
    Config fb = tpl.fallback(row.w, t);
    Timing f = time_config(tpl, row.w, t, fb, threads, true);
    if (!f.ok) {
      std::printf("%-32s %-18s fallback failed: %s\n", row.label.c_str(), tpl.name().c_str(),
                  f.error.c_str());
      continue;
    }
    auto [best, best_ms] = local_search(tpl, row.w, t, fb, f.ms, threads, evals);
    double tiled_ms = 0, dnn_ms = 0;
    if (row.w.op == "transpose") {
      Timing tl = time_config(tiled, row.w, t, tiled.fallback(row.w, t), threads, false);
      tiled_ms = tl.ok ? tl.ms : 0;
      Shape in, perm;
      for (int64_t i = 0; i < row.w.param("ndim"); ++i) {
        in.push_back(row.w.param("D" + std::to_string(i)));
        perm.push_back(row.w.param("P" + std::to_string(i)));
      }
      dnn_ms = kiln::bench::onednn_transpose_ms(in, perm, 50);
    }
    const double copy_ms = kiln::bench::memcpy_ms(bytes / 2, 50);
    std::printf("%-32s %-18s %8.1f %8.1f %8.1f %8.1f %8.1f %8.2f %8.2f  %s\n", row.label.c_str(),
                tpl.name().c_str(), gbs(f.ms), gbs(best_ms), gbs(tiled_ms), gbs(copy_ms),
                gbs(dnn_ms),
                copy_ms / best_ms, tiled_ms > 0 ? tiled_ms / best_ms : 0.0, best.to_json().c_str());
    std::fflush(stdout);
  }
  std::printf("(best/cpy: memcpy time / kiln best time, 1.00 = memcpy speed; best/tld: "
              "transpose.tiled's fallback time / kiln best time)\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> thread_counts = {1, 2};
  int evals = 24;
  std::string filter;
  bool winograd = false;  // only the Winograd table
  bool bf16 = false;      // only the bf16 conv table
  bool movement = false;  // only the data movement table
  bool int8 = false;      // only the int8 table
  // The tables were written for x86-avx512; another x86 target times the same rows: x86-avx2
  // on a CPU without AVX-512, or a CPU's profile (cascadelake, alderlake, host) for the int8
  // table's VNNI kernels, which the preset does not have. oneDNN runs at whatever the CPU has.
  std::string target_name = "x86-avx512";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--threads") {
      thread_counts.clear();
      std::string v = next();
      for (size_t p = 0; p < v.size();) {
        size_t q = v.find(',', p);
        thread_counts.push_back(std::stoi(v.substr(p, q - p)));
        p = q == std::string::npos ? v.size() : q + 1;
      }
    } else if (a == "--evals") {
      evals = std::stoi(next());
    } else if (a == "--filter") {
      filter = next();
    } else if (a == "--winograd") {
      winograd = true;
    } else if (a == "--bf16") {
      bf16 = true;
    } else if (a == "--movement") {
      movement = true;
    } else if (a == "--int8") {
      int8 = true;
    } else if (a == "--target") {
      target_name = next();
    } else {
      std::fprintf(stderr,
                   "usage: %s [--threads 1,2] [--evals N] [--filter TEXT] [--winograd] [--bf16] "
                   "[--movement] [--int8] [--target PRESET]\n",
                   argv[0]);
      return 2;
    }
  }
  kiln::Target target;
  try {
    target = kiln::target_from_name(target_name);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ops_bench: %s\n", e.what());
    return 2;
  }
  if (!target.is_x86() || !kiln::host_can_run(target)) {
    std::fprintf(stderr, "ops_bench: this CPU cannot run %s code (the peers are x86 libraries)\n",
                 target.name.c_str());
    return 1;
  }
  if (bf16 && !kiln::host_can_run(kiln::target_from_name("cooperlake"))) {
    std::fprintf(stderr, "ops_bench: the bf16 table needs AVX-512 with AVX512-BF16 and VNNI\n");
    return 1;
  }
  if (bf16) {
    for (int threads : thread_counts) {
      kiln::bench::set_peer_threads(threads);
      bf16_table(threads, evals);
    }
    return 0;
  }
  if (movement) {
    for (int threads : thread_counts) {
      kiln::bench::set_peer_threads(threads);
      movement_table(target, threads, evals);
    }
    return 0;
  }
  if (int8) {
    for (int threads : thread_counts) {
      kiln::bench::set_peer_threads(threads);
      int8_table(target, threads, evals);
    }
    return 0;
  }
  if (winograd) {
    for (int threads : thread_counts) {
      kiln::bench::set_peer_threads(threads);
      winograd_table(target, threads, evals);
    }
    return 0;
  }
  for (int threads : thread_counts) {
    kiln::bench::set_peer_threads(threads);
    std::printf("\n== %s, %d thread(s), local search budget %d configs ==\n", target.name.c_str(),
                threads, evals);
    std::printf("%-30s %-18s %9s %9s %9s %9s %8s %8s  %s\n", "workload", "template", "fallback",
                "best", "oneDNN", "OpenBLAS", "fb/best", "best/dnn", "best config");
    std::vector<double> conv_ratio;
    double f32_dense_best = 0, bf16_dense_best = 0, dense1024_ratio = 0;
    for (const Row& row : rows()) {
      if (!filter.empty() && row.label.find(filter) == std::string::npos) continue;
      std::vector<const OpTemplate*> tpls;
      try {
        tpls = kiln::schedules::templates_for(row.w, target);
      } catch (const std::exception& e) {
        std::printf("%-30s (no template yet: %s)\n", row.label.c_str(), e.what());
        continue;
      }
      const OpTemplate& tpl = *tpls.front();
      double gflop = flops_of(tpl, row.w, target) / 1e9;
      Config fb = tpl.fallback(row.w, target);
      Timing f = time_config(tpl, row.w, target, fb, threads, true);
      if (!f.ok) {
        std::printf("%-30s %-18s fallback failed: %s\n", row.label.c_str(), tpl.name().c_str(), f.error.c_str());
        continue;
      }
      auto [best, best_ms] = local_search(tpl, row.w, target, fb, f.ms, threads, evals);
      Timing check = time_config(tpl, row.w, target, best, threads, true);
      if (!check.ok) std::printf("  (best config failed its check: %s)\n", check.error.c_str());
      double dnn = peer_ms(row.w, 20);
      double blas = row.w.op == "dense" && row.w.dtype == kiln::ir::DataType::f32()
                        ? kiln::bench::openblas_sgemm_ms(row.w.param("M"), row.w.param("N"), row.w.param("K"), 20)
                        : 0;
      auto g = [&](double ms) { return ms > 0 ? gflop / (ms / 1e3) : 0.0; };
      std::printf("%-30s %-18s %9.1f %9.1f %9.1f %9.1f %8.2f %8.2f  %s\n", row.label.c_str(),
                  tpl.name().c_str(), g(f.ms), g(best_ms), g(dnn), g(blas), best_ms / f.ms,
                  dnn / best_ms, best.to_json().c_str());
      std::fflush(stdout);
      if (row.resnet_conv) conv_ratio.push_back(dnn / best_ms);
      if (row.label == "dense 1024x1024x1024") f32_dense_best = g(best_ms), dense1024_ratio = dnn / best_ms;
      if (row.label == "bf16 dense 1024x1024x1024") bf16_dense_best = g(best_ms);
    }
    std::printf("(GFLOPS; fb/best = fallback time / best time, 1.00 = the fallback is the best found;\n"
                " best/dnn = oneDNN time / kiln best time, > 1 means kiln is faster)\n");
    if (!conv_ratio.empty()) {
      double lg = 0;
      for (double r : conv_ratio) lg += std::log(r);
      std::printf("geomean kiln/oneDNN over %zu ResNet-18 conv layers: %.2f (goal >= 0.9)\n",
                  conv_ratio.size(), std::exp(lg / conv_ratio.size()));
    }
    if (dense1024_ratio > 0) std::printf("dense 1024^3 kiln/oneDNN: %.2f (goal >= 0.9)\n", dense1024_ratio);
    if (f32_dense_best > 0 && bf16_dense_best > 0)
      std::printf("bf16 / f32 dense 1024^3: %.2fx (goal >= 1.8x)\n", bf16_dense_best / f32_dense_best);
  }
  return 0;
}
