// The oneDNN figure of one tuning task, for bench/tune_bench.py's table: the same operator
// and shape as a `kiln tune` task, run by oneDNN on this machine (its preferred layouts,
// reordered outside the timed region; its best ISA, or the one DNNL_MAX_CPU_ISA allows).
//
//   onednn_task --op dense --shape M,N,K [--dtype f32|bf16|int8] [--threads 1] [--repeat 30]
//   onednn_task --op conv2d --shape N,C,H,W,O,KH,KW [--stride S] [--pad P] [--groups G] ...
//
// Prints one line: "onednn <median ms> ms <GFLOPS> GFLOPS".
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "bench/peers.h"

namespace {

std::vector<int64_t> numbers(const std::string& csv) {
  std::vector<int64_t> out;
  std::stringstream in(csv);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoll(item));
  return out;
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s --op dense --shape M,N,K | --op conv2d --shape N,C,H,W,O,KH,KW "
               "[--stride S] [--pad P] [--groups G] [--dtype f32|bf16|int8] [--threads T] "
               "[--repeat R]\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string op, dtype = "f32";
  std::vector<int64_t> shape;
  int64_t stride = 1, pad = 0, groups = 1;
  int threads = 1, repeat = 30;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage(argv[0]);
    const std::string v = argv[++i];
    if (a == "--op") op = v;
    else if (a == "--shape") shape = numbers(v);
    else if (a == "--stride") stride = std::stoll(v);
    else if (a == "--pad") pad = std::stoll(v);
    else if (a == "--groups") groups = std::stoll(v);
    else if (a == "--dtype") dtype = v;
    else if (a == "--threads") threads = std::stoi(v);
    else if (a == "--repeat") repeat = std::stoi(v);
    else return usage(argv[0]);
  }
  if (dtype != "f32" && dtype != "bf16" && dtype != "int8") return usage(argv[0]);
  using kiln::bench::PeerPrecision;
  const PeerPrecision prec = dtype == "bf16"   ? PeerPrecision::bf16
                             : dtype == "int8" ? PeerPrecision::int8
                                               : PeerPrecision::f32;
  kiln::bench::set_peer_threads(threads);
  double ms = 0, flops = 0;
  if (op == "dense" && shape.size() == 3) {
    ms = kiln::bench::onednn_matmul_ms(shape[0], shape[1], shape[2], prec, repeat);
    flops = 2.0 * shape[0] * shape[1] * shape[2];
  } else if (op == "conv2d" && shape.size() == 7) {
    const int64_t n = shape[0], c = shape[1], h = shape[2], w = shape[3], o = shape[4],
                  kh = shape[5], kw = shape[6];
    ms = kiln::bench::onednn_conv_ms(n, c, h, w, o, kh, kw, stride, pad, groups, repeat, false,
                                     prec);
    const int64_t oh = (h + 2 * pad - kh) / stride + 1, ow = (w + 2 * pad - kw) / stride + 1;
    flops = 2.0 * n * o * oh * ow * (c / groups) * kh * kw;
  } else {
    return usage(argv[0]);
  }
  std::printf("onednn %.4f ms %.1f GFLOPS\n", ms, flops / (ms * 1e6));
  return 0;
}
