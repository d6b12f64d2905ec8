/**
 * The sparse index (gitformat-index "Sparse Directory Entries", git's
 * Documentation/technical/sparse-index.txt): with index.sparse=true and a cone-mode sparse
 * checkout, a directory outside the cone whose entries are all skip-worktree is one entry —
 * mode 040000, the tree's id, its path with a final '/', skip-worktree — and the index carries
 * the (empty) `sdir` extension.
 *
 * pcheckout plans with a full index, as git's ensure_full_index gives one: the sparse
 * directories read are expanded here (their trees walked, every entry skip-worktree with no
 * stat data); the index written is collapsed again where git's convert_to_sparse collapses it:
 * a directory outside the cone (not a parent of the cone, not in a recursive pattern) whose
 * entries are all skip-worktree and merged (and, when git converts a full index, none a
 * gitlink: a directory new to the index goes in as one entry whatever it holds).
 */
import type { NativeOdb, NativeTreeDirs } from '../addon.js';
import { EntryList } from '../plan/entries.js';
import type { PathProtection } from '../plan/paths.js';
import { inCone, type Cone } from '../plan/sparse.js';
import { MODE_GITLINK, walkTree } from '../plan/tree.js';
import type { Repo } from '../repo/repo.js';
import { pathList } from '../worktree.js';
import { CACHE_TREE_SIGNATURE } from './cache-tree.js';
import { SKIP_WORKTREE, type IndexFile } from './read.js';
import { STAT_WORDS } from './write.js';

export const SPARSE_DIR_MODE = 0o40000;
export const SPARSE_SIGNATURE = 'sdir';

/** The `sdir` extension, whole (signature and a size of 0). */
export function sparseExtension(): Buffer {
  const ext = Buffer.alloc(8);
  ext.write(SPARSE_SIGNATURE, 0, 'latin1');
  return ext;
}

/**
 * Whether git writes this repository's index sparse (sparse-index.c, is_sparse_index_allowed):
 * index.sparse=true and a sparse checkout in cone mode whose patterns are cone patterns.
 */
export function sparseIndexAllowed(repo: Repo, cone: Cone | null): boolean {
  return (
    cone !== null &&
    cone.patterns === undefined &&
    repo.config.getBool('core.sparsecheckoutcone') === true &&
    repo.config.getBool('index.sparse') === true
  );
}

/**
 * A sparse index expanded to the full index git's ensure_full_index makes of it: each sparse
 * directory replaced by the entries of its tree, skip-worktree, stage 0, stat data all zero.
 * The cache-tree (which counts a sparse directory as one entry) is not carried over. An index
 * with no sparse directory is returned as it is.
 */
export function expandIndex(odb: NativeOdb, index: IndexFile, protect: PathProtection): IndexFile {
  if (index.sparseDirs === 0) return index;
  const src = index.entries;
  const pathParts: Buffer[] = [];
  const oidParts: Buffer[] = [];
  const modes: number[] = [];
  const origin: number[] = [];
  for (let i = 0; i < src.count; i++) {
    if (src.modes[i] !== SPARSE_DIR_MODE) {
      pathParts.push(src.paths.subarray(src.starts[i]!, src.starts[i + 1]!));
      oidParts.push(src.oid(i));
      modes.push(src.modes[i]!);
      origin.push(i);
      continue;
    }
    const prefix = src.pathBytes(i); // "a/b/"
    const sub = walkTree(odb, src.oidHex(i), protect);
    for (let k = 0; k < sub.count; k++) {
      pathParts.push(prefix, sub.paths.subarray(sub.starts[k]!, sub.starts[k + 1]!));
      modes.push(sub.modes[k]!);
      origin.push(-1);
    }
    oidParts.push(sub.oids.subarray(0, 20 * sub.count));
  }
  const count = modes.length;
  const entries = new EntryList({
    count,
    paths: Buffer.concat(pathParts),
    oids: Buffer.concat(oidParts),
    modes: Uint32Array.from(modes),
  });
  const stats = new Uint32Array(count * STAT_WORDS);
  const stages = new Uint8Array(count);
  const extFlags = new Uint16Array(count);
  const assumeValid = new Uint8Array(count);
  const from = Int32Array.from(origin);
  for (let k = 0; k < count; k++) {
    const i = from[k]!;
    if (i < 0) {
      stats[k * STAT_WORDS + 6] = entries.modes[k]!;
      extFlags[k] = SKIP_WORKTREE;
      continue;
    }
    stats.set(index.stats.subarray(i * STAT_WORDS, (i + 1) * STAT_WORDS), k * STAT_WORDS);
    stages[k] = index.stages[i]!;
    extFlags[k] = index.extFlags[i]!;
    assumeValid[k] = index.assumeValid[i]!;
  }
  return {
    ...index,
    entries,
    stats,
    stages,
    extFlags,
    assumeValid,
    extensions: index.extensions.filter((e) => e.signature !== CACHE_TREE_SIGNATURE),
    offsets: new Uint32Array(0),
    sparseDirs: 0,
    expandedFrom: { file: index, origin: from },
  };
}

