// Writing outputs without destroying a user's files, and failing before the long work:
//  - check_output_folder / check_replaceable_folder / check_output_file: an output path that
//    cannot be written is a UserError before a compile, a run or a kernel build starts, not
//    minutes later;
//  - replace_folder: a folder of files (a compiled model) built beside its place and swapped
//    in with one rename, so that the folder is at every moment either all old or all new.
//    Entries of an old folder that the new one does not write (a user's outputs/, a
//    report.html) are hard-linked into the new one before the swap, so they survive it and
//    are never only in a temporary folder.
// Every filesystem failure is a UserError naming the path (the paths are the user's input).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace kiln {

// `what` names the path in messages: "-o", "--output", "--so" (or "the output folder").

// A folder that files will be written into, created (with any missing parents) when absent:
// if it exists it must be a writable folder, else its nearest existing ancestor must be one.
void check_output_folder(const std::string& dir, const std::string& what);

// A folder that replace_folder will create or replace: if it exists it must be a folder and
// not a mount point; its parent (or nearest existing ancestor) must be a writable folder,
// since the new folder is built beside it and renamed.
void check_replaceable_folder(const std::string& dir, const std::string& what);

// A file to be written: it must not be a folder, and its folder must exist and be writable.
void check_output_file(const std::string& file, const std::string& what);

struct FolderReplacement {
  std::string dir;   // the folder written (OUT); created with its parents
  std::string what;  // how messages name it ("the output folder")
  std::string tag;   // the temporary is PARENT/.NAME.TAG.PID ("kiln-compile")
  // The entries `fill` writes: an old OUT's are replaced, its others kept (where `fill` wrote
  // an entry of another name too, the new one wins).
  std::vector<std::string> owned;
};

// Makes r.dir the folder that `fill` writes (into the temporary folder whose path it gets):
// checks r.dir (check_replaceable_folder), removes stale temporaries (below), builds in
// PARENT/.NAME.TAG.PID, then renames that to r.dir, or exchanges it with an existing r.dir
// (renameat2 RENAME_EXCHANGE) after hard-linking every entry of the old folder that is not in
// r.owned into it, and removes the old contents. When `fill` throws, or anything before the
// swap fails, the temporary is removed, r.dir is as it was (not created when it was absent)
// and the exception propagates. A symbolic link r.dir is followed: its target is replaced.
// The new folder and its kept subfolders are new folders with the old ones' modes (and, when
// run as root, owners); a file added to the old folder in the instant between the linking
// and the swap is not kept. Without RENAME_EXCHANGE (some network and FAT filesystems) the
// old folder is renamed aside and the new one into place: two renames, never a deletion
// before the new folder is there.
void replace_folder(const FolderReplacement& r,
                    const std::function<void(const std::string& tmp)>& fill);

// PARENT/.NAME.TAG.PID for `dir` = PARENT/NAME (absolute): where replace_folder builds.
std::string temporary_folder(const std::string& dir, const std::string& tag, long pid);

// Removes the folders FOLDER/PREFIX<PID> whose PID (digits, no leading zero) is no live
// process: what a replace_folder killed by a signal left (PREFIX ".NAME.TAG."). Only that
// exact pattern, only folders (not symbolic links). Best effort: one that cannot be removed
// is left for the next time. A PID of another PID namespace sharing the folder looks dead.
void remove_stale_temporaries(const std::string& folder, const std::string& prefix);

}  // namespace kiln
