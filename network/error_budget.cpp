#include "network/error_budget.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>

#include "compiler/base/error.h"
#include "kiln/model.h"
#include "network/artifact.h"
#include "runtime/process/temp_dir.h"

namespace kiln::network {

namespace {

std::vector<double> as_doubles(const graph::HostTensor& t) {
  if (t.dtype().is_float()) return t.to_f64();
  std::vector<int64_t> ints = t.to_i64();
  return {ints.begin(), ints.end()};
}

std::string str(double e) {
  std::ostringstream s;
  s << std::setprecision(3) << e;
  return s.str();
}

// `chosen` with the layers of `fast` from `first` on in their precise form.
PrecisionOptions with_precise(PrecisionOptions p, const std::vector<FastLayer>& fast, size_t first,
                              double max_error) {
  const std::string why = std::string(kKeptPreciseByBudget) + " " + str(max_error);
  for (size_t i = first; i < fast.size(); ++i) {
    if (fast[i].int8)
      p.int8.measured[fast[i].node] = why;
    else
      p.half_measured_f32[fast[i].node] = why;
  }
  return p;
}

}  // namespace

std::vector<std::vector<double>> run_program_here(
    const NetworkProgram& program, const Target& target,
    const std::vector<std::map<std::string, graph::HostTensor>>& inputs) {
  user_check(host_can_run(target)) << "--max-error runs the model on this machine, which cannot "
                                      "run target "
                                   << target.name;
  TempDir scratch("kiln-error");
  const std::string dir = scratch.file("model");
  write_artifact(program, target, "model", "{}", dir);
  Model model = Model::load(dir + "/model.so", dir + "/model.params");
  std::vector<std::vector<double>> outputs(program.output_names.size());
  for (const auto& sample : inputs) {
    std::vector<const void*> in;
    for (size_t i = 0; i < program.input_names.size(); ++i) {
      const std::string& name = program.input_names[i];
      auto it = sample.find(name);
      user_check(it != sample.end()) << "--max-error: the inputs hold no '" << name << "'";
      user_check(it->second.dtype() == program.input_dtypes[i] &&
                 it->second.nbytes() == model.inputs()[i].bytes)
          << "--max-error: input '" << name << "' is " << it->second.dtype().str() << " of "
          << it->second.nbytes() << " bytes; the model takes " << program.input_dtypes[i].str()
          << " of " << model.inputs()[i].bytes << " bytes";
      in.push_back(it->second.raw());
    }
    std::vector<graph::HostTensor> out;
    std::vector<void*> out_ptrs;
    for (size_t i = 0; i < program.output_names.size(); ++i) {
      out.emplace_back(program.output_dtypes[i], program.output_shapes[i]);
      out_ptrs.push_back(out.back().raw());
    }
    model.run(in, out_ptrs);
    for (size_t i = 0; i < out.size(); ++i) {
      std::vector<double> v = as_doubles(out[i]);
      outputs[i].insert(outputs[i].end(), v.begin(), v.end());
    }
  }
  return outputs;
}

double relative_rms_error(const std::vector<std::vector<double>>& got,
                          const std::vector<std::vector<double>>& want) {
  internal_check(got.size() == want.size()) << "relative_rms_error: output counts differ";
  double worst = 0;
  for (size_t o = 0; o < got.size(); ++o) {
    internal_check(got[o].size() == want[o].size()) << "relative_rms_error: sizes differ";
    double diff = 0, norm = 0;
    for (size_t i = 0; i < got[o].size(); ++i) {
      diff += (got[o][i] - want[o][i]) * (got[o][i] - want[o][i]);
      norm += want[o][i] * want[o][i];
    }
    // NaN in either makes the error infinite, never "within the budget".
    if (std::isnan(diff) || std::isnan(norm)) return std::numeric_limits<double>::infinity();
    if (diff == 0) continue;
    worst = std::max(worst,
                     norm == 0 ? std::numeric_limits<double>::infinity() : std::sqrt(diff / norm));
  }
  return worst;
}

ErrorBudgetFit fit_error_budget(const ErrorBudget& budget, const Target& target,
                                const PrecisionOptions& chosen, std::vector<FastLayer> fast,
                                const ProgramFor& program_for, PrecisionOptions& fitted,
                                std::ostream* progress) {
  user_check(!budget.inputs.empty()) << "--max-error needs inputs to measure the error on";
  ErrorBudgetFit fit;
  fit.max_error = budget.max_error;
  fit.inputs = budget.inputs.size();
  fitted = chosen;
  if (fast.empty()) return fit;  // nothing to choose: no program runs
  // Largest saving first; ties (and the untimed) keep the graph's order.
  std::stable_sort(fast.begin(), fast.end(),
                   [](const FastLayer& a, const FastLayer& b) { return a.saves_s > b.saves_s; });
  PrecisionOptions precise = chosen;
  precise.dtype = ir::DataType::f32();
  precise.int8 = {Int8Paths::Force::Float, {}};
  const auto reference = run_program_here(program_for(precise).program, target, budget.inputs);
  fit.runs = 1;
  // The error with the first `kept` layers of the ranking fast, measured once each, and which
  // layers that program runs fast.
  std::map<size_t, double>& errors = fit.errors;
  std::map<size_t, std::set<std::string>> fast_in;
  auto error_keeping = [&](size_t kept) {
    if (auto it = errors.find(kept); it != errors.end()) return it->second;
    FastProgram built = program_for(with_precise(chosen, fast, kept, budget.max_error));
    const double e =
        relative_rms_error(run_program_here(built.program, target, budget.inputs), reference);
    ++fit.runs;
    if (progress)
      *progress << "--max-error " << str(budget.max_error) << ": " << built.fast.size() << " of "
                << fast.size() << " layers fast, error " << str(e) << "\n"
                << std::flush;
    fast_in[kept] = std::move(built.fast);
    return errors[kept] = e;
  };
  size_t kept = fast.size();
  fit.error_all_fast = error_keeping(fast.size());
  if (fit.error_all_fast > budget.max_error) {
    // error(lo) within the budget (0 layers fast: the precise program itself), error(hi) not.
    // (The precise program has no error by definition: it is not run twice.)
    size_t lo = 0, hi = fast.size();
    errors[0] = 0;
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      (error_keeping(mid) <= budget.max_error ? lo : hi) = mid;
    }
    kept = lo;
  }
  fit.error = errors.at(kept);
  for (const FastLayer& l : fast)
    (fast_in[kept].count(l.node) ? fit.kept_fast : fit.moved).push_back(l.node);
  fitted = with_precise(chosen, fast, kept, budget.max_error);
  return fit;
}

std::string describe(const ErrorBudgetFit& fit) {
  std::ostringstream s;
  const size_t n = fit.kept_fast.size() + fit.moved.size();
  s << "--max-error " << str(fit.max_error) << " (relative RMS of each output against the "
    << "precise model, on " << fit.inputs << " inputs): ";
  if (n == 0) return s.str() + "no layer runs in a fast form, nothing to fit";
  s << fit.kept_fast.size() << " of " << n << " layers kept in their fast form, error "
    << str(fit.error);
  if (!fit.moved.empty())
    s << "; " << fit.moved.size() << " moved to the precise form (all fast: error "
      << str(fit.error_all_fast) << ")";
  s << "; " << fit.runs << " programs run";
  return s.str();
}

}  // namespace kiln::network
