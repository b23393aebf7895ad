// libFuzzer target for a measurement job's payload as the tuner decodes it: a config (JSON
// text, schedules::Config::from_json) checked against a template's config space, and tensor
// bytes (a result's output, its reference) decoded in f32, f16 or bf16 and judged by the one
// comparison rule, both as the tuner does it (tuner/host_values.h) and as a farm worker does
// (rpc/farm/data.h compare_outputs). Beyond "never crash, never throw anything but UserError":
// a config's JSON round-trips, the space's validate/contains/index_of agree, decoding then
// encoding gives the bytes back, and the tuner's and the worker's comparisons agree.
//
// Input: byte 0 picks the element type, byte 1 the tolerance; then the config text up to the
// first NUL byte; what follows splits in two halves: the output bytes and the reference bytes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "compiler/base/error.h"
#include "rpc/farm/data.h"
#include "schedules/config.h"
#include "tuner/host_values.h"

namespace {

using kiln::ir::DataType;
using kiln::tuner::Bytes;

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "farm_payload_fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// A template's space in miniature: plain knobs and a split, as dense.packed declares them.
const kiln::schedules::ConfigSpace& space() {
  static const kiln::schedules::ConfigSpace s = [] {
    kiln::schedules::ConfigSpace sp;
    sp.define_knob("mr", {1, 2, 4, 8});
    sp.define_knob("nr", {8, 16, 32});
    sp.define_split("kc", 96, 64);
    sp.define_knob("unroll", {0, 1});
    return sp;
  }();
  return s;
}

void check_config(const std::string& text) {
  kiln::schedules::Config config;
  try {
    config = kiln::schedules::Config::from_json(text);
  } catch (const kiln::UserError&) {
    return;  // a clear rejection is the right answer to bad text
  }
  if (!(kiln::schedules::Config::from_json(config.to_json()) == config))
    fail("config round trip differs", config.to_json());
  bool valid = true;
  try {
    space().validate(config);
  } catch (const kiln::UserError&) {
    valid = false;
  }
  if (valid != space().contains(config)) fail("validate and contains disagree", config.to_json());
  if (valid && !(space().at(space().index_of(config)) == config))
    fail("index_of does not invert at", config.to_json());
}

kiln::farm::pb::DType wire(DataType t) {
  if (t == DataType::f16()) return kiln::farm::pb::F16;
  if (t == DataType::bf16()) return kiln::farm::pb::BF16;
  return kiln::farm::pb::F32;
}

void check_tensors(DataType t, double rtol, const Bytes& got, const Bytes& want) {
  const kiln::tuner::Values g = kiln::tuner::decode(got, t);
  const kiln::tuner::Values w = kiln::tuner::decode(want, t);
  if (g.size() != got.size() / static_cast<std::size_t>(t.bytes()))
    fail("decode gave the wrong number of values", t.str());
  // Every element that is not a NaN encodes back to its own bytes (NaN payloads may change).
  const Bytes again = kiln::tuner::encode(g, t);
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(g[i])) continue;
    const std::size_t at = i * static_cast<std::size_t>(t.bytes());
    if (std::memcmp(&again[at], &got[at], static_cast<std::size_t>(t.bytes())) != 0)
      fail("decode then encode changed an element", t.str() + " element " + std::to_string(i));
  }
  if (!kiln::tuner::compare(g, g, rtol).close) fail("a tensor differs from itself", t.str());
  // The tuner's judgement and the worker's must agree on whole tensors of the same size.
  if (got.size() != want.size() || got.size() % static_cast<std::size_t>(t.bytes()) != 0) return;
  const bool tuner_close = kiln::tuner::compare(g, w, rtol).close;
  const std::string why = kiln::farm::compare_outputs(
      wire(t), got, std::string(want.begin(), want.end()), rtol);
  if (tuner_close != why.empty())
    fail("the tuner's and the worker's comparisons disagree",
         t.str() + " rtol " + std::to_string(rtol) + ": worker says '" + why + "'");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  static const DataType types[] = {DataType::f32(), DataType::f16(), DataType::bf16()};
  static const double tolerances[] = {1e-4, 1e-2, 2e-2, 0, 1};
  const DataType t = types[data[0] % 3];
  const double rtol = tolerances[data[1] % 5];
  const std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  const std::size_t nul = std::min(rest.find('\0'), rest.size());
  check_config(std::string(rest.substr(0, nul)));
  const std::string_view tensors = nul < rest.size() ? rest.substr(nul + 1) : std::string_view();
  const std::size_t half = tensors.size() / 2;
  const auto* bytes = reinterpret_cast<const uint8_t*>(tensors.data());
  check_tensors(t, rtol, Bytes(bytes, bytes + half), Bytes(bytes + half, bytes + tensors.size()));
  return 0;
}
