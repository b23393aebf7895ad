// Deterministic argument fill and tolerant output comparison for farm jobs.
#include "rpc/farm/data.h"

#include <cmath>
#include <cstring>

#include "kiln/compare.h"
#include "kiln/half.h"
#include "kiln/uniform_stream.h"

namespace kiln::farm {
namespace {

double load_value(pb::DType dtype, const uint8_t* p) {
  switch (dtype) {
    case pb::F32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case pb::F64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case pb::F16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return f16_to_f32(v);
    }
    case pb::BF16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return bf16_to_f32(v);
    }
    case pb::I8:
      return static_cast<int8_t>(*p);
    case pb::U8:
      return *p;
    case pb::I16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case pb::I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case pb::I64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    default:
      return 0;
  }
}

bool is_float(pb::DType dtype) {
  return dtype == pb::F32 || dtype == pb::F64 || dtype == pb::F16 || dtype == pb::BF16;
}

}  // namespace

std::size_t dtype_size(pb::DType dtype) {
  switch (dtype) {
    case pb::F64:
    case pb::I64:
      return 8;
    case pb::F32:
    case pb::I32:
      return 4;
    case pb::F16:
    case pb::BF16:
    case pb::I16:
      return 2;
    case pb::I8:
    case pb::U8:
      return 1;
    default:
      return 0;
  }
}

std::string dtype_name(pb::DType dtype) {
  const std::string name = pb::DType_Name(dtype);
  return name.empty() ? "dtype " + std::to_string(static_cast<int>(dtype)) : name;
}

int64_t arg_bytes(const pb::Arg& arg, int64_t limit) {
  int64_t bytes = static_cast<int64_t>(dtype_size(arg.dtype()));
  for (const int64_t d : arg.shape()) {
    if (d < 0) return -1;
    if (d != 0 && bytes > limit / d) return -1;
    bytes *= d;
  }
  return bytes > limit ? -1 : bytes;
}

std::vector<uint8_t> fill_arg(const pb::Arg& arg, uint64_t seed, std::size_t index) {
  if (!arg.data().empty()) return {arg.data().begin(), arg.data().end()};
  const int64_t nbytes = arg_bytes(arg, INT64_MAX);
  const std::size_t esize = dtype_size(arg.dtype());
  std::vector<uint8_t> out(nbytes > 0 ? static_cast<std::size_t>(nbytes) : 0);
  if (esize == 0) return out;
  UniformStream stream(seed * 0x100000001b3ULL ^ (index + 1) * 0x9e3779b97f4a7c15ULL);
  for (std::size_t at = 0; at + esize <= out.size(); at += esize) {
    uint8_t* p = out.data() + at;
    const double u = stream.next();
    switch (arg.dtype()) {
      case pb::F32: {
        const float v = static_cast<float>(u);
        std::memcpy(p, &v, 4);
        break;
      }
      case pb::F64:
        std::memcpy(p, &u, 8);
        break;
      case pb::F16: {
        const uint16_t v = f32_to_f16(static_cast<float>(u));
        std::memcpy(p, &v, 2);
        break;
      }
      case pb::BF16: {
        const uint16_t v = f32_to_bf16(static_cast<float>(u));
        std::memcpy(p, &v, 2);
        break;
      }
      case pb::I8:
        *p = static_cast<uint8_t>(static_cast<int8_t>(std::floor(u * 8)));
        break;
      case pb::U8:
        *p = static_cast<uint8_t>(std::floor((u + 1) * 8));
        break;
      case pb::I16: {
        const int16_t v = static_cast<int16_t>(std::floor(u * 64));
        std::memcpy(p, &v, 2);
        break;
      }
      case pb::I32: {
        const int32_t v = static_cast<int32_t>(std::floor(u * 64));
        std::memcpy(p, &v, 4);
        break;
      }
      case pb::I64: {
        const int64_t v = static_cast<int64_t>(std::floor(u * 64));
        std::memcpy(p, &v, 8);
        break;
      }
      default:
        break;
    }
  }
  return out;
}

std::string compare_outputs(pb::DType dtype, const std::vector<uint8_t>& got,
                            const std::string& want, double rtol) {
  const std::size_t esize = dtype_size(dtype);
  if (esize == 0) return "cannot compare outputs of " + dtype_name(dtype);
  if (got.size() != want.size()) {
    return "output has " + std::to_string(got.size()) + " bytes, the reference " +
           std::to_string(want.size());
  }
  const auto* w = reinterpret_cast<const uint8_t*>(want.data());
  const std::size_t n = got.size() / esize;
  std::size_t bad = 0, first = 0;
  if (is_float(dtype)) {
    // The one rule of kiln/compare.h.
    const Closeness c = judge_closeness(
        n, [&](std::size_t i) { return load_value(dtype, got.data() + i * esize); },
        [&](std::size_t i) { return load_value(dtype, w + i * esize); }, rtol);
    bad = c.mismatches;
    first = c.first;
  } else {
    for (std::size_t i = 0; i < n; ++i)
      if (std::memcmp(got.data() + i * esize, w + i * esize, esize) != 0 && bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  return std::to_string(bad) + " of " + std::to_string(n) + " elements differ; first at element " +
         std::to_string(first) + ": got " + std::to_string(load_value(dtype, got.data() + first * esize)) +
         ", want " + std::to_string(load_value(dtype, w + first * esize));
}

std::string error_kind_name(pb::ErrorKind kind) {
  switch (kind) {
    case pb::OK:
      return "ok";
    case pb::BUILD_ERROR:
      return "build_error";
    case pb::RUNTIME_ERROR:
      return "runtime_error";
    case pb::TIMEOUT:
      return "timeout";
    case pb::WRONG_RESULT:
      return "wrong_result";
    case pb::WORKER_LOST:
      return "worker_lost";
    case pb::CANCELLED:
      return "cancelled";
    case pb::INVALID_JOB:
      return "invalid_job";
    default:
      return "error_" + std::to_string(static_cast<int>(kind));
  }
}

}  // namespace kiln::farm