/** An index collapsed: its entries, stat data and flags, and its sparse directories. */
export interface CollapsedIndex {
  entries: EntryList;
  stats: Uint32Array;
  extFlags: Uint16Array;
  /** The sparse directories ("a/b/" with a NUL each, in order) and their trees' ids. */
  sparse: { paths: Buffer; oids: Buffer; count: number };
}

/** Where a directory's tree id can come from: the tree checked out, or the index read. */
export interface DirectorySources {
  /** The walk of the tree checked out, and its entries (null: none, e.g. a restore). */
  walk: { dirs: NativeTreeDirs; entries: EntryList } | null;
  /** The index as read, expanded (expandIndex), or null. */
  current: IndexFile | null;
}

/** Whether a[ai, aj) and b[bi, bj) hold the same paths, ids and modes. */
function sameRun(a: EntryList, ai: number, aj: number, b: EntryList, bi: number, bj: number) {
  if (aj - ai !== bj - bi) return false;
  if (aj === ai) return true;
  const ap = a.paths.subarray(a.starts[ai]!, a.starts[aj]!);
  const bp = b.paths.subarray(b.starts[bi]!, b.starts[bj]!);
  if (!ap.equals(bp)) return false;
  if (!a.oids.subarray(20 * ai, 20 * aj).equals(b.oids.subarray(20 * bi, 20 * bj))) return false;
  for (let k = 0; k < aj - ai; k++) if (a.modes[ai + k] !== b.modes[bi + k]) return false;
  return true;
}

/** The run of entries under `dir` ("a/b/", latin1) in a list, by binary search. */
function runUnder(list: EntryList, dir: string): [number, number] {
  const key = Buffer.from(dir, 'latin1');
  const cmp = (i: number): number => list.pathBytes(i).compare(key);
  let lo = 0;
  let hi = list.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(mid) < 0) lo = mid + 1;
    else hi = mid;
  }
  let end = lo;
  while (end < list.count && list.pathBytes(end).subarray(0, key.length).equals(key)) end++;
  return [lo, end];
}

/**
 * The id of the tree `dir` holds in the index being written, when one of `sources` knows it:
 * the tree checked out, where the entries under it are its; or the sparse directory of the
 * index read, where they are its expansion. Null otherwise (git would hash a tree of its own).
 */
function treeOf(
  dir: string,
  result: EntryList,
  start: number,
  end: number,
  sources: DirectorySources,
  walkDirs: Map<string, number> | null,
): Buffer | null {
  const walk = sources.walk;
  if (walk !== null && walkDirs !== null) {
    const j = walkDirs.get(dir);
    if (j !== undefined) {
      const { ranges, oids } = walk.dirs;
      const from = ranges[3 * j]!;
      const to = ranges[3 * j + 1]!;
      if (sameRun(result, start, end, walk.entries, from, to))
        return Buffer.from(oids.subarray(20 * j, 20 * j + 20));
    }
  }
  const expanded = sources.current?.expandedFrom;
  if (expanded) {
    const read = expanded.file.entries;
    const [at] = runUnder(read, dir);
    if (at < read.count && read.name(at) === dir && read.modes[at] === SPARSE_DIR_MODE) {
      const [from, to] = runUnder(sources.current!.entries, dir);
      if (sameRun(result, start, end, sources.current!.entries, from, to))
        return Buffer.from(read.oid(at));
    }
  }
  return null;
}

/**
 * Whether git would hold `dir` collapsed given the index it read (git 2.39): an index read
 * full is converted when read (ensure_correct_sparsity), so a directory whose entries were all
 * skip-worktree then and none a gitlink; an index read sparse is not converted again
 * (convert_to_sparse returns at once for one), so only the directories it held collapsed. A
 * directory the index read has nothing under is new, and its tree outside the cone goes in as
 * one entry.
 */
function collapsedWhenRead(dir: string, current: IndexFile | null): boolean {
  if (current === null) return true;
  const read = current.expandedFrom?.file ?? current;
  const list = read.entries;
  const [from, to] = runUnder(list, dir);
  if (from === to) return true;
  if (read.sparse) {
    return to - from === 1 && list.modes[from] === SPARSE_DIR_MODE && list.name(from) === dir;
  }
  for (let i = from; i < to; i++) {
    // (convert_to_sparse leaves a directory holding a gitlink expanded.)
    if (
      read.stages[i] !== 0 ||
      (read.extFlags[i]! & SKIP_WORKTREE) === 0 ||
      list.modes[i] === MODE_GITLINK
    )
      return false;
  }
  return true;
}

