// Writing a result file so that a reader never sees half of it: the text goes to a temporary
// file beside the target, is synced, and is renamed over it.
#pragma once

#include <string>

namespace kiln::tools {

// OUT is afterwards either the old file or the complete new one (even when OUT was an input).
// UserError naming the path when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace kiln::tools
