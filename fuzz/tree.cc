// Tree parsing (native/plan/tree.cc walk_tree, through the loose-object reader of native/odb/loose.cc):
// the input is up to 8 tree objects separated by "\n--tree--\n". Object k is stored as a loose
// object with the id 00..00k, so an entry naming that id is a subtree (object 0 is the root).
// A walk that succeeds must give paths in index order, each allowed by git's rules, with no path
// that is also a leading directory of another (a file and a directory of the same name).
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/common.h"
#include "harness.h"
#include "odb/odb.h"
#include "plan/path_rules.h"
#include "plan/tree.h"

namespace {
constexpr size_t kMaxObjects = 8;

void check_walk(const pc::FlatTree& flat, pc::PathProtection protect) {
  std::set<std::string> files;
  std::vector<std::string> paths;
  const std::string_view all = flat.paths.view();
  size_t pos = 0;
  FZ_CHECK(flat.starts.size() == flat.count + 1);
  for (size_t i = 0; i < flat.count; i++) {
    FZ_CHECK(flat.starts[i] == pos);
    size_t nul = all.find('\0', pos);
    FZ_CHECK(nul != std::string_view::npos);
    paths.emplace_back(all.substr(pos, nul - pos));
    pos = nul + 1;
    const std::string& p = paths.back();
    FZ_CHECK(pc::verify_path(p.c_str(), p.size(), flat.modes[i], protect) == pc::PathRule::kOk);
    if (i > 0) FZ_CHECK(paths[i - 1] < p);
    files.insert(p);
  }
  FZ_CHECK(pos == flat.paths.size() && flat.starts[flat.count] == pos &&
           flat.modes.size() == flat.count &&
           flat.oids.size() == 20 * flat.count);
  // No path is a leading directory of another: nothing sorts between p + "/" and its extensions.
  for (const std::string& p : paths) {
    auto next = files.lower_bound(p + '/');
    FZ_CHECK(next == files.end() || next->compare(0, p.size() + 1, p + '/') != 0);
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string objects = fz::scratch_dir() + "/objects";
  std::vector<std::string> trees = fz::split(data, size, "\n--tree--\n", kMaxObjects);
  for (size_t k = 0; k < kMaxObjects; k++) {
    uint8_t oid[20] = {0};
    oid[19] = static_cast<uint8_t>(k);
    if (k < trees.size()) {
      fz::write_loose(objects, oid, "tree", reinterpret_cast<const uint8_t*>(trees[k].data()),
                      trees[k].size());
    } else {  // no object of an earlier input may be found
      unlink((objects + "/00/" + std::string(37, '0') + std::to_string(k)).c_str());
    }
  }
  uint8_t root[20] = {0};
  pc::PathProtection protect;  // core.protectNTFS, and core.protectHFS for inputs of odd length
  protect.hfs = (size & 1) != 0;
  pc::Odb odb({objects}, std::make_shared<pc::BaseCache>(1 << 20));
  pc::FlatTree flat;
  pc::WalkDirs dirs;
  try {
    pc::walk_tree(odb, root, protect, &flat, &dirs);
  } catch (const pc::Error&) {
    return 0;
  }
  check_walk(flat, protect);
  return 0;
}
