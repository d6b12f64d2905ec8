// Memory-safety fuzz of native/path_rules.cc under ASan and UBSan: millions of random paths
// (seeded with the interesting prefixes), each checked in an exactly sized heap buffer for every
// mode and protection, so a read past the terminator is reported. The verdicts themselves are
// compared with git by test/path-safety.test.mjs. Build and run (one command):
//   g++ -std=c++17 -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -Inative
//     scripts/fuzz-path-rules.cc native/path_rules.cc -o /tmp/fuzz-path-rules
//   /tmp/fuzz-path-rules [rounds]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "path_rules.h"

int main(int argc, char** argv) {
  long rounds = argc > 1 ? std::atol(argv[1]) : 2000000;
  std::mt19937 rng(42);
  const char alphabet[] = ".gitGIT~1:\\ /mod\xe2\x80\x8c\xef\xbb\xbf\xff\xc0\xed\xa0\xf4\x90";
  const char* seeds[] = {"",        ".git",           "git~1",    ".gitmodules", "gi7eba~",
                         ".g\xe2\x80\x8cit", "a\\.git", "x/.GIT", "gitmod~"};
  size_t counts[16] = {0};
  for (long n = 0; n < rounds; n++) {
    std::string s = seeds[rng() % (sizeof seeds / sizeof seeds[0])];
    size_t len = rng() % 24;
    for (size_t i = 0; i < len; i++)
      s.push_back(rng() % 4 == 0 ? static_cast<char>(rng() & 0xff)
                                 : alphabet[rng() % (sizeof alphabet - 1)]);
    char* buf = static_cast<char*>(std::malloc(s.size() + 1));
    std::memcpy(buf, s.data(), s.size());
    buf[s.size()] = '\0';
    for (uint32_t mode : {0100644u, 0120000u, 0160000u}) {
      for (int bits = 0; bits < 4; bits++) {
        pc::PathProtection p;
        p.ntfs = (bits & 1) != 0;
        p.hfs = (bits & 2) != 0;
        counts[static_cast<int>(pc::verify_path(buf, s.size(), mode, p))]++;
      }
    }
    std::free(buf);
  }
  for (int i = 0; i <= static_cast<int>(pc::PathRule::kHfsSymlinkGitmodules); i++)
    std::printf("%s %zu\n", pc::path_rule_name(static_cast<pc::PathRule>(i)), counts[i]);
  return 0;
}
