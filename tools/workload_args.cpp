#include "tools/workload_args.h"

#include <map>
#include <sstream>

#include "compiler/base/error.h"
#include "schedules/registry.h"
#include "schedules/shape_form.h"

namespace kiln::tools {
namespace {

std::vector<int64_t> parse_list(const std::string& text, const std::string& what) {
  user_check(!text.empty() && text.back() != ',' && text.front() != ',')
      << what << ": '" << text << "' is not a comma-separated list of integers";
  std::vector<int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      out.push_back(std::stoll(item, &used));
      user_check(used == item.size()) << what << ": '" << item << "' is not an integer";
    } catch (const std::logic_error&) {
      user_error() << what << ": '" << item << "' is not an integer (or out of range)";
    }
  }
  return out;
}

// The parameters an attribute flag sets for `op`: pooling has a stride and a padding per
// axis. Empty when the op takes no such attribute.
std::vector<std::string> attribute_params(const std::string& op, const std::string& flag) {
  static const std::map<std::string, std::map<std::string, std::vector<std::string>>> k = {
      {"conv2d",
       {{"--stride", {"stride"}}, {"--pad", {"pad"}}, {"--groups", {"groups"}},
        {"--dilation", {"dilation"}}}},
      {"max_pool2d", {{"--stride", {"SH", "SW"}}, {"--pad", {"PH", "PW"}}}},
      {"avg_pool2d", {{"--stride", {"SH", "SW"}}, {"--pad", {"PH", "PW"}}}},
  };
  auto op_it = k.find(op);
  if (op_it == k.end()) return {};
  auto it = op_it->second.find(flag);
  return it == op_it->second.end() ? std::vector<std::string>{} : it->second;
}

}  // namespace

void add_workload_options(CLI::App& cmd, WorkloadArgs& a) {
  cmd.add_option("--op", a.op, "Operator (dense, conv2d, ...)")->required();
  cmd.add_option("--shape", a.shape,
                 "Shape in the op's natural form: dense M,N,K; conv2d N,C,H,W,O,KH,KW");
  cmd.add_option("--param", a.params, "Extra shape parameter NAME=VALUE (repeatable)");
  cmd.add_option("--stride", a.stride, "conv2d/pool stride (>= 1)");
  cmd.add_option("--pad", a.pad, "conv2d/pool padding (>= 0)");
  cmd.add_option("--groups", a.groups, "conv2d groups (>= 1)");
  cmd.add_option("--dilation", a.dilation, "conv2d dilation (>= 1)");
  // Split here rather than by CLI11, which drops an empty last item ("bias,").
  cmd.add_option("--epilogue", a.epilogue,
                 "Fused epilogue steps, comma-separated (bias, relu, relu6, residual, ...)");
  cmd.add_option("--dtype", a.dtype, "f32, f16 or bf16")->capture_default_str();
  cmd.add_option("--run-time", a.run_time,
                 "Sizes the kernel takes at run time, comma-separated, each NAME or NAME:MAX "
                 "(dense: M; softmax: M,N:512); their --shape or --param values are the sizes "
                 "its config is chosen for and run at");
}

schedules::Workload make_workload(const WorkloadArgs& a) {
  schedules::Workload w;
  w.op = a.op;
  w.dtype = ir::parse_data_type(a.dtype);
  for (const std::string& list : a.epilogue) {
    std::stringstream ss(list + ",");  // the comma makes a trailing empty step visible
    for (std::string step; std::getline(ss, step, ',');) {
      user_check(!step.empty()) << "--epilogue '" << list << "': an empty step (a stray comma?)";
      user_check(!w.has_epilogue(step)) << "--epilogue: '" << step << "' is given twice";
      w.epilogue.push_back(step);
    }
  }
  if (!a.shape.empty()) {
    std::vector<std::string> names = schedules::shape_form(a.op);
    user_check(!names.empty()) << "op '" << a.op << "' has no --shape form; use --param NAME=VALUE";
    std::vector<int64_t> dims = parse_list(a.shape, "--shape");
    std::string form;
    for (const std::string& n : names) form += (form.empty() ? "" : ",") + n;
    user_check(dims.size() == names.size())
        << "--shape for " << a.op << " takes " << names.size() << " numbers (" << form << "), got "
        << dims.size();
    for (size_t i = 0; i < dims.size(); ++i) {
      user_check(dims[i] > 0) << "--shape: " << names[i] << " = " << dims[i] << " must be positive";
      w.params[names[i]] = dims[i];
    }
  }
  auto attribute = [&](const char* flag, const std::optional<int64_t>& v, int64_t min) {
    if (!v) return;
    user_check(*v >= min) << flag << " " << *v << " is out of range (at least " << min << ")";
    const std::vector<std::string> names = attribute_params(a.op, flag);
    user_check(!names.empty()) << flag << " does not apply to " << a.op
                               << " (conv2d takes --stride, --pad, --groups, --dilation; "
                                  "max_pool2d and avg_pool2d --stride, --pad)";
    for (const std::string& n : names) w.params[n] = *v;
  };
  attribute("--stride", a.stride, 1);
  attribute("--pad", a.pad, 0);
  attribute("--groups", a.groups, 1);
  attribute("--dilation", a.dilation, 1);
  for (const std::string& p : a.params) {
    auto eq = p.find('=');
    user_check(eq != std::string::npos && eq > 0) << "--param '" << p << "' is not NAME=VALUE";
    const std::string name = p.substr(0, eq);
    std::vector<int64_t> v = parse_list(p.substr(eq + 1), "--param " + name);
    user_check(v.size() == 1) << "--param " << name << " takes one integer";
    user_check(!w.params.count(name))
        << "--param " << name << " is already set (by --shape or another flag)";
    w.params[name] = v[0];
  }
  for (const std::string& list : a.run_time) {
    std::stringstream ss(list + ",");
    for (std::string item; std::getline(ss, item, ',');) {
      const size_t colon = item.find(':');
      const std::string name = item.substr(0, colon);
      user_check(w.params.count(name))
          << "--run-time " << name << ": " << a.op << " has no size named " << name;
      user_check(!w.at_run_time(name)) << "--run-time: '" << name << "' is given twice";
      w.run_time.push_back(name);
      if (colon == std::string::npos) continue;
      std::vector<int64_t> max = parse_list(item.substr(colon + 1), "--run-time " + name);
      user_check(max.size() == 1 && max[0] > 0)
          << "--run-time " << item << ": the maximum must be one positive integer";
      w.run_time_max[name] = max[0];
    }
  }
  return w;
}

const schedules::OpTemplate& pick_template(const schedules::Workload& w, const Target& target,
                                           const std::string& name) {
  const schedules::OpTemplate* tpl = nullptr;
  if (name.empty()) {
    std::vector<const schedules::OpTemplate*> all = schedules::templates_for(w, target);
    user_check(!all.empty()) << "no template implements " << w.str() << " on " << target.name;
    tpl = all.front();
  } else {
    tpl = &schedules::template_named(name);
    user_check(tpl->op() == w.op) << "template '" << tpl->name() << "' implements " << tpl->op()
                                  << ", not " << w.op;
  }
  // Before anything asks it for a fallback or a space: sizes in range, products in int64.
  tpl->validate(w, target);
  return *tpl;
}

}  // namespace kiln::tools
