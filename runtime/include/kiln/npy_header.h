// The one reader of NumPy .npy preambles in kiln: the `kiln` CLI (tools/npy_file.cpp) and the
// board example model_app both parse headers here, so a file means the same thing to both.
// Header-only, standard library only, no exceptions for bad input (an error string instead):
// model_app links nothing of kiln but the tiny runtime.
//
// The format (numpy.lib.format, "NEP 1"; integers little-endian):
//   offset  size  field
//        0     6  magic "\x93NUMPY"
//        6     1  major version: 1, 2 or 3 (3 only changes the header's text encoding to UTF-8)
//        7     1  minor version: 0
//        8   2|4  header_len: 2 bytes in version 1, 4 in versions 2 and 3
//    10|12     -  header_len bytes of text: a Python dict literal, padded with spaces and
//                 ended by '\n'; the array's bytes follow it directly
// The dict has exactly the keys 'descr' (a dtype string such as '<f4'), 'fortran_order' (True or
// False) and 'shape' (a tuple of non-negative ints), in any order. Accepted here is the subset of
// the literal syntax NumPy's reader (ast.literal_eval) takes that writers use: strings in either
// quotes, without escapes, optionally with the no-op prefix u or r; whitespace (space, tab, CR,
// LF) between any two tokens and after the dict; a trailing comma in the dict and in the shape
// tuple (required for a one-element tuple, as in Python); decimal dimensions, with the Python 2
// 'L' suffix in versions 1 and 2 (NumPy still strips it there). Refused although Python would
// evaluate them: escapes, string concatenation, parentheses around values, other number
// spellings (0x10, 1_000, +2), and True/False as dimensions. Anything refused gets a message
// saying what and where: nothing is matched by substring, so no value is read from the wrong
// place.
//
// dtypes: the fixed-size numeric ones (bool, signed and unsigned integers of 1 to 8 bytes,
// floats of 2 to 16, complex of 8 to 32; which of them a reader takes is up to it), little-endian
// ('<'), native ('=', or no byte-order character: little-endian on every target kiln runs on)
// or, for one-byte types, any byte order ('|' is NumPy's). Big-endian arrays are refused by
// name; strings, objects, dates and structured dtypes as not supported. Counts are checked: a
// dimension past int64, or a shape whose elements or bytes do not fit in 64 bits, is an error
// rather than a number that wrapped around.
#ifndef KILN_NPY_HEADER_H
#define KILN_NPY_HEADER_H

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::npy {

// A parsed preamble.
struct Header {
  int version = 0;           // major version: 1, 2 or 3
  uint64_t data_offset = 0;  // where the array's bytes start in the file
  std::string descr;         // the dtype string as written ("<f4", "|b1", "=i8", "f4", ...)
  std::string dtype;         // kind and item size without byte order: "f4", "i8", "u1", "b1",
                             // "c8" (a reader checks it is one it takes)
  size_t item_size = 0;      // bytes per element
  bool fortran_order = false;
  std::vector<int64_t> shape;  // () for a 0-d array, which holds one element
  uint64_t element_count = 0;  // product of shape
  uint64_t byte_count = 0;     // element_count * item_size: the data's size in bytes
};

// `header` when `error` is empty; else `error` says what is wrong (and `header` is empty).
struct ParseResult {
  Header header;
  std::string error;
  bool ok() const { return error.empty(); }
};

// Parses the preamble at the start of `file` (the whole file, or at least its first
// data_offset bytes). Errors name byte offsets in the file. Throws nothing but std::bad_alloc.
inline ParseResult parse_header(std::string_view file);

// The checks a reader of C-order data makes once the header parsed: "" when the array is in C
// order and `file_size` leaves exactly byte_count bytes after the header, else the reason.
inline std::string check_c_order_data(const Header& header, uint64_t file_size);

// `shape` as Python writes a tuple: "()", "(5,)", "(2, 3)".
inline std::string shape_text(const std::vector<int64_t>& shape);

// ---------------------------------------------------------------------------------------------

namespace detail {

// NumPy's NPY_MAXDIMS (2.x): no writer makes more, so more is a damaged header.
inline constexpr size_t kMaxDims = 64;

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
inline bool is_name_char(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// `text` for a message: printable ASCII as itself, other bytes as \xNN (a damaged header may
// hold anything, and a message must not carry control characters to a terminal).
inline std::string printable(std::string_view text) {
  const char* hex = "0123456789abcdef";
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out;
}

// One byte for a message: 'c' ("'" for the quote), or byte \xNN when not printable.
inline std::string shown(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (c == '\'') return "\"'\"";
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  return "byte " + printable(std::string_view(&c, 1));
}

// The little-endian unsigned integer of `n` bytes at file[at].
inline uint64_t load_le(std::string_view file, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t(static_cast<unsigned char>(file[at + i])) << (8 * i);
  return v;
}

// The magic, version and header_len; sets version and data_offset. "" or the error.
inline std::string parse_preamble(std::string_view file, Header& h) {
  constexpr std::string_view magic("\x93NUMPY", 6);
  // A file shorter than the magic but agreeing with it is truncated, not foreign.
  if (file.substr(0, magic.size()) != magic.substr(0, file.size()))
    return "not a .npy file (no \\x93NUMPY magic)";
  if (file.size() < 10)
    return "truncated .npy file: " + std::to_string(file.size()) +
           " bytes, shorter than the 10-byte preamble";
  const int major = static_cast<unsigned char>(file[6]),
            minor = static_cast<unsigned char>(file[7]);
  if (major < 1 || major > 3 || minor != 0)
    return ".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
           " is not supported (1.0, 2.0 and 3.0 are)";
  // Version 1 has room for 65535 bytes of header; 2 and 3 widen the length to 4 bytes.
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (file.size() < 8 + len_bytes)
    return "truncated .npy file: " + std::to_string(file.size()) + " bytes, the version " +
           std::to_string(major) + " preamble needs " + std::to_string(8 + len_bytes);
  const uint64_t header_len = load_le(file, 8, len_bytes);
  h.version = major;
  h.data_offset = 8 + len_bytes + header_len;
  if (h.data_offset > file.size())
    return "truncated .npy header: header_len " + std::to_string(header_len) +
           " puts its end at byte " + std::to_string(h.data_offset) + ", the file has " +
           std::to_string(file.size()) + " bytes";
  return "";
}

// Checks the dtype string and sets dtype and item_size. "" or the error. Every fixed-size
// numeric type NumPy has passes: which of them a reader takes is its own business, and it can
// say so in its own terms.
inline std::string parse_descr(std::string_view descr, Header& h) {
  std::string_view code = descr;
  char order = '=';  // no byte-order character: numpy.dtype("f4") is native
  if (!code.empty() && (code[0] == '<' || code[0] == '>' || code[0] == '=' || code[0] == '|')) {
    order = code[0];
    code.remove_prefix(1);
  }
  static constexpr std::string_view kCodes[] = {"b1", "i1", "i2", "i4", "i8",  "u1", "u2",  "u4",
                                                "u8", "f2", "f4", "f8", "f16", "c8", "c16", "c32"};
  bool known = false;
  for (std::string_view c : kCodes) known = known || c == code;
  if (!known)
    return ".npy dtype '" + printable(descr) +
           "' is not one kiln reads (numeric types only: b1, i1 to i8, u1 to u8, f2 to f16, c8 "
           "to c32)";
  h.dtype = std::string(code);
  h.item_size = 0;
  for (char c : code.substr(1)) h.item_size = h.item_size * 10 + static_cast<size_t>(c - '0');
  if (h.item_size == 1) return "";  // byte order means nothing for one byte
  const bool big = order == '>' || (order == '=' && std::endian::native == std::endian::big);
  if (big)
    return "big-endian .npy arrays are not supported (descr '" + std::string(descr) +
           "'); save the array little-endian ('<" + h.dtype + "')";
  if (order == '|')
    return "malformed .npy dtype '" + std::string(descr) +
           "': byte order '|' is only for one-byte types";
  return "";
}

// A recursive-descent reader of the header dict, over file[pos, end).
class DictReader {
 public:
  DictReader(std::string_view file, size_t begin, size_t end, Header& h)
      : file_(file), pos_(begin), end_(end), h_(h) {}

  std::string parse() {
    skip_space();
    if (!take('{')) return expected("'{' opening the header dict");
    bool seen[3] = {false, false, false};
    skip_space();
    while (!at('}')) {
      const size_t key_at = pos_;
      std::string_view key;
      if (std::string e = read_string(key, "a quoted key"); !e.empty()) return e;
      const int k = key_index(key);
      if (k < 0)
        return malformed("unknown key '" + printable(key) + "' at offset " +
                         std::to_string(key_at) +
                         " (the keys are 'descr', 'fortran_order' and 'shape')");
      if (seen[k])
        return malformed("duplicate key '" + std::string(key) + "' at offset " +
                         std::to_string(key_at));
      seen[k] = true;
      skip_space();
      if (!take(':')) return expected("':' after key '" + std::string(key) + "'");
      skip_space();
      if (std::string e = parse_value(k); !e.empty()) return e;
      skip_space();
      if (take(',')) {
        skip_space();
      } else if (!at('}')) {
        return expected("',' or '}' after the value of '" + std::string(key) + "'");
      }
    }
    ++pos_;  // the '}'
    // NumPy pads with spaces and ends with '\n'; any whitespace is harmless, anything else is
    // not part of a dict literal.
    skip_space();
    if (pos_ != end_) return expected("only padding after the header dict");
    static constexpr const char* kNames[] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; ++k)
      if (!seen[k]) return malformed(std::string("no '") + kNames[k] + "' key");
    return "";
  }

 private:
  static int key_index(std::string_view key) {
    if (key == "descr") return 0;
    if (key == "fortran_order") return 1;
    if (key == "shape") return 2;
    return -1;
  }

  std::string parse_value(int key) {
    if (key == 0) return parse_descr_value();
    if (key == 1) return parse_bool(h_.fortran_order);
    return parse_shape();
  }

  std::string parse_descr_value() {
    if (at('[')) return "structured .npy dtypes (a list as 'descr') are not supported";
    std::string_view descr;
    if (std::string e = read_string(descr, "a quoted string as the value of 'descr'"); !e.empty())
      return e;
    h_.descr = std::string(descr);
    return parse_descr(descr, h_);
  }

  std::string parse_bool(bool& out) {
    const size_t start = pos_;
    while (pos_ < end_ && is_name_char(file_[pos_])) ++pos_;
    const std::string_view word = file_.substr(start, pos_ - start);
    if (word == "True" || word == "False") {
      out = word == "True";
      return "";
    }
    pos_ = start;
    return expected("True or False as the value of 'fortran_order'");
  }

  std::string parse_shape() {
    if (!take('(')) return expected("'(' opening the tuple of 'shape'");
    skip_space();
    bool trailing_comma = false;
    while (!at(')')) {
      if (h_.shape.size() == kMaxDims)
        return "shape has more than " + std::to_string(kMaxDims) + " dimensions";
      int64_t dim = 0;
      if (std::string e = parse_dim(dim); !e.empty()) return e;
      h_.shape.push_back(dim);
      skip_space();
      trailing_comma = take(',');
      if (trailing_comma) {
        skip_space();
      } else if (!at(')')) {
        return expected("',' or ')' in the tuple of 'shape'");
      }
    }
    // In Python (5) is the int 5, not a tuple: NumPy refuses it too.
    if (h_.shape.size() == 1 && !trailing_comma)
      return malformed("'shape' (" + std::to_string(h_.shape[0]) +
                       ") is an int, not a tuple; a one-dimensional shape is written (" +
                       std::to_string(h_.shape[0]) + ",)");
    ++pos_;  // the ')'
    return "";
  }

  // One dimension: a decimal integer as Python writes it (no leading zeros), not negative,
  // within int64.
  std::string parse_dim(int64_t& out) {
    const size_t start = pos_;
    const bool negative = take('-');
    const size_t digits_at = pos_;
    while (pos_ < end_ && is_digit(file_[pos_])) ++pos_;
    const std::string_view digits = file_.substr(digits_at, pos_ - digits_at);
    if (digits.empty()) {
      pos_ = start;
      return expected("an integer in the tuple of 'shape'");
    }
    // Python 2's long suffix, which NumPy's reader strips from version 1 and 2 headers.
    if (h_.version <= 2 && pos_ < end_ && file_[pos_] == 'L') ++pos_;
    if (pos_ < end_ && is_name_char(file_[pos_])) return expected("',' or ')' after a dimension");
    const std::string text(file_.substr(start, pos_ - start));
    if (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != digits.npos)
      return malformed("dimension " + text + " at offset " + std::to_string(start) +
                       " has a leading zero, which Python does not allow");
    const bool zero = digits.find_first_not_of('0') == digits.npos;
    if (negative && !zero) return "shape dimension " + text + " is negative";
    uint64_t v = 0;
    constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    for (char c : digits) {
      const auto d = static_cast<uint64_t>(c - '0');
      if (v > (kMax - d) / 10) return "shape dimension " + text + " does not fit in int64";
      v = v * 10 + d;
    }
    out = static_cast<int64_t>(v);
    return "";
  }

  // A string literal in either quotes, without escapes: no writer emits any, and refusing them
  // beats decoding them wrong. The prefixes u (Python 2's unicode strings) and r change nothing
  // in such a string, so they are allowed. "" or the error; `what` names the expected string.
  std::string read_string(std::string_view& out, const std::string& what) {
    const size_t prefix_at = pos_;
    if (at('u') || at('U') || at('r') || at('R')) ++pos_;
    if (!at('\'') && !at('"')) {
      pos_ = prefix_at;
      return expected(what);
    }
    const size_t start = pos_;
    const char quote = file_[pos_];
    for (size_t i = start + 1; i < end_; ++i) {
      const char c = file_[i];
      if (c == quote) {
        out = file_.substr(start + 1, i - start - 1);
        pos_ = i + 1;
        return "";
      }
      if (c == '\\' || c == '\n' || c == '\r')
        return malformed("escape or line break at offset " + std::to_string(i) +
                         " in the string at offset " + std::to_string(start) +
                         " (not supported in a .npy header)");
    }
    return malformed("unterminated string at offset " + std::to_string(start));
  }

  void skip_space() {
    while (pos_ < end_ && is_space(file_[pos_])) ++pos_;
  }
  bool at(char c) const { return pos_ < end_ && file_[pos_] == c; }
  bool take(char c) {
    if (!at(c)) return false;
    ++pos_;
    return true;
  }

  static std::string malformed(const std::string& what) { return "malformed .npy header: " + what; }

  // "malformed .npy header: expected X at offset N, found Y".
  std::string expected(const std::string& what) const {
    const std::string found = pos_ < end_ ? shown(file_[pos_]) : "the end of the header";
    return malformed("expected " + what + " at offset " + std::to_string(pos_) + ", found " +
                     found);
  }

  std::string_view file_;
  size_t pos_, end_;
  Header& h_;
};

// The element and byte counts of the shape, each multiplication checked. Like NumPy, zero
// dimensions are left out of the overflow check but the others must still fit: a shape NumPy
// cannot create is refused rather than read as empty.
inline std::string count_elements(Header& h) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  bool empty = false;
  for (int64_t d : h.shape) empty = empty || d == 0;
  const std::string zeros = empty ? " (its zero dimensions left out, as NumPy does)" : "";
  uint64_t nonzero = 1;
  for (int64_t d : h.shape) {
    const auto u = static_cast<uint64_t>(d);
    if (u == 0) continue;
    if (nonzero > kMax / u)
      return "shape " + shape_text(h.shape) + " has more elements than fit in 64 bits" + zeros;
    nonzero *= u;
  }
  if (nonzero > kMax / h.item_size)
    return "shape " + shape_text(h.shape) + " of '" + h.descr +
           "' has more bytes than fit in 64 bits" + zeros;
  h.element_count = empty ? 0 : nonzero;
  h.byte_count = h.element_count * h.item_size;
  return "";
}

inline std::string parse(std::string_view file, Header& h) {
  if (std::string e = parse_preamble(file, h); !e.empty()) return e;
  const size_t begin = h.version == 1 ? 10 : 12;
  if (std::string e = DictReader(file, begin, static_cast<size_t>(h.data_offset), h).parse();
      !e.empty())
    return e;
  return count_elements(h);
}

}  // namespace detail

inline std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

inline ParseResult parse_header(std::string_view file) {
  ParseResult r;
  r.error = detail::parse(file, r.header);
  if (!r.ok()) r.header = Header{};
  return r;
}

inline std::string check_c_order_data(const Header& header, uint64_t file_size) {
  if (header.fortran_order) return "Fortran-order arrays are not supported";
  const uint64_t data = file_size >= header.data_offset ? file_size - header.data_offset : 0;
  if (data != header.byte_count)
    return "the header's shape " + shape_text(header.shape) + " of '" + header.descr + "' needs " +
           std::to_string(header.byte_count) + " bytes of data, the file has " +
           std::to_string(data) + " after the header";
  return "";
}

}  // namespace kiln::npy

#endif  // KILN_NPY_HEADER_H
