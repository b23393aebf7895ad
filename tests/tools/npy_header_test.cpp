// The .npy preamble parser shared by `kiln run` and model_app (kiln/npy_header.h): the header
// text as NumPy and other writers spell it, and every way a damaged or hostile one is refused
// with its own message instead of a guess.
#include "kiln/npy_header.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::npy {
namespace {

// A .npy preamble of format `version`.0 around `dict`, padded as NumPy pads it (spaces, then
// '\n', to a multiple of 64 bytes), followed by `data`.
std::string npy(const std::string& dict, int version = 1, const std::string& data = "") {
  const size_t len_bytes = version == 1 ? 2 : 4;
  std::string header = dict;
  while ((8 + len_bytes + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(version);
  out += '\0';
  for (size_t i = 0; i < len_bytes; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

Header parsed(const std::string& file) {
  const ParseResult r = parse_header(file);
  EXPECT_TRUE(r.ok()) << r.error;
  return r.header;
}

std::string error_of(const std::string& file) {
  const ParseResult r = parse_header(file);
  EXPECT_FALSE(r.ok()) << "accepted";
  return r.error;
}

TEST(NpyHeader, NumpysOwnSpelling) {
  const std::string file = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  const Header h = parsed(file);
  EXPECT_EQ(h.version, 1);
  EXPECT_EQ(h.data_offset, 128u);  // 10 + 59 bytes of dict, padded to a multiple of 64
  EXPECT_EQ(h.descr, "<f4");
  EXPECT_EQ(h.dtype, "f4");
  EXPECT_EQ(h.item_size, 4u);
  EXPECT_FALSE(h.fortran_order);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(h.element_count, 6u);
  EXPECT_EQ(h.byte_count, 24u);
}

// The bug this parser replaces: a header without spaces was refused as Fortran order.
TEST(NpyHeader, NoSpaces) {
  const Header h = parsed(npy("{'descr':'<f4','fortran_order':False,'shape':(2,3)}"));
  EXPECT_FALSE(h.fortran_order);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(h.byte_count, 24u);
}

TEST(NpyHeader, AnyWhitespaceBetweenTokens) {
  const Header h =
      parsed(npy("\t{ \n'shape'\t:\n( 7 ,\t8 , ) ,'descr' :\r\n'<i8' , 'fortran_order' :False\n}"));
  EXPECT_EQ(h.shape, (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(h.byte_count, 7u * 8u * 8u);
}

TEST(NpyHeader, KeysInAnyOrder) {
  std::vector<std::string> items = {"'descr': '<i2'", "'fortran_order': False", "'shape': (5,)"};
  std::sort(items.begin(), items.end());
  do {
    const Header h = parsed(npy("{" + items[0] + ", " + items[1] + ", " + items[2] + "}"));
    EXPECT_EQ(h.dtype, "i2");
    EXPECT_EQ(h.shape, (std::vector<int64_t>{5}));
    EXPECT_EQ(h.byte_count, 10u);
  } while (std::next_permutation(items.begin(), items.end()));
}

TEST(NpyHeader, DoubleQuotes) {
  const Header h = parsed(npy(R"({"descr": "|u1", "fortran_order": False, "shape": (3,)})"));
  EXPECT_EQ(h.dtype, "u1");
  EXPECT_EQ(h.byte_count, 3u);
  EXPECT_EQ(parsed(npy(R"({"descr": '<f2', 'fortran_order': False, "shape": ()})")).dtype, "f2");
  EXPECT_NE(error_of(npy(R"({'descr": '<f4', 'fortran_order': False, 'shape': ()})"))
                .find("malformed .npy header"),
            std::string::npos);
}

// Python 2 era writers: u'' strings are plain strings in Python 3.
TEST(NpyHeader, NoOpStringPrefixes) {
  const Header h = parsed(npy("{u'descr': u'<f4', r'fortran_order': False, U'shape': (2L,)}"));
  EXPECT_EQ(h.dtype, "f4");
  EXPECT_EQ(h.shape, (std::vector<int64_t>{2}));
  EXPECT_NE(error_of(npy("{b'descr': '<f4', 'fortran_order': False, 'shape': ()}"))
                .find("expected a quoted key at offset 11, found 'b'"),
            std::string::npos);
}

TEST(NpyHeader, Versions1To3) {
  const std::string dict = "{'descr':'<f8','fortran_order':False,'shape':(4,)}";
  for (int version : {1, 2, 3}) {
    const Header h = parsed(npy(dict, version, std::string(32, '\0')));
    EXPECT_EQ(h.version, version);
    EXPECT_EQ(h.data_offset, 64u);
    EXPECT_EQ(h.byte_count, 32u);
    EXPECT_EQ(check_c_order_data(h, 64 + 32), "");
  }
  // A header longer than version 1's 65535 bytes, which only versions 2 and 3 can hold.
  const std::string wide =
      "{'descr': '<f8', 'fortran_order': False, 'shape': (4,)" + std::string(70000, ' ') + "}";
  EXPECT_EQ(parsed(npy(wide, 2)).shape, (std::vector<int64_t>{4}));

  std::string v4 = npy(dict);
  v4[6] = 4;
  EXPECT_EQ(error_of(v4), ".npy format version 4.0 is not supported (1.0, 2.0 and 3.0 are)");
  std::string v1_1 = npy(dict);
  v1_1[7] = 1;
  EXPECT_EQ(error_of(v1_1), ".npy format version 1.1 is not supported (1.0, 2.0 and 3.0 are)");
}

TEST(NpyHeader, ZeroDimensionalArrayHoldsOneElement) {
  const Header h = parsed(npy("{'descr': '<f4', 'fortran_order': False, 'shape': ()}"));
  EXPECT_TRUE(h.shape.empty());
  EXPECT_EQ(h.element_count, 1u);
  EXPECT_EQ(h.byte_count, 4u);
}

TEST(NpyHeader, TrailingCommas) {
  EXPECT_EQ(parsed(npy("{'descr':'<f4','fortran_order':False,'shape':(2,3,),}")).byte_count, 24u);
  EXPECT_EQ(parsed(npy("{'descr':'<f4','fortran_order':False,'shape':(5,)}")).byte_count, 20u);
  // (5) is an int in Python, not a tuple; ( , ) and a doubled comma are not Python at all.
  EXPECT_EQ(error_of(npy("{'descr':'<f4','fortran_order':False,'shape':(5)}")),
            "malformed .npy header: 'shape' (5) is an int, not a tuple; a one-dimensional shape "
            "is written (5,)");
  EXPECT_NE(error_of(npy("{'descr':'<f4','fortran_order':False,'shape':(,)}"))
                .find("expected an integer in the tuple of 'shape'"),
            std::string::npos);
  EXPECT_NE(error_of(npy("{'descr':'<f4','fortran_order':False,,'shape':(1,)}"))
                .find("expected a quoted key"),
            std::string::npos);
}

// What tools/npy_file.cpp's write_npy writes: `(5,)`, `(2,3)` and `()` with a trailing ", }".
TEST(NpyHeader, KilnsOwnWriterParses) {
  for (const char* dims : {"5,", "2,3", ""}) {
    const Header h = parsed(
        npy(std::string("{'descr': '|b1', 'fortran_order': False, 'shape': (") + dims + "), }"));
    EXPECT_EQ(h.dtype, "b1");
  }
}

TEST(NpyHeader, GarbageHeaderIsMalformedNotFortran) {
  const std::string e = error_of(npy("hello, world"));
  EXPECT_EQ(e,
            "malformed .npy header: expected '{' opening the header dict at offset 10, found "
            "'h'");
  EXPECT_EQ(e.find("Fortran"), std::string::npos);
  EXPECT_NE(error_of(npy("")).find("expected '{'"), std::string::npos);
  EXPECT_NE(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} junk"))
                .find("expected only padding after the header dict"),
            std::string::npos);
  EXPECT_NE(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)"))
                .find("expected ',' or '}' after the value of 'shape'"),
            std::string::npos);
}

TEST(NpyHeader, ErrorsNameTheFileOffset) {
  // The header text starts at byte 10; "{'descr'" ends at byte 18, where ':' belongs.
  EXPECT_EQ(error_of(npy("{'descr' '<f4', 'fortran_order': False, 'shape': ()}")),
            "malformed .npy header: expected ':' after key 'descr' at offset 19, found \"'\"");
  EXPECT_EQ(error_of(npy("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}")),
            "malformed .npy header: expected True or False as the value of 'fortran_order' at "
            "offset 44, found '0'");
}

TEST(NpyHeader, KeysExactlyOnce) {
  EXPECT_EQ(error_of(npy("{'descr': '<f4', 'shape': ()}")),
            "malformed .npy header: no 'fortran_order' key");
  EXPECT_EQ(error_of(npy("{}")), "malformed .npy header: no 'descr' key");
  EXPECT_EQ(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'shape': ()}")),
            "malformed .npy header: duplicate key 'shape' at offset 64");
  EXPECT_EQ(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x\x01': 1}")),
            "malformed .npy header: unknown key 'x\\x01' at offset 64 (the keys are 'descr', "
            "'fortran_order' and 'shape')");
  // The old substring matcher found 'shape': inside another string.
  EXPECT_NE(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'note': \"'shape': (1,)\"}"))
                .find("unknown key 'note'"),
            std::string::npos);
}

TEST(NpyHeader, MalformedLiterals) {
  auto with_shape = [](const std::string& shape) {
    return npy("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + "}");
  };
  // True is an int to Python (and so to NumPy), but no writer means a dimension by it.
  for (const char* bad :
       {"[2, 3]", "(2.5,)", "(0x10,)", "(1_000,)", "(2 3)", "(2,", "2", "(+2,)", "(True,)"})
    EXPECT_NE(error_of(with_shape(bad)).find("malformed .npy header"), std::string::npos) << bad;
  EXPECT_NE(error_of(with_shape("(007,)")).find("leading zero"), std::string::npos);
  EXPECT_EQ(parsed(with_shape("(00, 0)")).element_count, 0u);
  EXPECT_NE(error_of(npy("{'descr': '<f4', 'fortran_order': Falsey, 'shape': ()}"))
                .find("expected True or False"),
            std::string::npos);
  EXPECT_NE(error_of(npy("{'descr': '<\\x66\\x34', 'fortran_order': False, 'shape': ()}"))
                .find("escape or line break"),
            std::string::npos);
  // No padding: the string runs to the end of the header.
  std::string unterminated = npy("{'descr': '<f4");
  unterminated.resize(10 + 14);
  unterminated[8] = 14;
  EXPECT_EQ(error_of(unterminated), "malformed .npy header: unterminated string at offset 20");
  EXPECT_EQ(error_of(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}")),
            "structured .npy dtypes (a list as 'descr') are not supported");
}

TEST(NpyHeader, Python2LongSuffixOnlyInVersions1And2) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 4L)}";
  EXPECT_EQ(parsed(npy(dict, 1)).shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(parsed(npy(dict, 2)).shape, (std::vector<int64_t>{3, 4}));
  EXPECT_NE(error_of(npy(dict, 3)).find("malformed"), std::string::npos);
}

