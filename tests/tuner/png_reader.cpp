#include "tests/tuner/png_reader.h"

#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace kiln::testing {
namespace {

uint32_t be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

uint8_t paeth(int a, int b, int c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return static_cast<uint8_t>(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

Image fail(std::string* error, const std::string& why) {
  if (error) *error = why;
  return {};
}

}  // namespace

Image read_png(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (file.size() < 8 || std::memcmp(file.data(), kSignature, 8) != 0)
    return fail(error, "not a PNG file");
  Image img;
  int channels = 0;
  std::vector<uint8_t> compressed;
  for (size_t pos = 8; pos + 12 <= file.size();) {
    uint32_t length = be32(&file[pos]);
    if (pos + 12 + length > file.size()) return fail(error, "truncated chunk");
    std::string type(reinterpret_cast<const char*>(&file[pos + 4]), 4);
    const uint8_t* data = &file[pos + 8];
    if (type == "IHDR") {
      img.width = be32(data);
      img.height = be32(data + 4);
      int depth = data[8], colour = data[9], interlace = data[12];
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0)
        return fail(error, "only 8-bit RGB/RGBA, non-interlaced PNGs are handled");
      channels = colour == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      compressed.insert(compressed.end(), data, data + length);
    }
    pos += 12 + length;
  }
  if (channels == 0) return fail(error, "no IHDR chunk");
  size_t stride = size_t(img.width) * channels;
  std::vector<uint8_t> raw((stride + 1) * img.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, compressed.data(), compressed.size()) != Z_OK ||
      raw_size != raw.size())
    return fail(error, "bad image data");
  // Undo the per-row filters (PNG spec, section 9) in place, then expand to RGBA.
  img.rgba.resize(size_t(img.width) * img.height * 4);
  std::vector<uint8_t> prev(stride, 0);
  for (uint32_t y = 0; y < img.height; ++y) {
    uint8_t filter = raw[y * (stride + 1)];
    uint8_t* row = &raw[y * (stride + 1) + 1];
    for (size_t i = 0; i < stride; ++i) {
      int a = i >= size_t(channels) ? row[i - channels] : 0, b = prev[i];
      int c = i >= size_t(channels) ? prev[i - channels] : 0;
      switch (filter) {
        case 0:
          break;
        case 1:
          row[i] = uint8_t(row[i] + a);
          break;
        case 2:
          row[i] = uint8_t(row[i] + b);
          break;
        case 3:
          row[i] = uint8_t(row[i] + (a + b) / 2);
          break;
        case 4:
          row[i] = uint8_t(row[i] + paeth(a, b, c));
          break;
        default:
          return fail(error, "bad row filter");
      }
    }
    std::memcpy(prev.data(), row, stride);
    for (uint32_t x = 0; x < img.width; ++x) {
      uint8_t* out = &img.rgba[(size_t(y) * img.width + x) * 4];
      for (int ch = 0; ch < 3; ++ch) out[ch] = row[x * channels + ch];
      out[3] = channels == 4 ? row[x * channels + 3] : 255;
    }
  }
  return img;
}

}  // namespace kiln::testing
