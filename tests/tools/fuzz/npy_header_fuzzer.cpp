// libFuzzer target for the .npy preamble parser (kiln/npy_header.h). An input that starts with
// the magic is a whole file; any other input is header text, wrapped in a version 1 and a
// version 3 preamble so the fuzzer spends its time on the dict grammar rather than on finding
// the magic. Beyond "never crash", it checks what a reader relies on: an accepted header's
// counts are the exact products of its shape, its data offset lies inside the input, the same
// fields written back out the way NumPy writes them parse to the same header, and every
// message is one printable line.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kiln/npy_header.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "npy_header_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

std::string preamble(int version, std::string_view header) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(version);
  out += '\0';
  const size_t len_bytes = version == 1 ? 2 : 4;
  for (size_t i = 0; i < len_bytes; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  return out;
}

// The header as NumPy writes it (keys sorted, spaces after ':' and ',', padded to 64 bytes).
std::string canonical(const kiln::npy::Header& h) {
  std::string dict = "{'descr': '" + h.descr +
                     "', 'fortran_order': " + (h.fortran_order ? "True" : "False") +
                     ", 'shape': " + kiln::npy::shape_text(h.shape) + ", }";
  const size_t prefix = h.version == 1 ? 10 : 12;
  while ((prefix + dict.size() + 1) % 64 != 0) dict += ' ';
  return preamble(h.version, dict + '\n');
}

void check_message(const std::string& message, std::string_view input) {
  if (message.empty()) fail("empty message", std::string(input));
  for (char c : message)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      fail("message with a byte that is not printable ASCII", message);
}

void check_accepted(const kiln::npy::Header& h, std::string_view file) {
  if (h.version < 1 || h.version > 3) fail("version out of range", std::string(file));
  if (h.data_offset > file.size()) fail("data offset past the input", std::string(file));
  if (h.dtype.size() < 2 || std::to_string(h.item_size) != h.dtype.substr(1) ||
      h.descr.find(h.dtype) == std::string::npos)
    fail("bad dtype", h.descr + " " + h.dtype);
  // The counts, recomputed in 128 bits with zero dimensions skipped (the parser's rule).
  unsigned __int128 nonzero = 1;
  bool empty = false;
  for (int64_t d : h.shape) {
    if (d < 0) fail("negative dimension accepted", std::string(file));
    if (d == 0)
      empty = true;
    else
      nonzero *= static_cast<uint64_t>(d);
    if (nonzero > UINT64_MAX) fail("element count overflow accepted", std::string(file));
  }
  if (nonzero * h.item_size > UINT64_MAX) fail("byte count overflow accepted", std::string(file));
  const uint64_t count = empty ? 0 : static_cast<uint64_t>(nonzero);
  if (h.element_count != count || h.byte_count != count * h.item_size)
    fail("counts differ from the shape's product", std::string(file));

  const std::string data_check = kiln::npy::check_c_order_data(h, file.size());
  if (data_check.empty() != (!h.fortran_order && file.size() - h.data_offset == h.byte_count))
    fail("data check disagrees with the counts", data_check);
  if (!data_check.empty()) check_message(data_check, file);

  const std::string again_file = canonical(h);
  const kiln::npy::ParseResult again = kiln::npy::parse_header(again_file);
  if (!again.ok()) fail("its canonical form is refused", again_file + "\n" + again.error);
  const kiln::npy::Header& g = again.header;
  if (g.descr != h.descr || g.dtype != h.dtype || g.fortran_order != h.fortran_order ||
      g.shape != h.shape || g.element_count != h.element_count || g.byte_count != h.byte_count)
    fail("canonical form parses differently", again_file);
}

void check(std::string_view file) {
  const kiln::npy::ParseResult r = kiln::npy::parse_header(file);
  if (r.ok())
    check_accepted(r.header, file);
  else
    check_message(r.error, file);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (input.starts_with(std::string_view("\x93NUMPY", 6))) {
    check(input);
  } else {
    check(preamble(1, input));
    check(preamble(3, input));
  }
  return 0;
}
