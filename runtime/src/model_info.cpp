// Parsing kiln_model_info: lines of space-separated fields, every number checked for range and
// every byte count for overflow, so that a damaged record is an error and never a huge
// allocation.
#include "model_info.h"

#include <charconv>

#include "kiln/kernel_abi.h"
#include "kiln/runtime.h"
#include "message.h"

namespace kiln {
namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t at = 0;
  for (;;) {
    const std::size_t end = text.find(sep, at);
    parts.push_back(text.substr(at, end == std::string_view::npos ? end : end - at));
    if (end == std::string_view::npos) return parts;
    at = end + 1;
  }
}

class Parser {
 public:
  explicit Parser(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(std::initializer_list<std::string_view> what) const {
    throw_error(ErrorCode::kLoad, {"kiln: '", source_, "' has a malformed ", KILN_MODEL_INFO_SYMBOL,
                                   ": line ", Num(line_), ": ", concat(what)});
  }

  void at_line(int line) { line_ = line; }

  uint64_t number(std::string_view field, const char* what, int base = 10) const {
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v, base);
    if (field.empty() || ec != std::errc() || end != field.data() + field.size())
      fail({what, " '", field, "' is not a number"});
    return v;
  }

  // "NAME DTYPE RANK D0 D1 ..." (the fields after the keyword).
  TensorInfo tensor(const std::vector<std::string_view>& f) const {
    if (f.size() < 4) fail({"expected '", f[0], " NAME DTYPE RANK DIMS...'"});
    TensorInfo t;
    t.name = std::string(f[1]);
    t.dtype = std::string(f[2]);
    if (t.name.empty()) fail({"empty tensor name"});
    const std::size_t element = dtype_bytes(t.dtype);
    if (element == 0) fail({"unknown dtype '", t.dtype, "'"});
    const uint64_t rank = number(f[3], "rank");
    if (rank != f.size() - 4) {
      fail({"rank ", Num(rank), " but ", Num(f.size() - 4), " dimensions"});
    }
    uint64_t bytes = element;
    for (std::size_t i = 4; i < f.size(); ++i) {
      const uint64_t d = number(f[i], "dimension");
      if (d > static_cast<uint64_t>(INT64_MAX) || (d != 0 && bytes > UINT64_MAX / d))
        fail({"tensor '", t.name, "' is too large"});
      bytes *= d;
      t.shape.push_back(static_cast<int64_t>(d));
    }
    t.bytes = bytes;
    return t;
  }

 private:
  const std::string& source_;
  int line_ = 0;
};

}  // namespace

std::size_t dtype_bytes(std::string_view dtype) {
  static constexpr struct {
    std::string_view name;
    std::size_t bytes;
  } kTypes[] = {{"f32", 4}, {"f16", 2}, {"bf16", 2}, {"f64", 8}, {"i8", 1},  {"i16", 2},
                {"i32", 4}, {"i64", 8}, {"u8", 1},   {"u16", 2}, {"u32", 4}, {"bool", 1}};
  for (const auto& t : kTypes)
    if (t.name == dtype) return t.bytes;
  return 0;
}

uint64_t ModelInfo::staging_bytes() const {
  if (!pad_batches || num_batch_classes == 0) return 0;
  uint64_t samples = 0;  // of every batched tensor, min_batch each
  for (const TensorInfo& t : inputs) samples += t.batched ? t.bytes : 0;
  for (const TensorInfo& t : outputs) samples += t.bytes;
  // Each tensor's slot 64-byte aligned; the record's sizes are bounded (parse_model_info).
  return samples / static_cast<uint64_t>(min_batch) *
             static_cast<uint64_t>(batch_classes[num_batch_classes]) +
         64 * (inputs.size() + outputs.size());
}

