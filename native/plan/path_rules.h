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

// A short description of the rule, for error messages.
const char* path_rule_text(PathRule rule);

// The rule's stable name for programs ("dotgit", "ntfs-dotgit", ...; "ok" for kOk).
const char* path_rule_name(PathRule rule);

}  // namespace pc
