/**
 * git's cache-tree, the index's TREE extension (gitformat-index, "Cache tree"): for each
 * directory, how many index entries lie under it and, while they still make it, the id of its
 * tree. git writes it after a checkout and trusts it to skip unchanged directories (`git status`
 * of the Linux tree: 0.15 s without it, 0.07 s with it). Written here from the walk of the tree
 * checked out; read back (natively, native/index/cache_tree.h) to lend the index's entries to the
 * next checkout's walks (plan/tree.ts, lendIndex).
 */
import { loadAddon, type NativeTreeDirs } from '../addon.js';
import type { EntryList } from '../plan/entries.js';
import { SAME_IM, joinRows } from '../plan/rows.js';
import { bytesOf } from './write.js';

export const CACHE_TREE_SIGNATURE = 'TREE';

/**
 * The TREE extension (signature, size, data) for an index whose entries are `result`, checked
 * out from the tree whose walk found `dirs` and `target`: valid where the result holds exactly
 * the target's entries, and not valid (as git marks it after an edit) above every path where
 * they differ — an entry kept with local changes, one only the result or only the target has.
 * A sparse index's directories (`sparse`, index/sparse.ts) are one entry each, as git counts
 * them, with nothing below them.
 */
export function cacheTreeExtension(
  dirs: NativeTreeDirs,
  result: EntryList,
  target: EntryList,
  sparse: { paths: Buffer; oids: Buffer } | null = null,
): Buffer {
  return loadAddon().cacheTreeExtension(dirs, differingPaths(result, target), sparse);
}

/**
 * The index's own cache-tree (`data`, the TREE extension read) carried over to an index whose
 * entries went from `before` to `result`: not valid above every path where they differ, as
 * git invalidates it after an edit. Null when the data is malformed.
 */
export function invalidatedCacheTree(
  data: Buffer,
  result: EntryList,
  before: EntryList,
): Buffer | null {
  return loadAddon().invalidateCacheTree(data, differingPaths(result, before));
}

/**
 * The paths where two lists differ (an entry only one has, or with another mode or id), each
 * with a NUL; none, found with three compares, when the lists are the same.
 */
function differingPaths(result: EntryList, target: EntryList): Buffer {
  if (
    result.count === target.count &&
    result.paths.equals(target.paths) &&
    result.oids.equals(target.oids) &&
    bytesOf(result.modes.subarray(0, result.count)).equals(
      bytesOf(target.modes.subarray(0, target.count)),
    )
  ) {
    return Buffer.alloc(0);
  }
  // The result as the join's "index": all of it at stage 0.
  const rows = joinRows(result, new Uint8Array(result.count), null, target);
  const parts: Buffer[] = [];
  const nul = Buffer.alloc(1);
  for (let r = 0; r < rows.count; r++) {
    if ((rows.same[r]! & SAME_IM) !== 0) continue;
    const i = rows.i[r]!;
    parts.push(i >= 0 ? result.pathBytes(i) : target.pathBytes(rows.m[r]!), nul);
  }
  return Buffer.concat(parts);
}
