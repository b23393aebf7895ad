// Structural equality and hashing, derived from each node's fields() (ir/fields.h says how
// each kind of field compares).
#include "compiler/ir/structural.h"

#include <functional>
#include <type_traits>
#include <utility>

#include "compiler/ir/fields.h"

namespace kiln::ir {

namespace {

size_t combine(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

// Plain values, and Buffer/IterVar handles (shared_ptr ==: the same definition).
template <typename T>
bool field_equal(const T& a, const T& b) {
  return a == b;
}
bool field_equal(const Expr& a, const Expr& b) { return structural_equal(a, b); }
bool field_equal(const Stmt& a, const Stmt& b) { return structural_equal(a, b); }
bool field_equal(const Var& a, const Var& b) { return a.same_as(b); }  // a binding: identity
bool field_equal(const Annotations& a, const Annotations& b) {
  if (a.size() != b.size()) return false;
  for (auto x = a.begin(), y = b.begin(); x != a.end(); ++x, ++y)
    if (x->first != y->first || !structural_equal(x->second, y->second)) return false;
  return true;
}
template <typename T>
bool field_equal(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!field_equal(a[i], b[i])) return false;
  return true;
}

template <typename Node>
bool fields_equal(const Node& x, const Node& y) {
  auto a = x.fields(), b = y.fields();
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return (field_equal(std::get<I>(a), std::get<I>(b)) && ...);
  }(std::make_index_sequence<std::tuple_size_v<decltype(a)>>());
}

template <typename T>
size_t field_hash(const T& v) {
  if constexpr (std::is_enum_v<T>) {
    return static_cast<size_t>(v);
  } else {
    return std::hash<T>()(v);  // numbers, names (hash(0.0) == hash(-0.0), as 0.0 == -0.0)
  }
}
size_t field_hash(const Expr& e) { return structural_hash(e); }
size_t field_hash(const Stmt& s) { return structural_hash(s); }
size_t field_hash(const Var& v) { return std::hash<const void*>()(v.get()); }
size_t field_hash(const DataType& t) {
  return combine(combine(static_cast<size_t>(t.code), t.bits), t.lanes);
}
size_t field_hash(const Annotations& a) {
  size_t h = a.size();
  for (const auto& [key, value] : a) h = combine(combine(h, field_hash(key)), field_hash(value));
  return h;
}
template <typename T>
size_t field_hash(const std::shared_ptr<T>& p) {
  return std::hash<const void*>()(p.get());
}
template <typename T>
size_t field_hash(const std::vector<T>& v) {
  size_t h = v.size();
  for (const T& x : v) h = combine(h, field_hash(x));
  return h;
}

template <typename Node>
size_t fields_hash(size_t h, const Node& n) {
  std::apply([&](const auto&... field) { ((h = combine(h, field_hash(field))), ...); },
             n.fields());
  return h;
}

}  // namespace

bool structural_equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a.kind() != b.kind() || a.type() != b.type()) return false;
  return with_node(a, [&](const auto* x) {
    using Node = std::remove_cvref_t<decltype(*x)>;
    if constexpr (std::is_same_v<Node, VarNode>) {
      return false;  // distinct variables (same_as checked above)
    } else {
      return fields_equal(*x, *static_cast<const Node*>(b.get()));
    }
  });
}

bool structural_equal(const Stmt& a, const Stmt& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind()) return false;
  return with_node(a, [&](const auto* x) {
    using Node = std::remove_cvref_t<decltype(*x)>;
    return fields_equal(*x, *static_cast<const Node*>(b.get()));
  });
}

size_t structural_hash(const Expr& e) {
  if (!e.defined()) return 0;
  size_t h = combine(static_cast<size_t>(e.kind()), field_hash(e.type()));
  return with_node(e, [&](const auto* x) {
    using Node = std::remove_cvref_t<decltype(*x)>;
    if constexpr (std::is_same_v<Node, VarNode>) {
      return combine(h, std::hash<const void*>()(x));
    } else {
      return fields_hash(h, *x);
    }
  });
}

size_t structural_hash(const Stmt& s) {
  if (!s.defined()) return 0;
  size_t h = static_cast<size_t>(s.kind());
  return with_node(s, [&](const auto* x) { return fields_hash(h, *x); });
}

}  // namespace kiln::ir