ModelInfo parse_model_info(std::string_view text, const std::string& source) {
  Parser parser(source);
  ModelInfo info;
  bool has_name = false, has_workspace = false, has_params = false;
  std::string_view batch_flags;
  bool classes_increase = true;
  std::vector<std::string_view> lines = split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();  // a final newline
  for (std::size_t i = 0; i < lines.size(); ++i) {
    parser.at_line(static_cast<int>(i + 1));
    const std::vector<std::string_view> f = split(lines[i], ' ');
    const std::string_view key = f[0];
    if (i == 0) {
      if (key != "kiln-model" || f.size() != 2) parser.fail({"expected 'kiln-model VERSION'"});
      const uint64_t version = parser.number(f[1], "version");
      if (version != KILN_MODEL_INFO_VERSION) {
        parser.fail({"format version ", Num(version), ", this runtime reads ",
                     Num(KILN_MODEL_INFO_VERSION), " (rebuild the model, or update the runtime)"});
      }
      continue;
    }
    if (key == "name" && f.size() == 2 && !f[1].empty()) {
      info.name = std::string(f[1]);
      has_name = true;
    } else if (key == "workspace" && f.size() == 2) {
      info.workspace_bytes = parser.number(f[1], "workspace bytes");
      has_workspace = true;
    } else if (key == "params" && f.size() == 3) {
      info.params_bytes = parser.number(f[1], "params bytes");
      if (f[2].size() != 16) parser.fail({"params checksum must be 16 hex digits"});
      info.params_checksum = parser.number(f[2], "params checksum", 16);
      has_params = true;
    } else if (key == "verify") {
      info.verify = lines[i].substr(key.size());  // read as the first run goes (ParamsFirstUse)
    } else if (key == "batch" && f.size() >= 4 && f.size() <= 5 + kMaxBatchClasses) {
      info.min_batch = static_cast<int64_t>(parser.number(f[1], "batch"));
      info.max_batch = static_cast<int64_t>(parser.number(f[2], "batch"));
      batch_flags = f[3];
      info.pad_batches = f.back() == "pad";
      for (std::size_t c = 4; c < f.size() - info.pad_batches; ++c) {
        const auto size = static_cast<int64_t>(parser.number(f[c], "batch class"));
        classes_increase = classes_increase && size > info.batch_classes[info.num_batch_classes];
        info.batch_classes[++info.num_batch_classes] = size;
      }
    } else if (key == "input") {
      info.inputs.push_back(parser.tensor(f));
    } else if (key == "output") {
      info.outputs.push_back(parser.tensor(f));
    } else {
      parser.fail({"unexpected '", lines[i].substr(0, 40), "'"});
    }
  }
  parser.at_line(static_cast<int>(lines.size()));
  if (lines.empty()) parser.fail({"empty record"});
  if (!has_name || !has_workspace || !has_params)
    parser.fail({"missing one of the 'name', 'workspace' and 'params' lines"});
  if (info.outputs.empty()) parser.fail({"the model has no outputs"});
  if (info.inputs.size() > kMaxModelTensors || info.outputs.size() > kMaxModelTensors)
    parser.fail({"over 64 inputs or outputs"});
  // A batched tensor is described at the smallest batch; MAX samples of it must be countable.
  const uint64_t n = static_cast<uint64_t>(info.min_batch);
  bool bad = !classes_increase || info.batch_classes[info.num_batch_classes] > (1 << 30) ||
             (info.max_batch > 0 && (n < 1 || info.max_batch < info.min_batch ||
                                     info.max_batch > (1 << 30) ||
                                     batch_flags.size() != info.inputs.size()));
  for (std::size_t i = 0; i < info.inputs.size() + info.outputs.size() && info.max_batch; ++i) {
    const bool in = i < info.inputs.size();
    TensorInfo& t = in ? info.inputs[i] : info.outputs[i - info.inputs.size()];
    if (in && !bad && batch_flags[i] == '0') continue;
    bad = bad || (in && batch_flags[i] != '1') || t.shape.empty() || t.bytes > UINT64_MAX >> 40;
    if (bad) break;
    t.batched = true;
    t.shape[0] *= info.min_batch;
    t.bytes *= n;
  }
  if (bad) parser.fail({"the batch line does not fit the inputs and outputs"});
  return info;
}

}  // namespace kiln
