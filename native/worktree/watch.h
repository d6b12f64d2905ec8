// Worktree watches: one inotify instance for all the worktrees a warm engine watches (closing an
// instance that holds watches waits for an RCU grace period, milliseconds, so there is one per
// engine, not one per worktree), for an engine that wants to know which paths may have changed
// since it last looked instead of lstat-ing every tracked file again. Directories are opened
// beneath their worktree's root without following a symlink (beneath.h) and watched through
// their descriptor, so a link planted in a worktree cannot make it watch a directory elsewhere.
// What an event means is TypeScript's decision; this only reads them, bounds-checked.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/fd.h"

namespace pc {

struct WatchEvent {
  int32_t wd;
  uint32_t mask;
  std::string name;  // the entry of the watched directory it is about ("" for the directory)
};

class Watch {
 public:
  // Opens an inotify instance; throws Error(Io) when it cannot.
  Watch();

  // Watches directory rel ("" for the root) of the worktree at root (opened once, kept until
  // forget_root): a watch descriptor, or -errno (ENOSPC when the user's watch limit is
  // reached, ELOOP/ENOTDIR when a leading component is no directory, ENOENT).
  int add(const std::string& root, const char* rel);
  // Closes the handle on a worktree's root (its watches stay until removed).
  void forget_root(const std::string& root);
  // Stops watching wd (one the kernel already dropped is no error).
  void remove(int wd) const;
  // Every event queued so far, appended to out; false when the kernel's queue overflowed
  // (events were lost: nothing can be concluded from them). Throws Error(Io) on a read error.
  bool drain(std::vector<WatchEvent>* out) const;

 private:
  std::map<std::string, Fd> roots_;
  Fd inotify_;
};

// What the kernel reports for a watched directory and its entries: any change of an entry's
// content, metadata or name, and the directory itself going away.
uint32_t watch_mask();

}  // namespace pc
