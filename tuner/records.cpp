#include "tuner/records.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string_view>

#include "compiler/base/error.h"
#include "schedules/registry.h"

namespace kiln::tuner {
namespace {

std::string errno_text() {
  return std::strerror(errno);
}

// Reads [offset, offset + n) of `fd`, retrying short reads; UserError on failure.
void read_at(int fd, const std::string& path, char* buf, size_t n, off_t offset) {
  while (n > 0) {
    ssize_t got = pread(fd, buf, n, offset);
    if (got < 0 && errno == EINTR) continue;
    user_check(got > 0) << "cannot read records file '" << path
                        << "': " << (got == 0 ? "unexpected end of file" : errno_text());
    buf += got;
    n -= static_cast<size_t>(got);
    offset += got;
  }
}

// The offset just after the last '\n' before `end` (0 when there is none).
off_t after_last_newline(int fd, const std::string& path, off_t end) {
  char buf[1 << 16];
  while (end > 0) {
    off_t start = end > static_cast<off_t>(sizeof buf) ? end - static_cast<off_t>(sizeof buf) : 0;
    read_at(fd, path, buf, static_cast<size_t>(end - start), start);
    for (off_t i = end - start; i > 0; --i)
      if (buf[i - 1] == '\n') return start + i;
    end = start;
  }
  return 0;
}

size_t count_newlines(int fd, const std::string& path, off_t end) {
  char buf[1 << 16];
  size_t lines = 0;
  for (off_t pos = 0; pos < end;) {
    size_t n = static_cast<size_t>(std::min<off_t>(end - pos, sizeof buf));
    read_at(fd, path, buf, n, pos);
    for (size_t i = 0; i < n; ++i) lines += buf[i] == '\n';
    pos += static_cast<off_t>(n);
  }
  return lines;
}

// Every line a RecordWriter writes starts so (record_to_json puts "v" first).
constexpr std::string_view kRecordStart = R"({"v":)";

// Whether `text` could be the start of a record cut short by a kill: a prefix of
// kRecordStart, or kRecordStart followed by anything.
bool looks_like_torn_record(std::string_view text) {
  const size_t n = std::min(text.size(), kRecordStart.size());
  return !text.empty() && text.substr(0, n) == kRecordStart.substr(0, n);
}

// A file the user pointed --log at that is not a log (the model itself, a config, a binary)
// must be refused before a byte of it changes. A log's first line is a record; a log whose
// only line is torn (a run killed during its first write) starts like one.
void check_is_log(int fd, const std::string& path, off_t size) {
  std::string head(static_cast<size_t>(std::min<off_t>(size, 1 << 20)), '\0');
  read_at(fd, path, head.data(), head.size(), 0);
  const size_t newline = head.find('\n');
  const std::string_view first = std::string_view(head).substr(0, newline);
  if (newline == std::string::npos && static_cast<off_t>(head.size()) == size) {
    user_check(looks_like_torn_record(first) || parse_record(first).record)
        << "'" << path << "' is not a kiln records log (it does not start with a record); "
        << "refusing to append to it: choose a new --log file";
    return;
  }
  ParsedRecord parsed = parse_record(first);
  user_check(parsed.record.has_value())
      << "'" << path << "' is not a kiln records log (its first line is not a record: "
      << parsed.error << "); refusing to append to it: choose a new --log file";
}

const schedules::OpTemplate* find_template(const std::string& name) {
  for (const schedules::OpTemplate* t : schedules::all_templates())
    if (t->name() == name) return t;
  return nullptr;
}

std::string template_names_for(const std::string& op) {
  std::string names;
  for (const schedules::OpTemplate* t : schedules::all_templates())
    if (t->op() == op) names += (names.empty() ? "" : ", ") + t->name();
  return names.empty() ? "none implements op '" + op + "'" : "known for " + op + ": " + names;
}

// Checks records against the operator library, remembering each (template, workload,
// target)'s space: a log holds thousands of records of a few tasks.
class LibraryCheck {
 public:
  // Why the record does not fit the library, or "" when it does. A config that lacks knobs
  // added to the template since it was written gets their legacy defaults here, so every
  // reader of logs (apply-history-best, resume, transfer) sees it in today's space.
  std::string problem(TuningRecord& r) {
    const schedules::OpTemplate* tpl = find_template(r.template_name);
    if (!tpl)
      return "unknown template '" + r.template_name + "' (" + template_names_for(r.workload.op) +
             ")";
    if (tpl->op() != r.workload.op)
      return "template '" + tpl->name() + "' implements op '" + tpl->op() + "', not '" +
             r.workload.op + "'";
    const Task& task = space_of(*tpl, r);
    if (!task.problem.empty()) return task.problem;
    r.config = task.space.with_defaults(r.config);
    for (const auto& [knob, value] : r.config.values()) {
      bool known = false;
      std::string knobs;
      for (const schedules::Knob& k : task.space.knobs()) {
        known |= k.name == knob;
        knobs += (knobs.empty() ? "" : ", ") + k.name;
      }
      if (!known)
        return "config outside template '" + tpl->name() + "''s current space: knob '" + knob +
               "' is not in it (knobs: " + knobs + ")";
    }
    try {
      task.space.validate(r.config);
    } catch (const UserError& e) {
      return "config outside template '" + tpl->name() + "''s current space: " + e.what();
    }
    return "";
  }

