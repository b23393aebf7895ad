#include "compiler/base/output_paths.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "compiler/base/error.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

std::string quoted(const fs::path& p) {
  return "'" + p.string() + "'";
}

// An absolute path without "." or ".." parts or a trailing '/': "out/", "./out" and "out"
// all name the folder "out", whose parent is where its temporary goes.
fs::path normal_absolute(const std::string& path, const std::string& head) {
  user_check(!path.empty()) << head << ": an empty path";
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  user_check(!ec) << head << ": " << ec.message();
  p = p.lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  return p;
}

bool exists_here(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() != fs::file_type::not_found;
}

// Why `p` (which exists, as a name at least) is not a folder one can use, or "" when it is a
// folder. Follows symbolic links.
std::string not_a_folder(const fs::path& p) {
  std::error_code ec;
  const fs::file_status s = fs::status(p, ec);
  if (fs::is_directory(s)) return "";
  if (s.type() == fs::file_type::not_found) return quoted(p) + " is a symbolic link to nothing";
  if (ec) return "cannot look at " + quoted(p) + ": " + ec.message();
  return quoted(p) + " is not a folder";
}

// The nearest ancestor of `p` that exists: where its missing parents would be created.
fs::path nearest_existing_ancestor(const fs::path& p) {
  fs::path a = p.parent_path();
  while (a.has_relative_path() && !exists_here(a)) a = a.parent_path();
  return a;
}

// Files can be created in `folder`: it is a folder this process may write and search.
void require_writable_folder(const fs::path& folder, const std::string& head) {
  const std::string why = not_a_folder(folder);
  user_check(why.empty()) << head << ": " << why;
  user_check(::access(folder.c_str(), W_OK | X_OK) == 0)
      << head << ": cannot write in " << quoted(folder) << ": " << std::strerror(errno);
}

// A folder on another filesystem than its parent cannot be renamed, and its files cannot be
// hard-linked out of it.
bool is_mount_point(const fs::path& dir) {
  struct stat self, parent;
  return ::stat(dir.c_str(), &self) == 0 && ::stat(dir.parent_path().c_str(), &parent) == 0 &&
         self.st_dev != parent.st_dev;
}

// check_replaceable_folder, returning the folder to replace: `dir` made absolute, with a
// symbolic link followed (its target is what the user means by the path).
fs::path replaceable_target(const std::string& dir, const std::string& what) {
  const std::string head = what + " " + dir;
  fs::path p = normal_absolute(dir, head);
  user_check(p.has_filename()) << head << ": the root folder cannot be replaced";
  if (!exists_here(p)) {
    require_writable_folder(nearest_existing_ancestor(p), head);
    return p;
  }
  std::error_code ec;
  const fs::file_type type = fs::status(p, ec).type();
  user_check(type != fs::file_type::not_found) << head << " is a symbolic link to nothing";
  user_check(type == fs::file_type::directory) << head << " exists and is not a folder";
  if (fs::is_symlink(fs::symlink_status(p, ec))) {
    p = fs::canonical(p, ec);
    user_check(!ec) << head << ": cannot follow the symbolic link: " << ec.message();
  }
  user_check(!is_mount_point(p))
      << head << " is a mount point; a folder is replaced by renaming it, which a mount point "
      << "cannot be: write to a folder inside it";
  require_writable_folder(p.parent_path(), head);
  return p;
}

[[noreturn]] void fail(const std::string& head, const std::string& doing, const fs::path& p,
                       int err) {
  throw UserError(head + ": cannot " + doing + " " + quoted(p) + ": " + std::strerror(err));
}

void remove_if_empty(const std::vector<fs::path>& folders) {
  std::error_code ec;
  for (const fs::path& p : folders) fs::remove(p, ec);  // fs::remove takes only empty folders
}

// Creates `parent` and the folders above it that are missing; returns those it made, deepest
// first, for remove_if_empty to take away again when the replacement fails.
std::vector<fs::path> create_parents(const fs::path& parent, const std::string& head) {
  std::vector<fs::path> made;
  for (fs::path p = parent; p.has_relative_path() && !exists_here(p); p = p.parent_path())
    made.push_back(p);
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) {
    remove_if_empty(made);
    user_error() << head << ": cannot create the folder " << quoted(parent) << ": " << ec.message();
  }
  return made;
}

// Makes every folder under `dir` (not through symbolic links) writable by its owner, so that
// its entries can be removed: the old copy of a user's read-only folder is in the old contents.
void make_removable(const fs::path& dir) {
  std::error_code ec, ignored;
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ignored) && !it->is_symlink(ignored)) make_removable(it->path());
}