TEST(NpyHeader, FortranOrderIsReportedThenRefusedByTheDataCheck) {
  const Header h = parsed(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3)}"));
  EXPECT_TRUE(h.fortran_order);
  EXPECT_EQ(check_c_order_data(h, h.data_offset + 24), "Fortran-order arrays are not supported");
}

TEST(NpyHeader, DataLengthMustMatch) {
  const Header h = parsed(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}"));
  EXPECT_EQ(check_c_order_data(h, h.data_offset + 24), "");
  EXPECT_EQ(check_c_order_data(h, h.data_offset + 20),
            "the header's shape (2, 3) of '<f4' needs 24 bytes of data, the file has 20 after the "
            "header");
  EXPECT_NE(check_c_order_data(h, h.data_offset + 28), "");
}

TEST(NpyHeader, Dtypes) {
  auto dtype = [](const std::string& descr) {
    return npy("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2,)}");
  };
  for (const char* d : {"<f4", "|b1", "<i8", "|u1", "|i1", "<f2", "<u2", "<i2", "<i4", "<u4", "<u8",
                        "<f8", "=f4", "<i1", "f8", "<c8", "<f16"})
    EXPECT_TRUE(parse_header(dtype(d)).ok()) << d;
  EXPECT_EQ(parsed(dtype("|b1")).byte_count, 2u);
  EXPECT_EQ(parsed(dtype("<u8")).byte_count, 16u);
  EXPECT_EQ(parsed(dtype("<c32")).byte_count, 64u);
  EXPECT_EQ(parsed(dtype(">u1")).dtype, "u1");  // one byte: no order to get wrong
  for (const char* d : {"|S3", "<U2", "|O", "<M8[ns]", "<f3", "<i16", "float32", "", "<"})
    EXPECT_NE(error_of(dtype(d)).find("is not one kiln reads"), std::string::npos) << d;
  EXPECT_NE(error_of(dtype("|f4")).find("byte order '|' is only for one-byte types"),
            std::string::npos);
}