 private:
  struct Task {
    schedules::ConfigSpace space;
    std::string problem;  // why the template cannot build this workload here
  };

  const Task& space_of(const schedules::OpTemplate& tpl, const TuningRecord& r) {
    std::string key = task_key(r);
    auto it = tasks_.find(key);
    if (it != tasks_.end()) return it->second;
    Task task;
    // A hand-edited workload may upset a template in any way: it is the record's problem.
    try {
      if (!tpl.applies(r.workload, r.target))
        task.problem = "template '" + tpl.name() + "' does not apply to " + r.workload.str() +
                       " on target " + r.target.name;
      else
        task.space = tpl.space(r.workload, r.target);
    } catch (const std::exception& e) {
      task.problem = "template '" + tpl.name() + "' rejects " + r.workload.str() + ": " + e.what();
    }
    return tasks_.emplace(key, std::move(task)).first->second;
  }

  std::map<std::string, Task> tasks_;
};

void load_file(const std::string& path, const LoadOptions& options, LibraryCheck& library,
               LoadedRecords& out) {
  std::error_code ec;
  user_check(!std::filesystem::is_directory(path, ec))
      << "records file '" << path << "' is a directory, not a log";
  std::ifstream in(path, std::ios::binary);
  user_check(in.good()) << "cannot open records file '" << path << "': " << errno_text();
  std::string wanted_target = options.target ? target_key(*options.target) : "";
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    // getline stops at the end of the file without a '\n' only on a torn last line.
    bool torn = in.eof();
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto report = [&](std::string reason) {
      out.problems.push_back({path, number, std::move(reason)});
    };
    ParsedRecord parsed = parse_record(line);
    if (!parsed.record) {
      report((torn ? "torn last line (no final newline): " : "") + parsed.error);
      continue;
    }
    TuningRecord& r = *parsed.record;
    if (options.target && target_key(r.target) != wanted_target) {
      report("recorded for target '" + r.target.name + "' (" + target_key(r.target) +
             "), not the requested '" + options.target->name + "' (" + wanted_target + ")");
      continue;
    }
    if (options.check_templates) {
      std::string problem = library.problem(r);
      if (!problem.empty()) {
        report(problem);
        continue;
      }
    }
    out.records.push_back(std::move(*parsed.record));
  }
}

}  // namespace

std::string RecordProblem::str() const {
  return file + ":" + std::to_string(line) + ": " + reason;
}

