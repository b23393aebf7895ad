#include "tools/workload_args.h"

#include <sstream>

#include "compiler/base/error.h"
#include "schedules/registry.h"

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
  cmd.add_option("--epilogue", a.epilogue, "Fused epilogue steps (bias, relu, relu6, residual, ...)")
      ->delimiter(',');
  cmd.add_option("--dtype", a.dtype, "f32, f16 or bf16")->capture_default_str();
}

schedules::Workload make_workload(const WorkloadArgs& a) {
  schedules::Workload w;
  w.op = a.op;
  w.dtype = ir::parse_data_type(a.dtype);
  for (size_t i = 0; i < a.epilogue.size(); ++i) {
    user_check(!a.epilogue[i].empty()) << "--epilogue: an empty step (a stray comma?)";
    for (size_t j = 0; j < i; ++j)
      user_check(a.epilogue[i] != a.epilogue[j])
          << "--epilogue: '" << a.epilogue[i] << "' is given twice";
  }
  w.epilogue = a.epilogue;
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
  auto attribute = [&](const char* flag, const char* name, int64_t v, int64_t unset, int64_t min) {
    if (v == unset) return;
    user_check(v >= min) << flag << " " << v << " is out of range (at least " << min << ")";
    w.params[name] = v;
  };
  attribute("--stride", "stride", a.stride, 0, 1);
  attribute("--pad", "pad", a.pad, -1, 0);
  attribute("--groups", "groups", a.groups, 0, 1);
  attribute("--dilation", "dilation", a.dilation, 0, 1);
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
  return w;
}

const schedules::OpTemplate& pick_template(const schedules::Workload& w, const Target& target,
                                           const std::string& name) {
  if (name.empty()) {
    std::vector<const schedules::OpTemplate*> all = schedules::templates_for(w, target);
    user_check(!all.empty()) << "no template implements " << w.str() << " on " << target.name;
    return *all.front();
  }
  const schedules::OpTemplate& tpl = schedules::template_named(name);
  user_check(tpl.op() == w.op) << "template '" << tpl.name() << "' implements " << tpl.op()
                               << ", not " << w.op;
  return tpl;
}

}  // namespace kiln::tools
