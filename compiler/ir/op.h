// Building expressions: typed constants and operators that check and match their operands.
//
// Operators follow the usual C++ spelling (a + b, a < b, a && b). A literal operand takes
// the type of the other side (x_f32 * 2 is f32), a scalar meeting a vector is broadcast,
// and anything else that disagrees in type is an internal error. Integer `/` and `%` here
// are *floor* division and modulus, the ones index arithmetic wants; make_div/make_mod
// give C's truncating ones.
#pragma once

#include <optional>

#include "compiler/ir/expr.h"

namespace kiln::ir {

Expr make_int(DataType t, int64_t v);
Expr make_float(DataType t, double v);
Expr make_const(DataType t, double v);  // int or float by t; vector types broadcast
Expr make_bool(bool v, int lanes = 1);
Expr make_string(const std::string& s);
Expr make_zero(DataType t);

Expr make_binary(ExprKind kind, Expr a, Expr b);
Expr make_not(Expr a);
Expr make_select(Expr cond, Expr t, Expr f);
Expr make_cast(DataType t, Expr v);  // returns v itself when it already has type t
Expr make_ramp(Expr base, Expr stride, int lanes);
Expr make_broadcast(Expr value, int lanes);
Expr make_load(Buffer buffer, std::vector<Expr> indices, Expr predicate = Expr());
Expr make_call(DataType t, const std::string& name, std::vector<Expr> args,
               CallKind kind = CallKind::Pure);
// Lane l of the result is lane lanes[l] of a ++ b (a and b of one vector type; each index
// in [0, 2 * lanes of a)). Codegen emits one LLVM shufflevector, which each target selects
// to its permutes (vunpcklps, vshufps, vpermt2ps; zip, trn, ext).
Expr make_shuffle(Expr a, Expr b, const std::vector<int>& lanes);
Expr make_let(Var v, Expr value, Expr body);
// v itself when lo <= v < hi (v, lo, hi of one scalar type; NaN is outside); else the kernel
// returns KILN_STATUS_INDEX_OUT_OF_RANGE (CallKind::RangeCheck).
Expr make_in_range(Expr v, Expr lo, Expr hi);
Expr make_reduce(ReduceOp op, Expr source, std::vector<IterVar> axes);

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  // float division, or floor division for integers
Expr operator%(Expr a, Expr b);  // floor modulus for integers
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr truncdiv(Expr a, Expr b);
Expr truncmod(Expr a, Expr b);

// The value of an integer constant (scalar, or broadcast of one), if e is one.
std::optional<int64_t> as_const_int(const Expr& e);
std::optional<double> as_const_float(const Expr& e);
bool is_const_int(const Expr& e, int64_t v);
inline bool is_zero(const Expr& e) { return is_const_int(e, 0); }
inline bool is_one(const Expr& e) { return is_const_int(e, 1); }

}  // namespace kiln::ir
