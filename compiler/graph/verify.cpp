#include "compiler/graph/verify.h"

#include <unordered_set>

namespace kiln::graph {

void verify_graph(const Graph& graph, const std::string& after, bool types_inferred) {
  std::unordered_set<std::string> defined;
  auto define = [&](const std::string& name, const char* what) {
    internal_check(!name.empty()) << "after " << after << ": a " << what << " has no name";
    internal_check(defined.insert(name).second)
        << "after " << after << ": value '" << name << "' is defined more than once";
  };
  for (const std::string& in : graph.inputs) define(in, "graph input");
  for (const auto& [name, _] : graph.initializers) define(name, "initializer");
  auto check_type = [&](const std::string& name) {
    if (!types_inferred) return;
    std::optional<ValueType> t = graph.type_of(name);
    internal_check(t && t->is_concrete())
        << "after " << after << ": value '" << name << "' has no concrete type";
  };
  for (const Node& node : graph.nodes) {
    auto use = [&](const std::string& in) {
      if (in.empty()) return;
      internal_check(defined.count(in)) << "after " << after << ": " << graph.describe(node)
                                        << " reads '" << in << "' before it is defined";
    };
    for (const std::string& in : node.inputs) use(in);
    for (const Node& e : node.epilogue)
      for (const std::string& in : e.inputs) use(in);
    for (const std::string& out : node.outputs) {
      if (out.empty()) continue;
      define(out, "node output");
      check_type(out);
    }
  }
  for (const std::string& out : graph.outputs) {
    internal_check(defined.count(out))
        << "after " << after << ": graph output '" << out << "' is not defined";
    check_type(out);
  }
}

}  // namespace kiln::graph