/**
 * The index git writes sparse (convert_to_sparse): each directory outside the cone whose
 * entries are all skip-worktree becomes one sparse directory entry, the
 * outermost such directory first — where git holds it so given the index read
 * (collapsedWhenRead). A directory whose tree id no source knows stays expanded.
 */
export function collapseIndex(
  result: EntryList,
  stats: Uint32Array,
  extFlags: Uint16Array,
  cone: Cone,
  sources: DirectorySources,
): CollapsedIndex {
  const walkDirs = walkDirIndex(sources);
  const keep: number[] = []; // index into result, or -(k+1) for sparse directory k
  const dirPaths: string[] = [];
  const dirOids: Buffer[] = [];
  const names: string[] = new Array<string>(result.count);
  for (let i = 0; i < result.count; i++) names[i] = result.name(i);
  const collapsible = (start: number, end: number): boolean => {
    for (let i = start; i < end; i++) {
      if ((extFlags[i]! & SKIP_WORKTREE) === 0) return false;
    }
    return true;
  };
  const visit = (start: number, end: number, depth: number): void => {
    for (let i = start; i < end;) {
      const name = names[i]!;
      const slash = name.indexOf('/', depth);
      if (slash < 0) {
        keep.push(i++);
        continue;
      }
      const dir = name.slice(0, slash + 1);
      let j = i + 1;
      while (j < end && names[j]!.startsWith(dir)) j++;
      // git's path_in_sparse_checkout of "a/b/": as a file directly in a/b.
      const oid =
        !inCone(cone, `${dir}-`) && collapsible(i, j) && collapsedWhenRead(dir, sources.current)
          ? treeOf(dir, result, i, j, sources, walkDirs)
          : null;
      if (oid !== null) {
        keep.push(-(dirPaths.length + 1));
        dirPaths.push(dir);
        dirOids.push(oid);
      } else {
        visit(i, j, slash + 1);
      }
      i = j;
    }
  };
  visit(0, result.count, 0);

  return buildCollapsed(result, stats, extFlags, keep, dirPaths, dirOids);
}

/** The walk's directories by path (their row in its list), when the target walk gave them. */
function walkDirIndex(sources: DirectorySources): Map<string, number> | null {
  if (sources.walk === null) return null;
  const walkDirs = new Map<string, number>();
  const { paths, count } = sources.walk.dirs;
  let at = 0;
  for (let j = 0; j < count; j++) {
    const nul = paths.indexOf(0, at);
    walkDirs.set(paths.toString('latin1', at, nul), j);
    at = nul + 1;
  }
  return walkDirs;
}

/**
 * The collapsed index from the decisions: `keep` holds, in order, a row of `result` (>= 0) or
 * sparse directory k as -(k+1).
 */
function buildCollapsed(
  result: EntryList,
  stats: Uint32Array,
  extFlags: Uint16Array,
  keep: number[],
  dirPaths: string[],
  dirOids: Buffer[],
): CollapsedIndex {
  const count = keep.length;
  const pathParts: Buffer[] = [];
  const oidParts: Buffer[] = [];
  const modes = new Uint32Array(count);
  const outStats = new Uint32Array(count * STAT_WORDS);
  const outFlags = new Uint16Array(count);
  keep.forEach((i, k) => {
    if (i >= 0) {
      pathParts.push(result.paths.subarray(result.starts[i]!, result.starts[i + 1]!));
      oidParts.push(result.oid(i));
      modes[k] = result.modes[i]!;
      outStats.set(stats.subarray(i * STAT_WORDS, (i + 1) * STAT_WORDS), k * STAT_WORDS);
      outFlags[k] = extFlags[i]!;
      return;
    }
    const d = -i - 1;
    pathParts.push(Buffer.from(`${dirPaths[d]!}\0`, 'latin1'));
    oidParts.push(dirOids[d]!);
    modes[k] = SPARSE_DIR_MODE;
    outStats[k * STAT_WORDS + 6] = SPARSE_DIR_MODE;
    outFlags[k] = SKIP_WORKTREE;
  });
  return {
    entries: new EntryList({
      count,
      paths: Buffer.concat(pathParts),
      oids: Buffer.concat(oidParts),
      modes,
    }),
    stats: outStats,
    extFlags: outFlags,
    sparse: {
      paths: pathList(dirPaths),
      oids: Buffer.concat(dirOids),
      count: dirPaths.length,
    },
  };
}
