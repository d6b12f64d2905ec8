// Operations on one worktree relative to a handle on its root: every path is resolved from the
// root's descriptor without following a symlink in any leading component (openat2, or the
// component walk of beneath.h), and never as an absolute path, so a deep tree under a long
// root works wherever git's own (relative) operations do. Failures are returned as errno
// values: what to do about them is TypeScript's decision.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "base/fd.h"

namespace pc {

struct DirEntry {
  std::string name;
  bool dir;
};

class Worktree {
 public:
  // Opens the root directory; throws Error(Io) when it cannot.
  explicit Worktree(const std::string& root);

  // Each returns 0 or an errno.
  int mkdir(const char* rel, mode_t mode) const;
  // mkdir, where a real directory already there is success too (one lookup of the parent for
  // both steps); EEXIST when something else is there.
  int ensure_dir(const char* rel, mode_t mode) const;
  int unlink(const char* rel) const;
  int rmdir(const char* rel) const;
  // Removes rel whatever it is (a directory with everything in it; links are removed, never
  // followed). Nothing there is success.
  int remove_tree(const char* rel) const;
  int symlink(const char* target, const char* rel) const;
  int lstat(const char* rel, struct stat* st) const;
  int readlink(const char* rel, std::string* target) const;
  // The entries of directory rel ("" for the root), without "." and "..".
  int list(const char* rel, std::vector<DirEntry>* out) const;
  // A descriptor the caller owns (O_NOFOLLOW|O_CLOEXEC added), or -errno.
  int open(const char* rel, int flags, mode_t mode) const;

  int root() const { return root_.get(); }

 private:
  // The directory holding rel's last component (the root itself, or a descriptor put in
  // holder) and that component; -1 with errno set when a leading component is not a real
  // directory (ELOOP for a symlink, ENOTDIR for a file) or is missing.
  int parent(const char* rel, Fd* holder, std::string* name) const;
  Fd root_;
};

// mkdir of many directories (relative to root) on up to `threads` native threads, for a
// network filesystem where each mkdir waits for the server. One errno (or 0) per path.
void mkdir_many(const Worktree& wt, const std::vector<const char*>& paths, size_t threads,
                std::vector<int32_t>* errors);
// unlink of many paths the same way (none of them a directory, none the parent of another).
void unlink_many(const Worktree& wt, const std::vector<const char*>& paths, size_t threads,
                 std::vector<int32_t>* errors);

}  // namespace pc