RecordWriter::RecordWriter(const std::string& path) : path_(path) {
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  user_check(fd_ >= 0) << "cannot open records file '" << path
                       << "' for appending: " << errno_text();
  try {
    struct stat st {};
    user_check(fstat(fd_, &st) == 0)
        << "cannot stat records file '" << path << "': " << errno_text();
    user_check(S_ISREG(st.st_mode))
        << "records file '" << path << "' is not a regular file";
    if (st.st_size == 0) return;
    check_is_log(fd_, path, st.st_size);
    char last = 0;
    read_at(fd_, path, &last, 1, st.st_size - 1);
    if (last == '\n') return;
    off_t cut = after_last_newline(fd_, path, st.st_size - 1);
    size_t line = count_newlines(fd_, path, cut) + 1;
    std::string tail(static_cast<size_t>(st.st_size - cut), '\0');
    read_at(fd_, path, tail.data(), tail.size(), cut);
    if (parse_record(tail).record) {
      // A whole record that only lacks its newline (written by hand, or killed between
      // the two): keep it and end the line.
      user_check(write(fd_, "\n", 1) == 1 && fsync(fd_) == 0)
          << "cannot end the last line of records file '" << path << "': " << errno_text();
      repaired_tail_ = RecordProblem{path, line, "last line had no final newline; added one"};
      return;
    }
    // A run killed in the middle of a write: drop the partial line so the next record
    // does not glue itself onto it (which would lose both). Only a line that starts as a
    // record does is cut: anything else is somebody's text, and stays.
    user_check(looks_like_torn_record(tail))
        << "records file '" << path << "' ends with a line " << line
        << " that is neither a record nor the start of one; refusing to append to it";
    user_check(ftruncate(fd_, cut) == 0 && fsync(fd_) == 0)
        << "cannot cut the torn last line of records file '" << path << "': " << errno_text();
    repaired_tail_ =
        RecordProblem{path, line,
                      "torn last line (" + std::to_string(tail.size()) +
                          " bytes with no final newline, e.g. a run killed while writing) cut off"};
  } catch (...) {
    close(fd_);
    throw;
  }
}

RecordWriter::~RecordWriter() {
  if (fd_ >= 0) close(fd_);
}

void RecordWriter::append(const std::vector<TuningRecord>& batch) {
  std::string text;
  for (const TuningRecord& r : batch) text += record_to_json(r) + "\n";
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    user_check(n > 0) << "cannot write to records file '" << path_ << "': " << errno_text();
    p += n;
    left -= static_cast<size_t>(n);
  }
  user_check(fsync(fd_) == 0) << "cannot sync records file '" << path_ << "': " << errno_text();
}

LoadedRecords load_records(const std::vector<std::string>& paths, const LoadOptions& options) {
  LoadedRecords out;
  LibraryCheck library;
  for (const std::string& path : paths) load_file(path, options, library, out);
  return out;
}

std::string task_key(const TuningRecord& r) {
  return r.template_name + " | " + r.workload.str() + " | " + target_key(r.target);
}

namespace {
std::string measured_key(const std::string& template_name, const schedules::Workload& w,
                         const Target& t, const schedules::Config& c) {
  return template_name + " | " + w.str() + " | " + target_key(t) + " | " + c.to_json();
}
}  // namespace

MeasuredSet::MeasuredSet(const std::vector<TuningRecord>& records) {
  for (const TuningRecord& r : records) {
    MeasureErrorKind e = r.result.error;
    if (e == MeasureErrorKind::Cancelled || e == MeasureErrorKind::WorkerLost) continue;
    keys_.insert(measured_key(r.template_name, r.workload, r.target, r.config));
  }
}

bool MeasuredSet::contains(const std::string& template_name, const schedules::Workload& w,
                           const Target& t, const schedules::Config& c) const {
  return keys_.count(measured_key(template_name, w, t, c)) > 0;
}

}  // namespace kiln::tuner
