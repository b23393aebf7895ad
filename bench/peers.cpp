#include "bench/peers.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <unordered_map>
#include <vector>

#include "kiln/timing.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace kiln::bench {

namespace {

bool best_of = false;  // set_peer_best_of

double timed_ms(const std::function<void()>& run, int repeat) {
  TimingOptions o;
  o.warmup = 1;
  o.repeat = repeat;
  const Timing t = time_calls(run, o);
  return best_of ? t.best_ms() : t.median_ms();
}

std::vector<float> random_floats(size_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

using dnnl::memory;

// A memory in the primitive's preferred layout, filled from plain data through a reorder.
memory prepared(const memory::desc& want, const memory::desc& plain, dnnl::engine& eng,
                dnnl::stream& s, std::vector<float>& data) {
  memory src(plain, eng, data.data());
  if (want == plain) return src;
  memory dst(want, eng);
  dnnl::reorder(src, dst).execute(s, src, dst);
  s.wait();
  return dst;
}

}  // namespace

void set_peer_best_of(bool best) {
  best_of = best;
}

void set_peer_threads(int threads) {
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

namespace {

// The types of one oneDNN run: data, weights, output. int8 runs as a quantized network's
// layers do: u8 data, s8 weights, u8 output through per-output-channel scales.
struct DnnTypes {
  dnnl::memory::data_type src, wei, dst;
  bool int8() const { return wei == dnnl::memory::data_type::s8; }
};

DnnTypes dnn_types(PeerPrecision p, dnnl::memory::data_type float_dst) {
  using dt = dnnl::memory::data_type;
  switch (p) {
    case PeerPrecision::bf16: return {dt::bf16, dt::bf16, float_dst};
    case PeerPrecision::int8: return {dt::u8, dt::s8, dt::u8};
    default: return {dt::f32, dt::f32, dt::f32};
  }
}

// Per-channel output scales (mask: the channel dimension) of an int8 run: small, so most
// outputs are neither 0 nor saturated.
dnnl::primitive_attr output_scales(const DnnTypes& t, int mask, int64_t channels) {
  dnnl::primitive_attr attr;
  if (t.int8()) attr.set_output_scales(mask, std::vector<float>(static_cast<size_t>(channels), 1e-3f));
  return attr;
}

}  // namespace

double onednn_matmul_ms(int64_t m, int64_t n, int64_t k, PeerPrecision prec, int repeat) {
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  const DnnTypes t = dnn_types(prec, memory::data_type::f32);
  auto a_md = memory::desc({m, k}, t.src, memory::format_tag::ab);
  auto b_any = memory::desc({k, n}, t.wei, memory::format_tag::any);
  auto c_md = memory::desc({m, n}, t.dst, memory::format_tag::ab);
  auto pd = matmul::primitive_desc(matmul::desc(a_md, b_any, c_md), output_scales(t, 2, n), eng);
  auto a = random_floats(m * k), b = random_floats(k * n);
  for (float& x : a) x = t.int8() ? (x + 1) * 100 : x;  // u8 data across its range
  for (float& x : b) x = t.int8() ? x * 100 : x;
  memory A = prepared(a_md, memory::desc({m, k}, memory::data_type::f32, memory::format_tag::ab), eng, s, a);
  memory B = prepared(pd.weights_desc(), memory::desc({k, n}, memory::data_type::f32, memory::format_tag::ab), eng, s, b);
  memory C(c_md, eng);
  matmul prim(pd);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, A}, {DNNL_ARG_WEIGHTS, B}, {DNNL_ARG_DST, C}};
  return timed_ms([&] { prim.execute(s, args); s.wait(); }, repeat);
}

