// The cache-tree (native/index/cache_tree.cc) and the index lender built on it
// (native/index/index_lender.cc). Input: a TREE extension's data, then "\n--index--\n", then index
// paths, one per line (sorted and made unique here, as the index parser guarantees; the line's
// first byte picks the entry's stage and flags). Checks: what parses writes back and parses to
// the same directories; a sparse index's directories collapsed (collapse_sparse) are one entry
// each with nothing below them, in order, and write and parse back; every directory lent covers exactly the entries below its path, all of
// them stage 0 and of a tree's modes, and so does every directory under it.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "index/cache_tree.h"
#include "harness.h"
#include "index/index_lender.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> parts = fz::split(data, size, "\n--index--\n", 2);
  const std::string& ext = parts[0];
  std::vector<pc::CacheTreeDir> dirs;
  if (!pc::parse_cache_tree(reinterpret_cast<const uint8_t*>(ext.data()), ext.size(), &dirs))
    return 0;
  FZ_CHECK(!dirs.empty() && dirs[0].path.empty());
  for (size_t j = 1; j < dirs.size(); j++) FZ_CHECK(dirs[j - 1].path < dirs[j].path);

  // Written back and read again: the same directories.
  std::string written = pc::write_cache_tree(dirs);
  FZ_CHECK(written.size() >= 8 && written.compare(0, 4, "TREE") == 0);
  std::vector<pc::CacheTreeDir> again;
  FZ_CHECK(pc::parse_cache_tree(reinterpret_cast<const uint8_t*>(written.data()) + 8,
                                written.size() - 8, &again));
  FZ_CHECK(again.size() == dirs.size());
  for (size_t j = 0; j < dirs.size(); j++) {
    FZ_CHECK(again[j].path == dirs[j].path && again[j].entries == dirs[j].entries &&
             again[j].oid == dirs[j].oid);
  }

  // The walk-shaped writer (write_walk_cache_tree) on the same directories: the same bytes,
  // also with every directory above the first directory's paths marked not valid.
  {
    std::vector<const char*> walk_paths;
    std::string walk_oids;
    std::vector<int32_t> entries;
    for (const pc::CacheTreeDir& d : dirs) {
      walk_paths.push_back(d.path.c_str());
      walk_oids.append(d.oid.size() == 20 ? d.oid : std::string(20, '\0'));
      entries.push_back(d.oid.size() == 20 ? d.entries : -1);
    }
    std::string differing;
    if (dirs.size() > 1) differing = dirs[1].path + "f" + std::string(1, '\0');
    for (const bool invalidate : {false, true}) {
      std::string flat;
      const std::string& diff = invalidate ? differing : std::string();
      bool ok = pc::write_walk_cache_tree(walk_paths, reinterpret_cast<const uint8_t*>(walk_oids.data()),
                                          entries, diff.data(), diff.size(), &flat);
      FZ_CHECK(ok);
      std::vector<pc::CacheTreeDir> nodes = dirs;
      pc::invalidate_above(&nodes, diff.data(), diff.size());
      FZ_CHECK(flat == pc::write_cache_tree(nodes));
    }
  }

  // A sparse index's directories collapsed (every directory whose name starts with an odd
  // byte, outside those already chosen): each one entry with nothing below it, every valid
  // directory above counting one entry in place of its old count, the rest as it was.
  std::vector<pc::SparseDir> sparse;
  for (const pc::CacheTreeDir& d : dirs) {
    if (d.path.empty()) continue;
    size_t cut = d.path.rfind('/', d.path.size() - 2);
    size_t name = cut == std::string::npos ? 0 : cut + 1;
    if ((static_cast<uint8_t>(d.path[name]) & 1) == 0) continue;
    if (!sparse.empty() && d.path.compare(0, sparse.back().path.size(), sparse.back().path) == 0)
      continue;
    sparse.push_back({d.path, std::string(20, '\x5a')});
  }
  std::vector<pc::CacheTreeDir> collapsed = dirs;
  pc::collapse_sparse(&collapsed, sparse);
  auto below = [](const std::string& path, const std::string& dir) {
    return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0;
  };
  for (size_t j = 1; j < collapsed.size(); j++) FZ_CHECK(collapsed[j - 1].path < collapsed[j].path);
  for (const pc::SparseDir& sd : sparse) {
    size_t found = 0;
    for (const pc::CacheTreeDir& c : collapsed) {
      FZ_CHECK(!below(c.path, sd.path));
      if (c.path == sd.path) {
        FZ_CHECK(c.entries == 1 && c.oid == sd.oid);
        found++;
      }
    }
    FZ_CHECK(found == 1);
  }
  std::string sparse_written = pc::write_cache_tree(collapsed);
  std::vector<pc::CacheTreeDir> sparse_again;
  FZ_CHECK(pc::parse_cache_tree(reinterpret_cast<const uint8_t*>(sparse_written.data()) + 8,
                                sparse_written.size() - 8, &sparse_again));
  FZ_CHECK(sparse_again.size() == collapsed.size());

  // An index of the given paths.
  std::set<std::string> unique;
  if (parts.size() > 1) {
    for (const std::string& line : fz::split(reinterpret_cast<const uint8_t*>(parts[1].data()),
                                             parts[1].size(), "\n", 4096)) {
      if (line.size() > 1 && line.find('\0') == std::string::npos) unique.insert(line);
    }
  }
  std::vector<std::string> lines(unique.begin(), unique.end());
  // Sorted by the path after the flag byte.
  std::sort(lines.begin(), lines.end(),
            [](const std::string& a, const std::string& b) { return a.substr(1) < b.substr(1); });
  lines.erase(std::unique(lines.begin(), lines.end(),
                          [](const std::string& a, const std::string& b) {
                            return a.substr(1) == b.substr(1);
                          }),
              lines.end());
  std::string paths;
  std::vector<uint32_t> starts, modes;
  std::vector<uint8_t> stages, oids(20 * lines.size(), 0);
  std::vector<uint16_t> ext_flags;
  for (const std::string& line : lines) {
    starts.push_back(static_cast<uint32_t>(paths.size()));
    paths.append(line, 1, std::string::npos);
    paths.push_back('\0');
    uint8_t f = static_cast<uint8_t>(line[0]);
    stages.push_back(f % 7 == 1 ? 2 : 0);
    ext_flags.push_back(f % 7 == 2 ? 0x2000 : 0);
    modes.push_back(f % 7 == 3 ? 0100664 : 0100644);
  }
  starts.push_back(static_cast<uint32_t>(paths.size()));
  pc::PathList index;
  index.paths = reinterpret_cast<const uint8_t*>(paths.data());
  index.paths_len = paths.size();
  index.starts = starts.data();
  index.count = lines.size();
  index.oids = oids.data();
  index.modes = modes.data();
  pc::WalkMemo memo;
  size_t lent = pc::lend_index(index, stages.data(), ext_flags.data(), dirs, {}, &memo);
  size_t lendable = 0;
  for (size_t j = 0; j < memo.dirs.size(); j++) lendable += memo.dirs[j].lendable ? 1 : 0;
  FZ_CHECK(lent == 0 || lent == lendable);
  if (lent == 0) return 0;
  FZ_CHECK(memo.paths != nullptr && memo.starts == index.starts);
  auto path_at = [&](size_t i) { return std::string(paths.data() + starts[i]); };
  for (size_t j = 0; j < memo.dirs.size(); j++) {
    const pc::WalkDir& d = memo.dirs[j];
    if (!d.lendable) continue;
    const std::string path(memo.dirs.path(j));
    FZ_CHECK(pc::find_dir(memo, path) == j);
    FZ_CHECK(d.entry_begin < d.entry_end && d.entry_end <= index.count);
    FZ_CHECK(d.path_begin == starts[d.entry_begin] && d.path_end == starts[d.entry_end]);
    for (size_t i = d.entry_begin; i < d.entry_end; i++) {
      FZ_CHECK(path_at(i).compare(0, path.size(), path) == 0);
      FZ_CHECK(stages[i] == 0 && ext_flags[i] == 0 && modes[i] == 0100644);
    }
    if (d.entry_begin > 0) FZ_CHECK(path_at(d.entry_begin - 1).compare(0, path.size(), path) != 0);
    if (d.entry_end < index.count) FZ_CHECK(path_at(d.entry_end).compare(0, path.size(), path) != 0);
    // Every directory below it is lent too (a walk copies them with it).
    for (size_t k = j + 1; k < memo.dirs.size() && memo.dirs.path(k).substr(0, path.size()) == path; k++)
      FZ_CHECK(memo.dirs[k].lendable);
  }
  return 0;
}
