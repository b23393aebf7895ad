// libFuzzer target for the text that kiln reads from tuning logs: a record line
// (tuner/record.h parse_record) and a config (schedules::Config::from_json). Beyond "never
// crash, never throw anything but UserError", it checks that every accepted input
// round-trips: writing what was read and reading it back gives the same canonical text.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "compiler/base/error.h"
#include "schedules/config.h"
#include "tuner/record.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "records_fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}

void check_record(std::string_view text) {
  kiln::tuner::ParsedRecord parsed = kiln::tuner::parse_record(text);
  if (!parsed.record) {
    if (parsed.error.empty()) fail("rejected a line without saying why", std::string(text));
    return;
  }
  std::string line = kiln::tuner::record_to_json(*parsed.record);
  kiln::tuner::ParsedRecord again = kiln::tuner::parse_record(line);
  if (!again.record) fail("cannot read back what it wrote", line + "\n" + again.error);
  if (kiln::tuner::record_to_json(*again.record) != line) fail("record round trip differs", line);
}

void check_config(std::string_view text) {
  kiln::schedules::Config config;
  try {
    config = kiln::schedules::Config::from_json(std::string(text));
  } catch (const kiln::UserError&) {
    return;  // a clear rejection is the right answer to bad text
  }
  kiln::schedules::Config again = kiln::schedules::Config::from_json(config.to_json());
  if (!(again == config)) fail("config round trip differs", config.to_json());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  check_record(text);
  check_config(text);
  return 0;
}
