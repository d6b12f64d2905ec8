// git's path rules (native/plan/path_rules.cc): the input is a path, checked in an exactly sized,
// NUL-terminated heap copy for each kind of entry and each protection. The verdicts are
// compared with git's own by test/path-safety.test.mjs; here, besides memory safety, a path
// the rules let through must have no empty, ".", ".." or ".git" (any case) component.
#include <cstring>
#include <memory>
#include <string>

#include "harness.h"
#include "plan/path_rules.h"

namespace {
bool plainly_bad(const char* p, size_t len) {
  if (len == 0 || std::memchr(p, 0, len) != nullptr) return true;
  size_t start = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && p[i] != '/') continue;
    std::string c(p + start, i - start);
    for (char& ch : c) ch = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch + 32) : ch;
    if (c.empty() || c == "." || c == ".." || c == ".git") return true;
    start = i + 1;
  }
  return false;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<char[]> path(new char[size + 1]);
  std::memcpy(path.get(), data, size);
  path[size] = '\0';
  bool bad = plainly_bad(path.get(), size);
  for (uint32_t mode : {0100644u, 0100755u, 0120000u, 0160000u}) {
    for (int bits = 0; bits < 4; bits++) {
      pc::PathProtection protect;
      protect.ntfs = (bits & 1) != 0;
      protect.hfs = (bits & 2) != 0;
      pc::PathRule rule = pc::verify_path(path.get(), size, mode, protect);
      FZ_CHECK(pc::path_rule_text(rule) != nullptr && pc::path_rule_name(rule) != nullptr);
      if (bad) FZ_CHECK(rule != pc::PathRule::kOk);
    }
  }
  return 0;
}
