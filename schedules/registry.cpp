#include "schedules/registry.h"

#include <map>

#include "ir/error.h"
#include "schedules/dense.h"

namespace kiln::schedules {

const std::vector<const OpTemplate*>& all_templates() {
  static const std::vector<const OpTemplate*> k = {
      &dense_packed_template(),
  };
  return k;
}

std::vector<const OpTemplate*> templates_for(const Workload& w, const codegen::Target& t) {
  std::vector<const OpTemplate*> out;
  for (const OpTemplate* tpl : all_templates())
    if (tpl->op() == w.op && tpl->applies(w, t)) out.push_back(tpl);
  user_check(!out.empty()) << "no schedule template implements " << w.str() << " for target "
                           << t.name;
  return out;
}

std::vector<std::string> shape_form(const std::string& op) {
  static const std::map<std::string, std::vector<std::string>> k = {
      {"dense", {"M", "N", "K"}},
      {"conv2d", {"N", "C", "H", "W", "O", "KH", "KW"}},
  };
  auto it = k.find(op);
  return it == k.end() ? std::vector<std::string>{} : it->second;
}

const OpTemplate& template_named(const std::string& name) {
  std::string names;
  for (const OpTemplate* t : all_templates()) {
    if (t->name() == name) return *t;
    names += (names.empty() ? "" : ", ") + t->name();
  }
  user_error() << "unknown schedule template '" << name << "' (known: " << names << ")";
  return *all_templates().front();
}

}  // namespace kiln::schedules
