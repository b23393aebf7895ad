// Writes the nodes that stand in for one node of a model (a decomposed operator, an unrolled
// recurrence): each is named after that node and keeps its source index, so a later error in
// one of them names the node the model has. The new values get fresh names; their types are
// left to shape inference, which the passes that emit run once they are done.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace kiln::graph {

class NodeEmitter {
 public:
  // `max_concat_inputs`: the most inputs one Concat may have (RewriteOptions).
  NodeEmitter(graph::Graph& g, const graph::Node& site, std::vector<graph::Node>& out,
              int64_t max_concat_inputs)
      : g_(g), site_(site), out_(out), max_concat_inputs_(max_concat_inputs) {}

  // Appends op_type(inputs) with `attrs`; returns its output, `output` when given (to write
  // one of the replaced node's outputs) or else a fresh value.
  std::string emit(const std::string& op_type, std::vector<std::string> inputs,
                   std::map<std::string, graph::AttrValue> attrs = {},
                   const std::string& output = "");

  std::string constant(graph::HostTensor value);
  std::string ints(const std::vector<int64_t>& values);  // an i64 vector
  std::string scalar(double value);                      // an f32 scalar

  std::string slice(const std::string& v, int64_t axis, int64_t begin, int64_t end);
  std::string reshape(const std::string& v, const std::vector<int64_t>& shape,
                      const std::string& output = "");
  std::string transpose(const std::string& v, const std::vector<int64_t>& perm,
                        const std::string& output = "");
  // Concat along `axis`, in rounds when there are more values than one concat kernel reads.
  std::string concat(std::vector<std::string> values, int64_t axis, const std::string& output = "");

 private:
  std::string fresh(const std::string& what);

  graph::Graph& g_;
  const graph::Node& site_;
  std::vector<graph::Node>& out_;
  int64_t max_concat_inputs_;
  int count_ = 0;
  std::map<std::vector<int64_t>, std::string> ints_;  // one constant per distinct vector
};

}  // namespace kiln::graph
