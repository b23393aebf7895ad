#include "schedules/validate.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "compiler/base/error.h"
#include "schedules/shape_form.h"

namespace kiln::schedules {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool contains(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// "1.5 GiB": sizes in a message a user reads at a glance (the exact bytes go beside it).
std::string human_bytes(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  return buf;
}

// The workload's parameters equal to `value`, as "N" or "M or N": what a user changes to
// make a dimension of that size smaller (derived sizes such as a conv's output height match
// none, and the message then names only the dimension).
std::string parameters_of_value(const Workload& w, int64_t value) {
  std::vector<std::string> names;
  for (const auto& [k, v] : w.params)
    if (v == Param(value)) names.push_back(k);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out.empty() ? "" : ", parameter " + out;
}

// The element count of `spec`, or a UserError naming where the product leaves int64.
int64_t checked_elements(const Workload& w, const TensorSpec& spec) {
  int64_t n = 1;
  for (size_t d = 0; d < spec.shape.size(); ++d) {
    const int64_t dim = spec.shape[d];
    user_check(dim > 0) << w.str() << ": argument " << spec.name << " " << shape_str(spec.shape)
                        << " has dimension " << d << " = " << dim << "; every one must be positive";
    std::optional<int64_t> next = checked_mul(n, dim);
    user_check(next.has_value())
        << w.str() << ": argument " << spec.name << " " << shape_str(spec.shape)
        << " has more elements than int64 holds (the product overflows at dimension " << d
        << " = " << dim << parameters_of_value(w, dim) << ")";
    n = *next;
  }
  return n;
}

// Bytes per element of every host-side copy bytes_for_run counts beyond the encoded one.
constexpr int64_t kInputCopies = 2;   // logical f32 and packed f32
constexpr int64_t kOutputCopies = 3;  // unpacked f32, decoded f32, reference f32

int64_t checked_sum_of_products(const std::vector<std::pair<int64_t, int64_t>>& terms) {
  int64_t total = 0;
  for (const auto& [a, b] : terms) {
    std::optional<int64_t> p = checked_mul(a, b);
    if (!p || *p > INT64_MAX - total) return INT64_MAX;
    total += *p;
  }
  return total;
}

std::optional<int64_t> read_int_file(const std::string& path) {
  std::ifstream in(path);
  int64_t v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

}  // namespace

std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

void validate_descriptors(const OpTemplate& tpl, const Workload& w) {
  user_check(w.op == tpl.op()) << tpl.name() << " implements '" << tpl.op() << "', not '" << w.op
                               << "'";
  const std::vector<ir::DataType> types = tpl.dtypes();
  std::vector<std::string> type_names;
  for (ir::DataType d : types) type_names.push_back(d.str());
  user_check(std::find(types.begin(), types.end(), w.dtype) != types.end())
      << w.op << ": dtype " << w.dtype.str() << " is not supported (valid: " << joined(type_names)
      << ")";
  const std::vector<std::string> steps = tpl.epilogues();
  for (const std::string& e : w.epilogue)
    user_check(contains(steps, e))
        << w.op << ": unknown epilogue '" << e << "' (valid: " << joined(steps) << ")";
  const std::vector<std::string> values = tpl.value_params();
  for (const auto& [k, param] : w.params) {
    // Reals (bounds, slopes, epsilons, scales) are values, not sizes: their template reads
    // and checks them (an integer where a template reads a real converts exactly).
    if (contains(values, k) || param.is_real()) continue;
    const int64_t v = param.integer(w.op + " shape parameter " + k);
    user_check(v >= 0) << w.str() << ": shape parameter " << k << " = " << v << " is negative";
    user_check(v <= kMaxParameter) << w.str() << ": parameter " << k << " = " << v
                                   << " is out of range (at most 2^40 = " << kMaxParameter << ")";
  }
  const std::vector<std::string> run_time = tpl.run_time_params();
  for (const std::string& d : w.run_time) {
    user_check(contains(run_time, d))
        << w.str() << ": " << tpl.name() << " cannot take " << d << " at run time"
        << (run_time.empty() ? std::string(" (it compiles every size in)")
                             : " (it can take " + joined(run_time) + ")");
    user_check(std::count(w.run_time.begin(), w.run_time.end(), d) == 1)
        << w.str() << ": " << d << " is named twice as a run-time size";
  }
  for (const auto& [d, max] : w.run_time_max) {
    user_check(w.at_run_time(d)) << w.str() << ": a maximum is declared for " << d
                                 << ", which is not a run-time size";
    user_check(max >= w.param(d)) << w.str() << ": " << d << " = " << w.param(d)
                                  << " is above its declared maximum " << max;
  }
  for (const std::string& k : shape_form(w.op)) {
    auto it = w.params.find(k);
    user_check(it == w.params.end() || it->second.real() > 0)
        << w.str() << ": parameter " << k << " = 0 must be positive";
  }
}

void validate_arguments(const OpTemplate& tpl, const Workload& w) {
  std::vector<TensorSpec> specs = tpl.inputs(w);
  specs.push_back(tpl.output(w));
  const int64_t bytes = std::max<int64_t>(w.dtype.bytes(), 4);  // f32 copies on the host
  for (const TensorSpec& s : specs) {
    const int64_t n = checked_elements(w, s);
    user_check(checked_mul(n, bytes).has_value())
        << w.str() << ": argument " << s.name << " " << shape_str(s.shape) << " has " << n
        << " elements, more bytes than int64 holds";
  }
}

int64_t bytes_for_run(const OpTemplate& tpl, const Workload& w) {
  const int64_t encoded = w.dtype.bytes();
  std::vector<std::pair<int64_t, int64_t>> terms;
  for (const TensorSpec& s : tpl.inputs(w))
    terms.push_back({checked_elements(w, s), 4 * kInputCopies + encoded});
  // An f32 output of half inputs (out_f32) is wider than the inputs' encoding.
  terms.push_back({checked_elements(w, tpl.output(w)), 4 * kOutputCopies + 4});
  return checked_sum_of_products(terms);
}

std::optional<int64_t> available_memory_bytes() {
  std::optional<int64_t> available;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    long long kib = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %lld kB", &kib) == 1) available = kib * 1024;
  }
  // A container's cgroup may allow far less than the machine has free ("max": no limit).
  std::optional<int64_t> limit = read_int_file("/sys/fs/cgroup/memory.max");
  std::optional<int64_t> used = read_int_file("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    const int64_t room = std::max<int64_t>(*limit - *used, 0);
    available = available ? std::min(*available, room) : room;
  }
  return available;
}

void check_memory_for_run(const OpTemplate& tpl, const Workload& w,
                          std::optional<int64_t> bytes_available) {
  if (!bytes_available) return;
  const int64_t needed = bytes_for_run(tpl, w);
  std::vector<TensorSpec> specs = tpl.inputs(w);
  specs.push_back(tpl.output(w));
  std::string shapes;
  for (const TensorSpec& s : specs)
    shapes += (shapes.empty() ? "" : ", ") + s.name + " " + shape_str(s.shape);
  user_check(needed <= *bytes_available)
      << w.str() << ": a run needs " << needed << " bytes (" << human_bytes(needed)
      << ") for its arguments " << shapes << ", but only " << *bytes_available << " bytes ("
      << human_bytes(*bytes_available) << ") are available";
}

}  // namespace kiln::schedules
