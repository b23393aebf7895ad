// Einsum: the equation's parser and the reference evaluator, a loop over every assignment of
// the letters (the output's outside, the summed ones inside), accumulating in double.
#include "compiler/graph/ops/einsum.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "compiler/graph/ops/op_util.h"

namespace kiln::graph {

EinsumEquation parse_einsum(const std::string& equation, size_t operands) {
  std::string eq;
  for (char ch : equation)
    if (ch != ' ') eq += ch;
  user_check(eq.find("...") == std::string::npos)
      << "Einsum '" << equation << "': '...' is not supported (name every dimension)";
  EinsumEquation e;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  for (size_t comma; (comma = lhs.find(',', start)) != std::string::npos; start = comma + 1)
    e.inputs.push_back(lhs.substr(start, comma - start));
  e.inputs.push_back(lhs.substr(start));
  user_check(e.inputs.size() == operands) << "Einsum '" << equation << "' has " << e.inputs.size()
                                          << " terms for " << operands << " inputs";
  std::map<char, int> uses;
  for (const std::string& term : e.inputs)
    for (char ch : term) {
      user_check(std::isalpha(static_cast<unsigned char>(ch)))
          << "Einsum '" << equation << "': '" << ch << "' is not a letter";
      ++uses[ch];
    }
  if (arrow != std::string::npos) {
    e.output = eq.substr(arrow + 2);
    for (char ch : e.output)
      user_check(uses.count(ch) && std::count(e.output.begin(), e.output.end(), ch) == 1)
          << "Einsum '" << equation << "': output letter '" << ch
          << "' is repeated or names no input dimension";
  } else {
    for (const auto& [ch, n] : uses)  // std::map: alphabetical
      if (n == 1) e.output += ch;
  }
  return e;
}

namespace {

// Each letter's size, checked to agree between the operands.
std::map<char, int64_t> letter_sizes(const EinsumEquation& e,
                                     const std::vector<std::vector<int64_t>>& shapes) {
  std::map<char, int64_t> size;
  for (size_t k = 0; k < e.inputs.size(); ++k) {
    user_check(e.inputs[k].size() == shapes[k].size())
        << "Einsum term '" << e.inputs[k] << "' has " << e.inputs[k].size()
        << " letters for an input of rank " << shapes[k].size();
    for (size_t i = 0; i < shapes[k].size(); ++i) {
      const char ch = e.inputs[k][i];
      auto [it, fresh] = size.emplace(ch, shapes[k][i]);
      user_check(fresh || it->second == shapes[k][i])
          << "Einsum letter '" << ch << "' has sizes " << it->second << " and " << shapes[k][i];
    }
  }
  return size;
}

std::vector<int64_t> output_shape(const EinsumEquation& e, std::map<char, int64_t>& size) {
  std::vector<int64_t> out;
  for (char ch : e.output) out.push_back(size[ch]);
  return out;
}

std::vector<TensorType> infer_einsum(const InferContext& ctx) {
  const EinsumEquation e = parse_einsum(ctx.node().attr_string("equation", ""), ctx.num_inputs());
  std::vector<std::vector<int64_t>> shapes;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    require_same_dtype(ctx, 0, k);
    shapes.push_back(ctx.shape(k));
  }
  std::map<char, int64_t> size = letter_sizes(e, shapes);
  return {{ctx.dtype(0), output_shape(e, size)}};
}

std::vector<HostTensor> eval_einsum(const EvalContext& ctx) {
  const EinsumEquation e = parse_einsum(ctx.node().attr_string("equation", ""), ctx.num_inputs());
  std::vector<std::vector<double>> values;
  std::vector<std::vector<int64_t>> shapes;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    values.push_back(ctx.input(k).to_f64());
    shapes.push_back(ctx.input(k).shape());
  }
  std::map<char, int64_t> size = letter_sizes(e, shapes);
  // Letters in loop order: the output's, then the summed ones.
  std::string letters = e.output;
  for (const auto& [ch, n] : size)
    if (e.output.find(ch) == std::string::npos) letters += ch;
  std::vector<int64_t> extents;
  for (char ch : letters) extents.push_back(size[ch]);
  // Per operand, the stride of each loop letter in its row-major layout (0 when absent; a
  // letter repeated in one term, a diagonal, adds its strides).
  std::vector<std::vector<int64_t>> strides(values.size(), std::vector<int64_t>(letters.size(), 0));
  for (size_t k = 0; k < values.size(); ++k) {
    const std::vector<int64_t> st = shape_strides(shapes[k]);
    for (size_t i = 0; i < e.inputs[k].size(); ++i)
      strides[k][letters.find(e.inputs[k][i])] += st[i];
  }
  const std::vector<int64_t> out_shape = output_shape(e, size);
  std::vector<double> out(shape_numel(out_shape), 0.0);
  int64_t summed = 1;
  for (size_t i = e.output.size(); i < letters.size(); ++i) summed *= extents[i];
  for_each_index(extents, strides, [&](int64_t flat, const int64_t* offsets) {
    double p = 1;
    for (size_t k = 0; k < values.size(); ++k) p *= values[k][offsets[k]];
    out[flat / summed] += p;  // the summed letters are the innermost loops
  });
  return {HostTensor::from_f64(ctx.input(0).dtype(), out_shape, out)};
}

}  // namespace

OpDef einsum_op() {
  OpDef def{"Einsum", {"equation"}, 1, -1};
  def.infer = infer_einsum;
  def.eval = eval_einsum;
  return def;
}

}  // namespace kiln::graph