TEST(NpyHeader, BigEndianIsRefusedByName) {
  EXPECT_EQ(error_of(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}")),
            "big-endian .npy arrays are not supported (descr '>f4'); save the array "
            "little-endian ('<f4')");
}

TEST(NpyHeader, NegativeDimension) {
  EXPECT_EQ(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}")),
            "shape dimension -3 is negative");
}

TEST(NpyHeader, DimensionPastInt64) {
  EXPECT_EQ(
      error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}")),
      "shape dimension 99999999999999999999 does not fit in int64");
  EXPECT_EQ(
      error_of(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (9223372036854775808,)}")),
      "shape dimension 9223372036854775808 does not fit in int64");
  const Header h =
      parsed(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (9223372036854775807,)}"));
  EXPECT_EQ(h.byte_count, 9223372036854775807u);
  // A file that short cannot hold it: the data check says so instead of reading past the end.
  EXPECT_NE(check_c_order_data(h, h.data_offset), "");
}

TEST(NpyHeader, ElementCountOverflow) {
  // 2^32 * (2^32 + 1) = 2^32 mod 2^64: the old reader took it as 4 Gi elements.
  EXPECT_EQ(
      error_of(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (4294967296, 4294967297)}")),
      "shape (4294967296, 4294967297) has more elements than fit in 64 bits");
  // A zero dimension does not excuse the others (NumPy refuses this shape too).
  EXPECT_NE(error_of(npy("{'descr': '|u1', 'fortran_order': False, "
                         "'shape': (0, 4294967296, 4294967297)}"))
                .find("has more elements than fit in 64 bits"),
            std::string::npos);
  const Header empty =
      parsed(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4294967296)}"));
  EXPECT_EQ(empty.element_count, 0u);
  EXPECT_EQ(empty.byte_count, 0u);
}

