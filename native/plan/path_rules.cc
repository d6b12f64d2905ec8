#include "plan/path_rules.h"

#include <algorithm>
#include <cstring>

namespace pc {

namespace {

constexpr uint32_t kModeTypeMask = 0170000;
constexpr uint32_t kModeSymlink = 0120000;

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Case-insensitive match of the ASCII `word` at p (p is NUL-terminated, so a mismatch at the
// NUL stops the comparison). Returns the position after it, or nullptr.
const char* skip_word_nocase(const char* p, const char* word) {
  for (; *word != '\0'; p++, word++)
    if (lower(*p) != *word) return nullptr;
  return p;
}

// "." ".." ".git" ".gitmodules"(symlinks): `rest` is what follows a component's leading '.'.
PathRule check_dotfile(const char* rest, bool symlink) {
  if (*rest == '\0' || *rest == '/') return PathRule::kDot;
  if (*rest == '.') return (rest[1] == '\0' || rest[1] == '/') ? PathRule::kDotDot : PathRule::kOk;
  const char* after = skip_word_nocase(rest, "git");
  if (after == nullptr) return PathRule::kOk;
  if (*after == '\0' || *after == '/') return PathRule::kDotGit;
  if (symlink) {
    const char* end = skip_word_nocase(after, "modules");
    if (end != nullptr && (*end == '\0' || *end == '/')) return PathRule::kSymlinkGitmodules;
  }
  return PathRule::kOk;
}

// --- NTFS -------------------------------------------------------------------------------------

bool ntfs_sep(char c) { return c == '/' || c == '\\'; }

// ".git" or "git~1" (any case), then only dots and spaces up to the end of the component, or a
// ':' (an alternate data stream: ".git::$INDEX_ALLOCATION").
bool is_ntfs_dotgit(const char* p) {
  if (*p == '.') {
    p = skip_word_nocase(p + 1, "git");
  } else {
    p = skip_word_nocase(p, "git");
    if (p != nullptr) p = (p[0] == '~' && p[1] == '1') ? p + 2 : nullptr;
  }
  if (p == nullptr) return false;
  for (;; p++) {
    char c = *p;
    if (c == '\0' || ntfs_sep(c) || c == ':') return true;
    if (c != '.' && c != ' ') return false;
  }
}

// From p: only dots and spaces, then the end of the string or a ':'.
bool ntfs_trailer(const char* p) {
  for (;; p++) {
    if (*p == '\0' || *p == ':') return true;
    if (*p != ' ' && *p != '.') return false;
  }
}

// An NTFS spelling of ".<name>": the name itself, its 8.3 short name "<first 6>~1".."~4", or
// the fall-back short name "<hash prefix><~digits>" Windows makes when those are taken.
bool is_ntfs_dot_name(const char* p, const char* name, const char* short_prefix) {
  size_t len = std::strlen(name);
  if (p[0] == '.') {
    const char* after = skip_word_nocase(p + 1, name);
    if (after != nullptr) return ntfs_trailer(after);
  }
  const char* six = p;
  size_t k = 0;
  while (k < 6 && k < len && lower(six[k]) == name[k]) k++;
  if (k == 6 && p[6] == '~' && p[7] >= '1' && p[7] <= '4') return ntfs_trailer(p + 8);
  // Fall-back short names: up to six characters of the prefix, '~', a digit 1-9, then digits,
  // eight characters in all.
  bool saw_tilde = false;
  size_t i = 0;
  for (; i < 8; i++) {
    unsigned char c = static_cast<unsigned char>(p[i]);
    if (c == '\0') return false;
    if (saw_tilde) {
      if (c < '0' || c > '9') return false;
    } else if (c == '~') {
      i++;
      if (p[i] < '1' || p[i] > '9') return false;
      saw_tilde = true;
    } else if (i >= 6 || (c & 0x80) != 0 || lower(static_cast<char>(c)) != short_prefix[i]) {
      return false;
    }
  }
  return ntfs_trailer(p + i);
}

bool is_ntfs_dotgitmodules(const char* p) { return is_ntfs_dot_name(p, "gitmodules", "gi7eba"); }

// --- HFS+ -------------------------------------------------------------------------------------

// The next UTF-8 code point at *p, advancing *p; 0 for malformed UTF-8 (overlong forms,
// surrogates, U+FFFE/U+FFFF, beyond U+10FFFF) or the end, as git's decoder treats them.
uint32_t next_utf8(const unsigned char** p) {
  const unsigned char* s = *p;
  uint32_t ch;
  size_t n;
  if (s[0] < 0x80) {
    ch = s[0];
    n = 1;
  } else if ((s[0] & 0xe0) == 0xc0) {
    if ((s[1] & 0xc0) != 0x80 || (s[0] & 0xfe) == 0xc0) return 0;
    ch = ((s[0] & 0x1fu) << 6) | (s[1] & 0x3fu);
    n = 2;
  } else if ((s[0] & 0xf0) == 0xe0) {
    if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80) return 0;
    if (s[0] == 0xe0 && (s[1] & 0xe0) == 0x80) return 0;                    // overlong
    if (s[0] == 0xed && (s[1] & 0xe0) == 0xa0) return 0;                    // surrogate
    if (s[0] == 0xef && s[1] == 0xbf && (s[2] & 0xfe) == 0xbe) return 0;    // U+FFFE/FFFF
    ch = ((s[0] & 0x0fu) << 12) | ((s[1] & 0x3fu) << 6) | (s[2] & 0x3fu);
    n = 3;
  } else if ((s[0] & 0xf8) == 0xf0) {
    if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80) return 0;
    if (s[0] == 0xf0 && (s[1] & 0xf0) == 0x80) return 0;                    // overlong
    if ((s[0] == 0xf4 && s[1] > 0x8f) || s[0] > 0xf4) return 0;             // > U+10FFFF
    ch = ((s[0] & 0x07u) << 18) | ((s[1] & 0x3fu) << 12) | ((s[2] & 0x3fu) << 6) |
         (s[3] & 0x3fu);
    n = 4;
  } else {
    return 0;
  }
  *p = s + n;
  return ch;
}

// HFS+ ignores these code points when it compares names.
bool hfs_ignorable(uint32_t c) {
  return (c >= 0x200c && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
         (c >= 0x206a && c <= 0x206f) || c == 0xfeff;
}

uint32_t next_hfs_char(const unsigned char** p) {
  for (;;) {
    uint32_t c = next_utf8(p);
    if (!hfs_ignorable(c)) return c;
  }
}

// ".<name>" as HFS+ sees it: ASCII case folded, ignorable code points skipped, followed by the
// end, a '/', or malformed UTF-8 (which git's check also takes for the end).
bool is_hfs_dot_name(const char* path, const char* name) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(path);
  if (next_hfs_char(&p) != '.') return false;
  for (; *name != '\0'; name++) {
    uint32_t c = next_hfs_char(&p);
    if (c > 127 || lower(static_cast<char>(c)) != *name) return false;
  }
  uint32_t c = next_hfs_char(&p);
  return c == 0 || c == '/';
}

// The checks made where a component starts (and, for NTFS, after a backslash).
PathRule check_component(const char* p, bool symlink, PathProtection protect, bool ntfs_only) {
  if (protect.hfs && !ntfs_only) {
    if (is_hfs_dot_name(p, "git")) return PathRule::kHfsDotGit;
    if (symlink && is_hfs_dot_name(p, "gitmodules")) return PathRule::kHfsSymlinkGitmodules;
  }
  if (protect.ntfs) {
    if (is_ntfs_dotgit(p)) return PathRule::kNtfsDotGit;
    if (symlink && is_ntfs_dotgitmodules(p)) return PathRule::kNtfsSymlinkGitmodules;
  }
  return PathRule::kOk;
}

}  // namespace

