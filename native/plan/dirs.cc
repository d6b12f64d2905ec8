#include "plan/dirs.h"

#include <string_view>
#include <unordered_set>

namespace pc {

std::string dirs_of(const PathList& list, const uint8_t* select) {
  std::string out;
  std::unordered_set<std::string_view> seen;
  std::string_view last;
  bool have_last = false;
  for (size_t k = 0; k < list.count; k++) {
    if (select != nullptr && select[k] == 0) continue;
    const char* p = reinterpret_cast<const char*>(list.paths) + list.starts[k];
    std::string_view path(p, list.starts[k + 1] - 1 - list.starts[k]);
    size_t slash = path.rfind('/');
    if (slash == std::string_view::npos || slash == 0) continue;  // at the top: no directory
    std::string_view dir = path.substr(0, slash);
    if (have_last && dir == last) continue;  // the entries of a directory follow one another
    last = dir;
    have_last = true;
    // Its ancestors first: find the deepest one already seen, then add the rest downwards.
    size_t from = dir.size();
    while (!seen.count(dir.substr(0, from))) {
      size_t up = dir.rfind('/', from - 1);
      if (up == std::string_view::npos) {
        from = 0;
        break;
      }
      from = up;
    }
    // dir.substr(0, from) is seen (or from is 0): add every longer prefix ending at a '/' or
    // at the end, shortest first.
    for (size_t end = from == 0 ? 0 : from + 1; end <= dir.size(); end++) {
      if (end < dir.size() && dir[end] != '/') continue;
      if (end == 0) continue;
      std::string_view prefix = dir.substr(0, end);
      if (seen.insert(prefix).second) {
        out.append(prefix);
        out.push_back('\0');
      }
    }
  }
  return out;
}

}  // namespace pc