TEST(NpyHeader, ByteCountOverflow) {
  // 2^62 elements fit; 2^62 * 8 bytes do not.
  EXPECT_EQ(error_of(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2147483648, "
                         "2147483648)}")),
            "shape (2147483648, 2147483648) of '<f8' has more bytes than fit in 64 bits");
  EXPECT_EQ(parsed(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, "
                       "1073741824)}"))
                .byte_count,
            uint64_t{1} << 63);
}

TEST(NpyHeader, TooManyDimensions) {
  std::string dims;
  for (int i = 0; i < 65; ++i) dims += "1,";
  EXPECT_EQ(error_of(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + ")}")),
            "shape has more than 64 dimensions");
}

TEST(NpyHeader, BadMagic) {
  std::string file = npy("{'descr': '<f4', 'fortran_order': False, 'shape': ()}");
  file[1] = 'n';
  EXPECT_EQ(error_of(file), "not a .npy file (no \\x93NUMPY magic)");
  EXPECT_EQ(error_of("PK\x03\x04"), "not a .npy file (no \\x93NUMPY magic)");
}

TEST(NpyHeader, TruncatedPreambleOrHeader) {
  const std::string file = npy("{'descr': '<f4', 'fortran_order': False, 'shape': ()}");
  EXPECT_EQ(error_of(""), "truncated .npy file: 0 bytes, shorter than the 10-byte preamble");
  EXPECT_EQ(error_of(file.substr(0, 4)),
            "truncated .npy file: 4 bytes, shorter than the 10-byte preamble");
  EXPECT_EQ(error_of(npy("{}", 2).substr(0, 11)),
            "truncated .npy file: 11 bytes, the version 2 preamble needs 12");
  EXPECT_EQ(error_of(file.substr(0, 63)),
            "truncated .npy header: header_len 54 puts its end at byte 64, the file has 63 bytes");
  // header_len past the file: 0xffff in version 1, 0xffffffff in version 3.
  std::string huge = file;
  huge[8] = huge[9] = '\xff';
  EXPECT_NE(error_of(huge).find("header_len 65535"), std::string::npos);
  std::string huge3 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': ()}", 3);
  for (size_t i = 8; i < 12; ++i) huge3[i] = '\xff';
  EXPECT_NE(error_of(huge3).find("header_len 4294967295"), std::string::npos);
  // Parsing only the preamble (no data yet) is fine: the data check is separate.
  EXPECT_TRUE(parse_header(file).ok());
}

TEST(NpyHeader, ShapeText) {
  EXPECT_EQ(shape_text({}), "()");
  EXPECT_EQ(shape_text({5}), "(5,)");
  EXPECT_EQ(shape_text({2, 3}), "(2, 3)");
}

}  // namespace
}  // namespace kiln::npy
