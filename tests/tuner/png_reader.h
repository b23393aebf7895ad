// Just enough of PNG to look at what rsvg-convert renders: 8-bit RGB or RGBA, not
// interlaced, decoded to RGBA pixels. Tests use it to check that a plot is not blank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::testing {

struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgba;  // row-major, 4 bytes a pixel
  const uint8_t* pixel(uint32_t x, uint32_t y) const { return &rgba[(size_t(y) * width + x) * 4]; }
};

// Empty image (width 0) and `error` set when the file is not a PNG this reader handles.
Image read_png(const std::string& path, std::string* error);

}  // namespace kiln::testing
