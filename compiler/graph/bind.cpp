#include "compiler/graph/bind.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>
#include <sstream>

namespace kiln::graph {

namespace {

std::set<std::string> input_symbols(const Graph& graph) {
  std::set<std::string> symbols;
  for (const std::string& in : graph.inputs) {
    const ValueType& t = graph.types.at(in);
    if (!t.shape) continue;
    for (const Dim& d : *t.shape)
      if (!d.known() && !d.symbol.empty()) symbols.insert(d.symbol);
  }
  return symbols;
}

std::string list(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

}  // namespace

void declare_input_symbols(Graph& graph, const ShapeBindings& bindings) {
  for (const auto& [key, spec] : bindings) {
    if (spec.symbols.empty()) continue;
    auto is_input = std::find(graph.inputs.begin(), graph.inputs.end(), key) != graph.inputs.end();
    user_check(is_input) << "input shape '" << key << "=" << spec.str() << "' names symbols, so '"
                         << key << "' must be a graph input (inputs: " << list(graph.inputs) << ")";
    ValueType& t = graph.types.at(key);
    if (!t.shape) t.shape = std::vector<Dim>(spec.size(), Dim{});
    user_check(t.shape->size() == spec.size())
        << "input '" << key << "' has rank " << t.shape->size() << " " << shape_str(*t.shape)
        << ", but the binding gives " << spec.size() << " dimensions " << spec.str();
    for (size_t i = 0; i < spec.size(); ++i) {
      if (!spec.is_symbol(i)) continue;
      const Dim before = (*t.shape)[i];
      if (!before.known() && !before.symbol.empty() && before.symbol != spec.symbols[i])
        for (const std::string& in : graph.inputs) {
          ValueType& other = graph.types.at(in);
          if (!other.shape) continue;
          for (Dim& d : *other.shape)
            if (!d.known() && d.symbol == before.symbol) d.symbol = spec.symbols[i];
        }
      (*t.shape)[i] = Dim::symbolic(spec.symbols[i]);
    }
  }
}

namespace {

// Input bindings fix the symbols their dimensions carry: `x=2,3` where x is [batch, 3] says
// batch = 2. Refuses two bindings that give one symbol different sizes (two inputs, or an
// input and the symbol itself), which applying them in turn would settle silently.
void check_symbols_agree(const Graph& graph, const ShapeBindings& bindings) {
  std::map<std::string, std::pair<int64_t, std::string>> sizes;  // symbol -> size, from where
  for (const auto& [key, dims] : bindings) {
    auto in = std::find(graph.inputs.begin(), graph.inputs.end(), key);
    if (in != graph.inputs.end() || dims.size() != 1) continue;
    sizes[key] = {dims[0], "--input-shape " + key + "=" + std::to_string(dims[0])};
  }
  for (const auto& [key, dims] : bindings) {
    if (std::find(graph.inputs.begin(), graph.inputs.end(), key) == graph.inputs.end()) continue;
    const ValueType& t = graph.types.at(key);
    if (!t.shape || t.shape->size() != dims.size()) continue;
    for (size_t i = 0; i < dims.size(); ++i) {
      const Dim& d = (*t.shape)[i];
      if (d.known() || d.symbol.empty() || dims.is_symbol(i)) continue;
      const std::string here = "input '" + key + "' dimension " + std::to_string(i);
      auto [it, fresh] = sizes.emplace(d.symbol, std::make_pair(dims[i], here));
      user_check(fresh || it->second.first == dims[i])
          << "contradicting input shapes: symbolic dimension '" << d.symbol << "' is "
          << it->second.first << " by " << it->second.second << " but " << dims[i] << " by "
          << here;
    }
  }
}

}  // namespace

void bind_input_shapes(Graph& graph, const ShapeBindings& bindings) {
  declare_input_symbols(graph, bindings);
  const std::set<std::string> symbols = input_symbols(graph);
  check_symbols_agree(graph, bindings);
  for (const auto& [key, dims] : bindings) {
    for (size_t i = 0; i < dims.size(); ++i)
      user_check(dims[i] >= 0 || dims.is_symbol(i))
          << "input shape binding " << key << "=" << dims.str() << " has a negative size";
    auto is_input = std::find(graph.inputs.begin(), graph.inputs.end(), key) != graph.inputs.end();
    if (is_input) {
      ValueType& t = graph.types.at(key);
      if (t.shape) {
        user_check(t.shape->size() == dims.size())
            << "input '" << key << "' has rank " << t.shape->size() << " " << shape_str(*t.shape)
            << ", but the binding gives " << dims.size() << " sizes " << dims.str();
        for (size_t i = 0; i < dims.size(); ++i)
          user_check(dims.is_symbol(i) || !(*t.shape)[i].known() || (*t.shape)[i].value == dims[i])
              << "input '" << key << "' has a fixed size " << (*t.shape)[i].value
              << " in dimension " << i << ", but the binding gives " << dims[i];
      }
      // The declared symbols stay (declare_input_symbols made them); the sizes are set.
      std::vector<Dim> shape = to_shape(dims);
      for (size_t i = 0; i < dims.size(); ++i)
        if (dims.is_symbol(i)) shape[i] = (*t.shape)[i];
      t.shape = shape;
      continue;
    }
    if (symbols.count(key)) {
      user_check(dims.size() == 1)
          << "symbolic dimension '" << key << "' takes one size, got " << shape_str(dims);
      for (const std::string& in : graph.inputs) {
        ValueType& t = graph.types.at(in);
        if (!t.shape) continue;
        for (Dim& d : *t.shape)
          if (!d.known() && d.symbol == key) d = Dim::of(dims[0]);
      }
      continue;
    }
    user_error() << "input shape binding '" << key
                 << "' names neither a graph input nor a symbolic dimension (inputs: "
                 << list(graph.inputs)
                 << "; symbols: " << list(std::vector<std::string>(symbols.begin(), symbols.end()))
                 << ")";
  }
  check_inputs_bound(graph);
}

void freeze_inputs(Graph& graph, const std::map<std::string, HostTensor>& values) {
  for (const auto& [name, value] : values) {
    auto it = std::find(graph.inputs.begin(), graph.inputs.end(), name);
    user_check(it != graph.inputs.end())
        << "cannot freeze '" << name << "': it is not a graph input (inputs: " << list(graph.inputs)
        << ")";
    const ValueType& declared = graph.types.at(name);
    user_check(declared.dtype == value.dtype())
        << "input '" << name << "' is " << declared.dtype.str() << ", but its frozen value is "
        << value.dtype().str();
    if (declared.shape) {
      bool ok = declared.shape->size() == value.shape().size();
      for (size_t i = 0; ok && i < value.shape().size(); ++i)
        ok = !(*declared.shape)[i].known() || (*declared.shape)[i].value == value.shape()[i];
      user_check(ok) << "input '" << name << "' has shape " << shape_str(*declared.shape)
                     << ", but its frozen value has shape " << shape_str(value.shape());
    }
    graph.inputs.erase(it);
    graph.types.erase(name);
    graph.initializers[name] = value;
  }
}

void check_inputs_bound(const Graph& graph) {
  std::vector<std::string> unbound;
  for (const std::string& in : graph.inputs) {
    const ValueType& t = graph.types.at(in);
    if (t.is_concrete()) {
      // Beyond 2^47 bytes (a 64-bit board's user address space) no machine holds the input.
      long double bytes = t.dtype.bytes();
      for (int64_t d : t.dims()) bytes *= static_cast<long double>(d);
      user_check(bytes <= kAddressSpaceBytes)
          << "input '" << in << "' bound to " << shape_str(t.dims()) << " would take " << bytes
          << " bytes: more than a 64-bit machine can address (2^47 bytes)";
      user_check(shape_numel(t.dims()) >= 0) << "input '" << in << "'";  // throws on overflow
      continue;
    }
    if (!t.shape) {
      unbound.push_back("input '" + in + "' (no shape at all: bind it as " + in + "=d0,d1,...)");
      continue;
    }
    for (size_t i = 0; i < t.shape->size(); ++i) {
      const Dim& d = (*t.shape)[i];
      if (d.known()) continue;
      std::ostringstream os;
      os << "input '" << in << "' " << shape_str(*t.shape) << " dimension " << i << " ("
         << (d.symbol.empty() ? "unnamed" : "'" + d.symbol + "'") << ")";
      unbound.push_back(os.str());
    }
  }
  if (unbound.empty()) return;
  std::ostringstream os;
  const std::string where = graph.source.empty() ? "" : graph.source + ": ";
  os << where << unbound.size() << " input dimension" << (unbound.size() > 1 ? "s are" : " is")
     << " unbound; give each input a shape (--input-shape NAME=1,3,224,224) or each symbol a "
        "size (--input-shape batch=1):";
  for (const std::string& u : unbound) os << "\n  " << u;
  user_error() << os.str();
}

std::string ShapeSpec::str() const {
  std::string s = "[";
  for (size_t i = 0; i < size(); ++i)
    s += (i ? "," : "") + (is_symbol(i) ? symbols[i] : std::to_string((*this)[i]));
  return s + "]";
}

namespace {

// A symbol as a user writes one in a shape: a letter or '_', then letters, digits and '_'.
bool is_symbol_name(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

std::pair<std::string, ShapeSpec> parse_shape_binding(std::string_view spec) {
  const size_t eq = spec.rfind('=');
  user_check(eq != std::string_view::npos && eq > 0)
      << "input shape '" << spec << "' is not NAME=d0,d1,... (e.g. input=1,3,224,224)";
  std::string name(spec.substr(0, eq));
  std::string_view rest = spec.substr(eq + 1);
  ShapeSpec dims;
  std::vector<std::string> symbols;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    int64_t v = -1;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    const bool size = ec == std::errc() && end == item.data() + item.size() && v >= 0;
    user_check(size || is_symbol_name(item))
        << "input shape '" << spec << "': '" << item
        << "' is not a size (a non-negative integer) or a symbol (a name such as W)";
    dims.push_back(size ? v : -1);
    symbols.emplace_back(size ? "" : item);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
    user_check(!rest.empty()) << "input shape '" << spec << "' ends with a comma";
  }
  if (std::any_of(symbols.begin(), symbols.end(), [](const auto& s) { return !s.empty(); }))
    dims.symbols = std::move(symbols);
  return {name, dims};
}

void add_shape_binding(ShapeBindings& bindings, std::string_view spec) {
  auto [name, dims] = parse_shape_binding(spec);
  auto [it, fresh] = bindings.emplace(name, dims);
  const std::vector<int64_t>& had = it->second;
  user_check(fresh || (had == dims && it->second.symbols == dims.symbols))
      << "contradicting input shapes: '" << name << "' is bound to " << it->second.str()
      << " and to " << dims.str();
}

DimRange parse_dim_range(std::string_view spec) {
  const size_t eq = spec.rfind('=');
  const size_t dots = spec.find("..", eq == std::string_view::npos ? 0 : eq);
  DimRange r;
  bool ok = eq != std::string_view::npos && eq > 0 && dots != std::string_view::npos;
  if (ok) {
    r.symbol = std::string(spec.substr(0, eq));
    const std::string_view lo = spec.substr(eq + 1, dots - eq - 1), hi = spec.substr(dots + 2);
    auto lo_end = std::from_chars(lo.data(), lo.data() + lo.size(), r.min);
    auto hi_end = std::from_chars(hi.data(), hi.data() + hi.size(), r.max);
    ok = lo_end.ec == std::errc() && lo_end.ptr == lo.data() + lo.size() &&
         hi_end.ec == std::errc() && hi_end.ptr == hi.data() + hi.size();
  }
  user_check(ok) << "range '" << spec << "' is not SYMBOL=MIN..MAX (e.g. batch=1..16)";
  user_check(r.min >= 1 && r.min <= r.max)
      << "range '" << spec << "': MIN must be at least 1 and at most MAX";
  return r;
}

}  // namespace kiln::graph
