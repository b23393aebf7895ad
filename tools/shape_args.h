// What compile, tune and analyze say of --input-shape, written once.
#pragma once

namespace kiln::tools {

inline constexpr const char* kInputShapeHelp =
    "NAME=1,3,224,224 (an input), SYMBOL=1, or NAME=N,3,48,W (names make those dimensions "
    "symbolic: a fixed batch then takes --range N=...)";

}  // namespace kiln::tools