// A temporary and everything in it; best effort (errors are ignored: what stays is a stale
// temporary for the next replace_folder).
void remove_tree(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
  if (!ec) return;
  make_removable(p);
  fs::remove_all(p, ec);
}

std::vector<fs::path> entries_of(const fs::path& dir, const std::string& head) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    out.push_back(it->path());
  user_check(!ec) << head << ": cannot list " << quoted(dir) << ": " << ec.message();
  return out;
}

// The owner and mode of a folder made to stand for `st`'s. The owner only where this process
// may give it (root): `sudo kiln compile -o OUT` leaves OUT its user's, as it found it.
void take_owner_and_mode(const fs::path& p, const struct stat& st, const std::string& head) {
  if (::lchown(p.c_str(), st.st_uid, st.st_gid) != 0) {
    // EPERM: not root; the folder is this user's, as any file it writes would be.
  }
  if (::chmod(p.c_str(), st.st_mode & 07777) != 0) fail(head, "set the mode of", p, errno);
}

// Makes `to` the same entry as `from` without copying data: a hard link of a file, a new
// symbolic link with the same target, a folder of the same mode holding the same entries.
// A folder on another filesystem (`dev` is the old folder's) is refused rather than copied.
void mirror(const fs::path& from, const fs::path& to, dev_t dev, const std::string& head) {
  struct stat st;
  if (::lstat(from.c_str(), &st) != 0) fail(head, "look at", from, errno);
  if (S_ISDIR(st.st_mode)) {
    user_check(st.st_dev == dev) << head << ": " << quoted(from) << " is a mount point inside the "
                                 << "folder to replace; unmount it or write elsewhere";
    // Writable while it is filled, whatever the old folder's mode; that mode at the end.
    if (::mkdir(to.c_str(), 0700) != 0) fail(head, "create the folder", to, errno);
    for (const fs::path& e : entries_of(from, head)) mirror(e, to / e.filename(), dev, head);
    take_owner_and_mode(to, st, head);
    return;
  }
  if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(from, ec);
    if (!ec) fs::create_symlink(target, to, ec);
    user_check(!ec) << head << ": cannot keep the symbolic link " << quoted(from) << ": "
                    << ec.message();
    if (::lchown(to.c_str(), st.st_uid, st.st_gid) != 0) {
      // Not root: the link is this user's (a link's owner matters only in sticky folders).
    }
    return;
  }
  if (::link(from.c_str(), to.c_str()) == 0) return;
  const int err = errno;
  // No hard links on this filesystem (FAT), or fs.protected_hardlinks refusing another
  // owner's file: a copy of a regular file does as well (the original stays until the swap).
  if (S_ISREG(st.st_mode) && (err == EPERM || err == EMLINK || err == EXDEV || err == ENOTSUP)) {
    std::error_code ec;
    if (fs::copy_file(from, to, ec) && !ec) return;
  }
  fail(head, "keep (hard-link)", from, err);
}

// Every entry of the old folder that the new one neither owns nor has, mirrored into the new
// one: a user's files in OUT (kiln run's outputs/, a report) are there after the swap.
void keep_entries(const fs::path& old_dir, const fs::path& new_dir,
                  const std::vector<std::string>& owned, const std::string& head) {
  struct stat st;
  if (::stat(old_dir.c_str(), &st) != 0) fail(head, "look at", old_dir, errno);
  for (const fs::path& e : entries_of(old_dir, head)) {
    const std::string name = e.filename().string();
    if (std::find(owned.begin(), owned.end(), name) != owned.end()) continue;
    if (exists_here(new_dir / name)) continue;  // written anew
    mirror(e, new_dir / name, st.st_dev, head);
  }
  take_owner_and_mode(new_dir, st, head);
}

// Without an atomic exchange (some network and FAT filesystems): OUT moves aside first, to
// PARENT/.NAME.TAG-old.PID, a name the stale cleanup never matches, so that a kill between
// the two renames leaves the old folder there for the user rather than deleting it.
fs::path swap_by_two_renames(const fs::path& tmp, const fs::path& out, const std::string& tag,
                             const std::string& head) {
  const fs::path aside = temporary_folder(out.string(), tag + "-old", ::getpid());
  remove_tree(aside);
  if (::rename(out.c_str(), aside.c_str()) != 0) fail(head, "move aside", out, errno);
  if (::rename(tmp.c_str(), out.c_str()) == 0) return aside;
  const int err = errno;
  if (::rename(aside.c_str(), out.c_str()) != 0)
    user_error() << head << ": cannot rename " << quoted(tmp) << " to it (" << std::strerror(err)
                 << ") nor move the old folder back from " << quoted(aside) << "; it is there";
  fail(head, "rename the new folder", tmp, err);
}

