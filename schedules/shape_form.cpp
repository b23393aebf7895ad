// The table of shape_form (see shape_form.h).
#include "schedules/shape_form.h"

#include <map>

namespace kiln::schedules {

std::vector<std::string> shape_form(const std::string& op) {
  static const std::map<std::string, std::vector<std::string>> k = {
      {"dense", {"M", "N", "K"}},
      {"conv2d", {"N", "C", "H", "W", "O", "KH", "KW"}},
      {"batch_matmul", {"B", "M", "N", "K"}},
      {"attention", {"B", "M", "N", "D", "E"}},
      {"max_pool2d", {"N", "C", "H", "W", "KH", "KW"}},
      {"avg_pool2d", {"N", "C", "H", "W", "KH", "KW"}},
      {"global_avg_pool2d", {"N", "C", "H", "W"}},
      {"batch_norm", {"N", "C", "H", "W"}},
      {"softmax", {"M", "N"}},
      {"layer_norm", {"M", "N"}},
      {"layout_transform", {"N", "C", "H", "W", "block"}},
      {"conv2d_transpose", {"N", "C", "H", "W", "O", "KH", "KW"}},
      {"resize", {"N", "C", "H", "W", "OH", "OW"}},
      {"reduce_sum", {"outer", "reduced", "inner"}},
      {"reduce_mean", {"outer", "reduced", "inner"}},
      {"reduce_max", {"outer", "reduced", "inner"}},
      {"reduce_min", {"outer", "reduced", "inner"}},
      {"arg_max", {"outer", "reduced", "inner"}},
      {"arg_min", {"outer", "reduced", "inner"}},
      {"cumsum", {"outer", "reduced", "inner"}},
      {"cast", {"elements"}},
  };
  auto it = k.find(op);
  return it == k.end() ? std::vector<std::string>{} : it->second;
}

}  // namespace kiln::schedules
