#include "compiler/ir/printer.h"

#include <cstdio>
#include <sstream>
#include <tuple>
#include <type_traits>

#include "compiler/ir/functor.h"

namespace kiln::ir {

namespace {

const char* binary_symbol(const BinaryNode* op) {
  bool integer = !op->a.type().is_float();
  switch (op->kind) {
    case ExprKind::Add: return " + ";
    case ExprKind::Sub: return " - ";
    case ExprKind::Mul: return "*";
    case ExprKind::Div: return integer ? nullptr : " / ";
    case ExprKind::FloorDiv: return " / ";
    case ExprKind::FloorMod: return " % ";
    case ExprKind::EQ: return " == ";
    case ExprKind::NE: return " != ";
    case ExprKind::LT: return " < ";
    case ExprKind::LE: return " <= ";
    case ExprKind::GT: return " > ";
    case ExprKind::GE: return " >= ";
    case ExprKind::And: return " && ";
    case ExprKind::Or: return " || ";
    default: return nullptr;  // printed as a function call
  }
}

const char* binary_function(ExprKind k) {
  switch (k) {
    case ExprKind::Min: return "min";
    case ExprKind::Max: return "max";
    case ExprKind::Div: return "truncdiv";
    case ExprKind::Mod: return "truncmod";
    default: return "?";
  }
}

const char* reduce_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
  }
  return "?";
}

class Printer : public IRVisitor {
 public:
  explicit Printer(std::ostream& os) : os_(os) {}
  using IRVisitor::visit;

  void print_indices(const std::vector<Expr>& idx) {
    for (size_t i = 0; i < idx.size(); ++i) {
      if (i) os_ << ", ";
      visit(idx[i]);
    }
  }

  // A node printed like a call of its fields: `ramp(base, stride, lanes)`.
  template <typename Node>
  void print_as_call(const char* name, const Node* op) {
    os_ << name << '(';
    const char* separator = "";
    auto print_field = [&](const auto& field) {
      os_ << separator;
      separator = ", ";
      if constexpr (std::is_same_v<std::decay_t<decltype(field)>, Expr>) {
        visit(field);
      } else {
        os_ << field;
      }
    };
    std::apply([&](const auto&... field) { (print_field(field), ...); }, op->fields());
    os_ << ')';
  }

 protected:
  void visit(const IntImmNode* op) override {
    if (op->type.is_bool()) {
      os_ << (op->value ? "true" : "false");
    } else {
      os_ << op->value;
      if (op->type != DataType::index()) os_ << op->type.str();
    }
  }
  void visit(const FloatImmNode* op) override {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", op->value);
    os_ << buf << (op->type == DataType::f32() ? "f" : op->type.str());
  }
  void visit(const StringImmNode* op) override { os_ << '"' << op->value << '"'; }
  void visit(const VarNode* op) override { os_ << op->name; }
  void visit(const BinaryNode* op) override {
    if (const char* sym = binary_symbol(op)) {
      os_ << '(';
      visit(op->a);
      os_ << sym;
      visit(op->b);
      os_ << ')';
      return;
    }
    os_ << binary_function(op->kind) << '(';
    visit(op->a);
    os_ << ", ";
    visit(op->b);
    os_ << ')';
  }
  void visit(const NotNode* op) override {
    os_ << '!';
    visit(op->a);
  }
  void visit(const SelectNode* op) override { print_as_call("select", op); }
  void visit(const CastNode* op) override {
    os_ << op->type.str() << '(';
    visit(op->value);
    os_ << ')';
  }
  void visit(const LoadNode* op) override {
    os_ << op->buffer->name << '[';
    print_indices(op->indices);
    os_ << ']';
    if (op->predicate.defined()) {
      os_ << " if ";
      visit(op->predicate);
    }
  }
  void visit(const RampNode* op) override { print_as_call("ramp", op); }
  void visit(const BroadcastNode* op) override {
    os_ << 'x' << op->lanes << '(';
    visit(op->value);
    os_ << ')';
  }
  void visit(const CallNode* op) override {
    os_ << op->name;
    if (op->call_kind == CallKind::Reinterpret) os_ << '<' << op->type.str() << '>';
    os_ << '(';
    print_indices(op->args);
    os_ << ')';
  }
  void visit(const LetNode* op) override {
    os_ << "(let " << op->var.name() << " = ";
    visit(op->value);
    os_ << " in ";
    visit(op->body);
    os_ << ')';
  }
  void visit(const ReduceNode* op) override {
    os_ << reduce_name(op->op) << '(';
    visit(op->source);
    os_ << ", axis=[";
    for (size_t i = 0; i < op->axes.size(); ++i) os_ << (i ? ", " : "") << op->axes[i]->var.name();
    os_ << "])";
  }

  void indent() { os_ << std::string(2 * depth_, ' '); }
  void body(const Stmt& s) {
    ++depth_;
    visit(s);
    --depth_;
  }

  void visit(const LetStmtNode* op) override {
    indent();
    os_ << "let " << op->var.name() << " = ";
    visit(op->value);
    os_ << '\n';
    visit(op->body);
  }
  void visit(const StoreNode* op) override {
    indent();
    os_ << op->buffer->name << '[';
    print_indices(op->indices);
    os_ << "] = ";
    visit(op->value);
    if (op->predicate.defined()) {
      os_ << " if ";
      visit(op->predicate);
    }
    os_ << '\n';
  }
  void visit(const ForNode* op) override {
    indent();
    os_ << for_kind_name(op->for_kind) << " (" << op->var.name() << ", ";
    visit(op->min);
    os_ << ", ";
    visit(op->extent);
    os_ << ')';
    for (const auto& [k, v] : op->annotations) {
      os_ << " pragma(" << k << '=';
      visit(v);
      os_ << ')';
    }
    os_ << " {\n";
    body(op->body);
    indent();
    os_ << "}\n";
  }
  void visit(const AllocateNode* op) override {
    indent();
    os_ << "allocate " << op->buffer->name << '[' << op->buffer->dtype.str();
    for (const Expr& s : op->buffer->shape) {
      os_ << " * ";
      visit(s);
    }
    os_ << ']' << (op->buffer->scope == MemScope::Local ? " local" : "") << " {\n";
    body(op->body);
    indent();
    os_ << "}\n";
  }
  void visit(const IfThenElseNode* op) override {
    indent();
    os_ << "if (";
    visit(op->condition);
    os_ << ") {\n";
    body(op->then_case);
    if (op->else_case.defined()) {
      indent();
      os_ << "} else {\n";
      body(op->else_case);
    }
    indent();
    os_ << "}\n";
  }
  void visit(const EvaluateNode* op) override {
    indent();
    visit(op->value);
    os_ << '\n';
  }

 private:
  std::ostream& os_;
  int depth_ = 0;
};

}  // namespace

std::ostream& operator<<(std::ostream& os, const Expr& e) {
  if (!e.defined()) return os << "<undefined>";
  Printer p(os);
  p.visit(e);
  return os;
}

std::ostream& operator<<(std::ostream& os, const Stmt& s) {
  Printer p(os);
  p.visit(s);
  return os;
}

std::string to_string(const Expr& e) {
  std::ostringstream os;
  os << e;
  return os.str();
}

std::string to_string(const Stmt& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

}  // namespace kiln::ir
