// Shared helpers of the lowering unit tests: lower a schedule (verified after every pass)
// and capture the printed IR after one named pass, and write expected IR as raw string
// literals.
//
//   EXPECT_EQ(ir_after(s, {A, B}, "schedule_ops"), ir(R"(
//   for (i, 0, 64) {
//     B[i] = (A[i]*2f)
//   }
//   )"));
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/base/error.h"
#include "compiler/ir/op.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/lower.h"
#include "compiler/te/schedule.h"
#include "tests/test_util.h"

namespace kiln::lower_test {

using ir::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Stmt;
using ir::Var;
using te::Schedule;
using te::Tensor;

// Expected IR written as R"(\n...\n)": drops the newline after the opening quote so the
// text can start on its own line.
inline std::string ir(const char* raw) {
  std::string s(raw);
  if (!s.empty() && s.front() == '\n') s.erase(0, 1);
  return s;
}

// Lowers with the verifier run after every pass, as every lowering test does, so a pass
// that breaks the IR fails the test by name.
inline ir::LoweredFunc lower_verified(const Schedule& s, const std::vector<Tensor>& args,
                                      const std::string& name = "kernel",
                                      lower::LowerOptions o = {}) {
  o.verify_each_pass = true;
  return lower::lower(s, args, name, o);
}

// The printed kernel body right after `pass` (a name from lower::pass_names()); the
// whole pipeline runs, verified after every pass.
inline std::string ir_after(const Schedule& s, const std::vector<Tensor>& args,
                            const std::string& pass) {
  std::string text;
  bool seen = false;
  lower::LowerOptions o;
  o.after_pass = [&](const std::string& p, const Stmt& body) {
    if (p != pass) return;
    text = ir::to_string(body);
    seen = true;
  };
  lower_verified(s, args, "kernel", o);
  EXPECT_TRUE(seen) << "no pass named '" << pass << "'";
  return text;
}

// The printed body of the fully lowered kernel.
inline std::string lowered(const Schedule& s, const std::vector<Tensor>& args) {
  return ir::to_string(lower_verified(s, args).body);
}

using kiln::test::user_error_of;  // tests/test_util.h

}  // namespace kiln::lower_test