namespace {

// verify_path from `from`, the start of a component; what comes before it passed already.
PathRule verify_path_from(const char* path, size_t len, size_t from, uint32_t mode,
                          PathProtection protect) {
  if (len == 0) return PathRule::kEmpty;
  if (std::memchr(path + from, '\0', len - from) != nullptr) return PathRule::kNul;
  bool symlink = (mode & kModeTypeMask) == kModeSymlink;
  const char* p = path + from;
  for (;;) {
    // p is at the start of a component. (git checks NTFS and HFS+ first; the order only
    // decides which rule is named.)
    if (*p == '/' || *p == '\0') return PathRule::kSlash;
    PathRule r = *p == '.' ? check_dotfile(p + 1, symlink) : PathRule::kOk;
    if (r == PathRule::kOk) r = check_component(p, symlink, protect, false);
    if (r != PathRule::kOk) return r;
    // To the end of the component; NTFS also splits names at backslashes.
    for (p++; *p != '/' && *p != '\0'; p++) {
      if (*p == '\\' && protect.ntfs) {
        r = check_component(p + 1, symlink, protect, true);
        if (r != PathRule::kOk) return r;
      }
    }
    if (*p == '\0') return PathRule::kOk;
    p++;
  }
}

}  // namespace

PathRule verify_path(const char* path, size_t len, uint32_t mode, PathProtection protect) {
  return verify_path_from(path, len, 0, mode, protect);
}

