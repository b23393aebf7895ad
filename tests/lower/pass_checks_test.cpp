// lower()'s pass table and the checks between passes: a planted broken pass is caught and
// named, and each check applies only from the pass that establishes it on.
#include <cstdlib>
#include <functional>
#include <optional>

#include "tests/lower/lower_test_util.h"

namespace kiln::lower_test {
namespace {

using ir::ForKind;
using te::compute;
using te::placeholder;

// Sets an environment variable for the life of the object, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class PassChecksTest : public ::testing::Test {
 protected:
  Tensor A = placeholder({64}, DataType::f32(), "A");
  Tensor B = compute(
      {64}, [&](Var i) { return A(i) * 2; }, "B");
  Var v{"v"};

  // The InternalError of lowering B with `broken` applied to the IR after `pass` (as if
  // that pass had produced it), or "" when lowering succeeds.
  std::string plant(const std::string& pass, const std::function<Stmt(Stmt)>& broken,
                    bool verify_each_pass = true) const {
    Schedule s({B});
    lower::LowerOptions o;
    o.verify_each_pass = verify_each_pass;
    o.replace_after_pass = [&](const std::string& p, const Stmt& body) {
      return p == pass ? broken(body) : body;
    };
    try {
      lower::lower(s, {A, B}, "k", o);
    } catch (const InternalError& e) {
      return e.what();
    }
    return "";
  }
  // Appends to the kernel a loop of `kind` over v that stores to B.
  std::function<Stmt(Stmt)> add_loop(ForKind kind) const {
    return [this, kind](Stmt body) {
      Stmt store = ir::make_store(B.buffer(), ir::make_zero(DataType::f32()), {v});
      return ir::make_seq({std::move(body), ir::make_for(v, 0, 4, kind, store)});
    };
  }
  // Appends to the kernel a store of `value` (0 by default) to B[indices].
  std::function<Stmt(Stmt)> add_store(std::vector<Expr> indices, Expr value = Expr()) const {
    if (!value.defined()) value = ir::make_zero(DataType::f32());
    return [this, indices, value](Stmt body) {
      return ir::make_seq({std::move(body), ir::make_store(B.buffer(), value, indices)});
    };
  }
};

TEST_F(PassChecksTest, PassesRunInTheTablesOrder) {
  const std::vector<std::string> order = {"schedule_ops",    "simplify",  "partition_loops",
                                          "flatten_storage", "vectorize", "unroll",
                                          "final_simplify"};
  EXPECT_EQ(lower::pass_names(), order);
  std::vector<std::string> ran;
  lower::LowerOptions o;
  o.after_pass = [&](const std::string& pass, const Stmt&) { ran.push_back(pass); };
  Schedule s({B});
  lower_verified(s, {A, B}, "k", o);
  EXPECT_EQ(ran, order);
}

TEST_F(PassChecksTest, BrokenPassIsNamed) {
  std::string msg = plant("vectorize", add_loop(ForKind::Vectorized));
  EXPECT_EQ(msg.rfind("internal error", 0), 0u) << msg;
  EXPECT_NE(msg.find(": after pass 'vectorize': "), std::string::npos) << msg;
  EXPECT_NE(msg.find("loop 'v' is still marked vectorized"), std::string::npos) << msg;

  msg = plant("flatten_storage", add_store({0, 0}));
  EXPECT_NE(msg.find("after pass 'flatten_storage': "), std::string::npos) << msg;
  EXPECT_NE(msg.find("access to 'B' is not flattened"), std::string::npos) << msg;

  Expr sum = ir::make_reduce(ir::ReduceOp::Sum, ir::make_zero(DataType::f32()), {});
  msg = plant("simplify", add_store({0}, sum));
  EXPECT_NE(msg.find("after pass 'simplify': "), std::string::npos) << msg;
  EXPECT_NE(msg.find("a reduction is left"), std::string::npos) << msg;
}

TEST_F(PassChecksTest, ChecksApplyFromThePassThatEstablishesThem) {
  // A vector loop before `vectorize` is its input, not a bug.
  EXPECT_EQ(plant("partition_loops", add_loop(ForKind::Vectorized)), "");
  // Scope holds at every stage.
  std::string msg = plant("partition_loops", add_store({v}));
  EXPECT_NE(msg.find("after pass 'partition_loops': "), std::string::npos) << msg;
  EXPECT_NE(msg.find("variable 'v' is used outside its scope"), std::string::npos) << msg;
}

TEST_F(PassChecksTest, LeakedVariableIsAKilnBugNotTheUsers) {
  // Without checks between passes the final check still calls it a kiln bug, naming the
  // last pass instead of the one at fault.
  ScopedEnv off("KILN_VERIFY_IR", "0");
  std::string msg = plant("unroll", add_store({v}), false);
  EXPECT_NE(msg.find("after pass 'final_simplify': "), std::string::npos) << msg;
  EXPECT_NE(msg.find("variable 'v' is used outside its scope"), std::string::npos) << msg;
  msg = plant("unroll", add_store({v}), true);
  EXPECT_NE(msg.find("after pass 'unroll': "), std::string::npos) << msg;
}

TEST_F(PassChecksTest, EnvironmentSwitchesChecksOn) {
  {
    ScopedEnv off("KILN_VERIFY_IR", "0");
    std::string msg = plant("vectorize", add_loop(ForKind::Vectorized), false);
    EXPECT_NE(msg.find("after pass 'final_simplify': "), std::string::npos) << msg;
  }
  ScopedEnv on("KILN_VERIFY_IR", "1");
  std::string msg = plant("vectorize", add_loop(ForKind::Vectorized), false);
  EXPECT_NE(msg.find("after pass 'vectorize': "), std::string::npos) << msg;
}

}  // namespace
}  // namespace kiln::lower_test