// Puts the filled temporary in OUT's place; returns where the old contents are now (to be
// removed), or "" when there was no old folder.
fs::path swap_in(const fs::path& tmp, const fs::path& out, const FolderReplacement& r,
                 const std::string& head) {
  if (!exists_here(out)) {
    // A folder created meanwhile is replaced when empty; a non-empty one makes this fail.
    if (::rename(tmp.c_str(), out.c_str()) != 0) fail(head, "rename the new folder", tmp, errno);
    return {};
  }
  keep_entries(out, tmp, r.owned, head);
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, out.c_str(), RENAME_EXCHANGE) == 0) return tmp;
  const int err = errno;
  if (err == EINVAL || err == ENOSYS || err == EOPNOTSUPP)
    return swap_by_two_renames(tmp, out, r.tag, head);
  user_error() << head << ": cannot swap in the new folder " << quoted(tmp) << ": "
               << std::strerror(err) << " (the old folder is unchanged)";
  return {};
}

// The PID of a temporary's name PREFIX + PID (digits, no leading zero); -1 for another name.
long pid_in(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return -1;
  const std::string digits = name.substr(prefix.size());
  if (digits.size() > 9 || digits[0] == '0' ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stol(digits);
}

// EPERM (another user's process) is alive too: only ESRCH says nobody has the PID.
bool process_alive(long pid) {
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

}  // namespace

void check_output_folder(const std::string& dir, const std::string& what) {
  const std::string head = what + " " + dir;
  const fs::path p = normal_absolute(dir, head);
  if (!exists_here(p)) {
    require_writable_folder(nearest_existing_ancestor(p), head);
    return;
  }
  user_check(not_a_folder(p).empty()) << head << " exists and is not a folder";
  require_writable_folder(p, head);
}

void check_replaceable_folder(const std::string& dir, const std::string& what) {
  replaceable_target(dir, what);
}

void check_output_file(const std::string& file, const std::string& what) {
  const std::string head = what + " " + file;
  const fs::path p = normal_absolute(file, head);
  std::error_code ec;
  user_check(!fs::is_directory(p, ec)) << head << " is a folder; name a file in it ("
                                       << (fs::path(file) / "kernel.so").string() << ")";
  const fs::path given = fs::path(file).parent_path();
  user_check(exists_here(p.parent_path()))
      << head << ": folder '" << (given.empty() ? "." : given.string()) << "' does not exist";
  require_writable_folder(p.parent_path(), head);
}

std::string temporary_folder(const std::string& dir, const std::string& tag, long pid) {
  const fs::path out = normal_absolute(dir, "the folder " + dir);
  return (out.parent_path() /
          ("." + out.filename().string() + "." + tag + "." + std::to_string(pid)))
      .string();
}

void remove_stale_temporaries(const std::string& folder, const std::string& prefix) {
  std::vector<fs::path> stale;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const long pid = pid_in(it->path().filename().string(), prefix);
    std::error_code ignored;
    if (pid > 0 && it->is_directory(ignored) && !it->is_symlink(ignored) && !process_alive(pid))
      stale.push_back(it->path());
  }
  for (const fs::path& p : stale) remove_tree(p);
}

void replace_folder(const FolderReplacement& r,
                    const std::function<void(const std::string& tmp)>& fill) {
  const std::string head = r.what + " " + r.dir;
  const fs::path out = replaceable_target(r.dir, r.what);
  const std::vector<fs::path> made = create_parents(out.parent_path(), head);
  remove_stale_temporaries(out.parent_path().string(),
                           "." + out.filename().string() + "." + r.tag + ".");
  // Ours (this PID) can only be a leftover of this process: a fresh start.
  const fs::path tmp = temporary_folder(out.string(), r.tag, ::getpid());
  remove_tree(tmp);
  fs::path old;
  try {
    if (::mkdir(tmp.c_str(), 0777) != 0) fail(head, "create the temporary folder", tmp, errno);
    fill(tmp.string());
    old = swap_in(tmp, out, r, head);
  } catch (...) {
    // Nothing has moved into OUT: the temporary holds only new files and links.
    remove_tree(tmp);
    remove_if_empty(made);
    throw;
  }
  // The old contents; left behind (an error, a signal), they are a stale temporary that the
  // next replace_folder removes.
  if (!old.empty()) remove_tree(old);
}

}  // namespace kiln