size_t verify_paths(const char* paths, const uint32_t* starts, const uint32_t* modes,
                    size_t count, PathProtection protect, PathRule* rule) {
  const char* prev = nullptr;
  size_t prev_len = 0;
  bool prev_ok = false;
  for (size_t i = 0; i < count; i++) {
    const char* p = paths + starts[i];
    const size_t len = starts[i + 1] - starts[i] - 1;
    // The leading directories it shares with the path before: up to the last '/' of the
    // common prefix (a '/' at the same place in both ends the same components).
    size_t from = 0;
    if (prev_ok && (modes[i] & kModeTypeMask) != kModeSymlink) {
      const size_t n = std::min(len, prev_len);
      size_t k = 0;
      while (k < n && p[k] == prev[k]) {
        if (p[k] == '/') from = k + 1;
        k++;
      }
    }
    PathRule r = verify_path_from(p, len, from, modes[i], protect);
    if (r != PathRule::kOk) {
      *rule = r;
      return i;
    }
    prev = p;
    prev_len = len;
    prev_ok = true;
  }
  return count;
}

const char* path_rule_text(PathRule rule) {
  switch (rule) {
    case PathRule::kOk: return "a valid path";
    case PathRule::kEmpty: return "an empty path";
    case PathRule::kNul: return "a NUL byte in a path";
    case PathRule::kSlash: return "an empty path component (a leading, trailing or doubled '/')";
    case PathRule::kDot: return "a '.' component";
    case PathRule::kDotDot: return "a '..' component";
    case PathRule::kDotGit: return "a '.git' component (in any letter case)";
    case PathRule::kNtfsDotGit:
      return "an NTFS spelling of '.git' (git~1, trailing dots or spaces, a ':' stream; "
             "core.protectNTFS)";
    case PathRule::kHfsDotGit:
      return "an HFS+ spelling of '.git' (ignorable Unicode code points; core.protectHFS)";
    case PathRule::kSymlinkGitmodules: return "a symlinked '.gitmodules'";
    case PathRule::kNtfsSymlinkGitmodules:
      return "a symlinked NTFS spelling of '.gitmodules' (core.protectNTFS)";
    case PathRule::kHfsSymlinkGitmodules:
      return "a symlinked HFS+ spelling of '.gitmodules' (core.protectHFS)";
  }
  return "an unsafe path";
}

const char* path_rule_name(PathRule rule) {
  switch (rule) {
    case PathRule::kOk: return "ok";
    case PathRule::kEmpty: return "empty";
    case PathRule::kNul: return "nul";
    case PathRule::kSlash: return "slash";
    case PathRule::kDot: return "dot";
    case PathRule::kDotDot: return "dotdot";
    case PathRule::kDotGit: return "dotgit";
    case PathRule::kNtfsDotGit: return "ntfs-dotgit";
    case PathRule::kHfsDotGit: return "hfs-dotgit";
    case PathRule::kSymlinkGitmodules: return "symlink-gitmodules";
    case PathRule::kNtfsSymlinkGitmodules: return "ntfs-symlink-gitmodules";
    case PathRule::kHfsSymlinkGitmodules: return "hfs-symlink-gitmodules";
  }
  return "unsafe";
}

}  // namespace pc
