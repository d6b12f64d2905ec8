// git's rules for paths that may enter an index and a worktree (its verify_path with the
// core.protectNTFS / core.protectHFS checks), in one place: the tree walk applies them to
// every entry, and the addon exports them for index entries and pathspecs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pc {

enum class PathRule : int {
  kOk = 0,
  kEmpty,           // an empty path
  kNul,             // a NUL byte inside the path
  kSlash,           // a leading, trailing or doubled '/' (an empty component)
  kDot,             // a component "."
  kDotDot,          // a component ".."
  kDotGit,          // a component ".git", any letter case
  kNtfsDotGit,      // NTFS spellings of .git: "git~1", ".git." / ".git ", ".git:stream"
  kHfsDotGit,       // HFS+: .git with ignorable code points (U+200C ...)
  kSymlinkGitmodules,      // a symlink named .gitmodules (or inside a .gitmodules directory)
  kNtfsSymlinkGitmodules,  // a symlink with an NTFS spelling of .gitmodules (gitmod~1 ...)
  kHfsSymlinkGitmodules,   // a symlink named .gitmodules with HFS+ ignorable code points
};

struct PathProtection {
  bool ntfs = true;   // core.protectNTFS: true by default on every platform
  bool hfs = false;   // core.protectHFS: true by default on macOS only
};

// Checks a whole slash-separated path as git's verify_path does for an entry of `mode`.
// `path` must be followed by a NUL at path[len] (the rules look ahead up to it).
PathRule verify_path(const char* path, size_t len, uint32_t mode, PathProtection protect);

// verify_path over a list: path i is the `starts[i+1] - starts[i] - 1` bytes at
// paths + starts[i], each followed by a NUL (the caller has checked the layout). Returns the
// first refused path's position and its rule in *rule, or count. A path sharing its leading
// directories with the one before (a sorted index: all but the last component, mostly) has
// only the rest checked: the rules judge a component by its own bytes, and those directories
// passed just before (a symlink, held to more rules, is checked whole).
size_t verify_paths(const char* paths, const uint32_t* starts, const uint32_t* modes,
                    size_t count, PathProtection protect, PathRule* rule);

// A short description of the rule, for error messages.
const char* path_rule_text(PathRule rule);

// The rule's stable name for programs ("dotgit", "ntfs-dotgit", ...; "ok" for kOk).
const char* path_rule_name(PathRule rule);

}  // namespace pc