double onednn_conv_ms(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int64_t kh, int64_t kw,
                      int64_t stride, int64_t pad, int64_t groups, int repeat, bool winograd,
                      PeerPrecision prec) {
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  int64_t oh = (h + 2 * pad - kh) / stride + 1, ow = (w + 2 * pad - kw) / stride + 1;
  auto f32 = memory::data_type::f32;
  const DnnTypes t = dnn_types(prec, memory::data_type::bf16);
  memory::dims src_d{n, c, h, w}, dst_d{n, o, oh, ow};
  memory::dims wei_d = groups > 1 ? memory::dims{groups, o / groups, c / groups, kh, kw}
                                  : memory::dims{o, c, kh, kw};
  auto wei_plain_tag = groups > 1 ? memory::format_tag::goihw : memory::format_tag::oihw;
  auto any = memory::format_tag::any;
  auto alg = winograd ? algorithm::convolution_winograd : algorithm::convolution_direct;
  // The plain f32 values below are reordered (converted) into what the primitive wants.
  auto desc = convolution_forward::desc(prop_kind::forward_inference, alg,
                                        memory::desc(src_d, t.src, any), memory::desc(wei_d, t.wei, any),
                                        memory::desc(dst_d, t.dst, any), {stride, stride}, {pad, pad},
                                        {pad, pad});
  convolution_forward::primitive_desc pd;
  try {
    pd = convolution_forward::primitive_desc(desc, output_scales(t, 2, o), eng);
  } catch (const dnnl::error&) {
    if (winograd) return -1;  // no Winograd implementation here: the row says so
    throw;
  }
  auto x = random_floats(n * c * h * w), wt = random_floats(o * (c / groups) * kh * kw);
  for (float& v : x) v = t.int8() ? (v + 1) * 100 : v;
  for (float& v : wt) v = t.int8() ? v * 100 : v;
  memory src = prepared(pd.src_desc(), memory::desc(src_d, f32, memory::format_tag::nchw), eng, s, x);
  memory wei = prepared(pd.weights_desc(), memory::desc(wei_d, f32, wei_plain_tag), eng, s, wt);
  memory dst(pd.dst_desc(), eng);
  convolution_forward prim(pd);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
  return timed_ms([&] { prim.execute(s, args); s.wait(); }, repeat);
}

double openblas_sgemm_ms(int64_t m, int64_t n, int64_t k, int repeat) {
  auto a = random_floats(m * k), b = random_floats(k * n);
  std::vector<float> c(m * n);
  return timed_ms(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(),
                    n, 0.0f, c.data(), n);
      },
      repeat);
}

double memcpy_ms(int64_t bytes, int repeat) {
  std::vector<char> src(static_cast<size_t>(bytes), 1), dst(static_cast<size_t>(bytes));
  return timed_ms(
      [&] {
        const int parts = omp_get_max_threads();
#pragma omp parallel for num_threads(parts)
        for (int p = 0; p < parts; ++p) {
          const int64_t begin = bytes * p / parts, end = bytes * (p + 1) / parts;
          std::memcpy(dst.data() + begin, src.data() + begin, static_cast<size_t>(end - begin));
        }
      },
      repeat);
}

double onednn_transpose_ms(const std::vector<int64_t>& in, const std::vector<int64_t>& perm,
                           int repeat) {
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  const size_t n = in.size();
  memory::dims in_strides(n, 1), out_dims(n), src_strides(n);
  for (size_t i = n - 1; i > 0; --i) in_strides[i - 1] = in_strides[i] * in[i];
  for (size_t i = 0; i < n; ++i) {
    out_dims[i] = in[perm[i]];
    src_strides[i] = in_strides[perm[i]];  // the input seen in the output's index order
  }
  int64_t elements = 1;
  for (int64_t d : in) elements *= d;
  auto x = random_floats(static_cast<size_t>(elements));
  memory src(memory::desc(out_dims, memory::data_type::f32, src_strides), eng, x.data());
  memory::dims plain(n, 1);
  for (size_t i = n - 1; i > 0; --i) plain[i - 1] = plain[i] * out_dims[i];
  memory dst(memory::desc(out_dims, memory::data_type::f32, plain), eng);
  reorder prim(src, dst);
  return timed_ms([&] { prim.execute(s, src, dst); s.wait(); }, repeat);
}

}  // namespace kiln::bench
