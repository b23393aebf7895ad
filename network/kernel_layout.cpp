#include "network/kernel_layout.h"

#include <algorithm>

#include "compiler/base/error.h"
#include "schedules/layout.h"

namespace kiln::network {

int64_t layout_elements(const std::vector<int64_t>& s, Layout layout) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  if (layout == 0) return n;
  return s[0] * schedules::ceil_div(s[1], layout) * s[2] * s[3] * layout;
}

Layout activation_layout(const schedules::KernelArg& arg, const std::string& template_name) {
  const auto& convert = arg.is_output ? arg.unpack : arg.pack;
  const std::vector<int64_t>& s = arg.logical.shape;
  if (!convert) {
    internal_check(arg.kernel_elements == arg.logical.elements())
        << template_name << ": argument " << arg.logical.name
        << " has no pack but a different size in the kernel";
    return 0;
  }
  if (s.size() == 4) {
    // A probe whose every element differs tells layouts apart.
    schedules::Values probe(arg.is_output ? arg.kernel_elements : arg.logical.elements());
    for (size_t i = 0; i < probe.size(); ++i) probe[i] = static_cast<float>(i);
    schedules::Values got = convert(probe);
    // Blocks up to 4x the channels, and at least up to 64: a template may pad a narrow
    // tensor to its vector width (a depthwise conv of 1 channel reads NCHW[16]c).
    for (int64_t b = 1; b <= std::max<int64_t>(4 * s[1], 64) && b <= 256; ++b) {
      if (layout_elements(s, b) != arg.kernel_elements) continue;
      schedules::Values want =
          arg.is_output ? schedules::unpack_nchwc(probe, s[0], s[1], s[2], s[3], b)
                        : schedules::pack_nchwc(probe, s[0], s[1], s[2], s[3], b);
      if (want == got) return b;
    }
  }
  user_error() << "template " << template_name << " takes its argument '" << arg.logical.name
               << "' in a packed layout other than NCHW[x]c; the network compiler can only feed "
               << "such an argument from a constant";
  return 0;
}

}  // namespace kiln::network
