/**
 * Phase 5, index: the new index (the plan's kept entries with their stat data, the written ones
 * with fresh), after the racy-git wait if it pays, committed over the old one; then what a warm
 * engine's watch may take as known next time.
 */
import { dirname } from 'node:path';
import {
  CACHE_TREE_SIGNATURE,
  cacheTreeExtension,
  invalidatedCacheTree,
} from '../index/cache-tree.js';
import { INDEX_HASH, rememberCommitted, type IndexFile } from '../index/read.js';
import {
  decideRacyWait,
  leaveRacySecond,
  newestWritten,
  type RacyDecision,
} from '../index/racy.js';
import { indexVersion } from '../index/version.js';
import {
  SPARSE_DIR_MODE,
  collapseIndex,
  sparseExtension,
  sparseIndexAllowed,
  type CollapsedIndex,
} from '../index/sparse.js';
import {
  buildSplitIndex,
  expireSharedIndexes,
  freshenSharedIndex,
  writeSharedIndex,
  type SplitFiles,
} from '../index/split-write.js';
import {
  STAT_WORDS,
  extensionBytes,
  indexFileEquals,
  patchIndex,
  writeIndexFile,
  type BuildIndexOptions,
} from '../index/write.js';
import { killPoint } from '../kill-point.js';
import type { EntryList } from '../plan/entries.js';
import type { Mode, Plan } from '../plan/plan.js';
import type { Cone } from '../plan/sparse.js';
import type { TreeWalk } from '../plan/tree.js';
import { indexIdentity } from '../plan/watch.js';
import type { Job } from './job.js';
import type { CallConfig, Opened } from './open.js';
import type { Planned } from './plan.js';
import type { Walked } from './walk.js';
import type { Written } from './write.js';

export interface Indexed {
  readonly racy: RacyDecision;
  /** Milliseconds waited for the clock to leave the newest file's second. */
  readonly waited: number;
}

/**
 * The cache-tree of the new index, as git writes one after a checkout: from the walk of the
 * tree checked out, not valid above paths where the index differs from it. None for a checkout
 * of paths (most of the index is the old one) or a tree filtered by pathspecs.
 */
function cacheTree(
  mode: Mode,
  walked: TreeWalk | null,
  target: EntryList | null,
  plan: Plan,
  sparse: CollapsedIndex | null,
): Buffer[] {
  // (A restore walks no tree: walked is null.)
  if (walked === null || target !== walked.entries || mode === 'paths') {
    return [];
  }
  return [cacheTreeExtension(walked.dirs, plan.result, walked.entries, sparse?.sparse)];
}

/**
 * The cache-tree of a checkout of paths from a sparse index that stays sparse with the same
 * sparse directories: the one read, not valid above the paths that changed (git's, after the
 * same checkout). None otherwise, as for a full index.
 */
function pathsCacheTree(current: IndexFile | null, plan: Plan, sparse: CollapsedIndex | null) {
  const read = current?.expandedFrom?.file;
  const ext = read?.extensions.find((e) => e.signature === CACHE_TREE_SIGNATURE);
  if (!read || !ext || !sparse) return [];
  // The same sparse directories as read, with the same trees.
  const dirs: Buffer[] = [];
  const oids: Buffer[] = [];
  for (let i = 0; i < read.entries.count; i++) {
    if (read.entries.modes[i] !== SPARSE_DIR_MODE) continue;
    dirs.push(read.entries.pathBytes(i), Buffer.alloc(1));
    oids.push(read.entries.oid(i));
  }
  if (!Buffer.concat(dirs).equals(sparse.sparse.paths)) return [];
  if (!Buffer.concat(oids).equals(sparse.sparse.oids)) return [];
  const tree = invalidatedCacheTree(ext.data, plan.result, current!.entries);
  return tree === null ? [] : [tree];
}

/**
 * The index of a restore from a sparse index that stays sparse: the file read with new stat
 * data for the entries it holds as they are (a restore writes no skip-worktree entry, so its
 * sparse directories, cache-tree and other extensions stay as they were).
 */
function patchSparse(current: IndexFile, stats: Uint32Array): Buffer[] {
  const { file, origin } = current.expandedFrom!;
  const patched = file.stats.slice();
  for (let k = 0; k < origin.length; k++) {
    const i = origin[k]!;
    if (i < 0) continue;
    patched.set(stats.subarray(k * STAT_WORDS, (k + 1) * STAT_WORDS), i * STAT_WORDS);
  }
  return patchIndex(file.raw, file.offsets, file.stats, patched);
}

/**
 * The index written sparse where git writes it so (index/sparse.ts): null when index.sparse
 * is off or the sparse checkout is not in cone mode (a sparse index read is then written
 * expanded, as git's ensure_full_index does).
 */
function sparseIndex(
  job: Job,
  cone: Cone | null,
  opened: Opened,
  walked: Walked,
  plan: Plan,
  stats: Uint32Array,
): CollapsedIndex | null {
  if (!sparseIndexAllowed(job.repo, cone)) return null;
  // As git (is_sparse_index_allowed): a split index is never sparse.
  if (opened.split.split) return null;
  // A restore or a checkout of paths has no tree to collapse a full index with (git would
  // hash the trees of its own): a full index read stays full.
  if ((opened.mode === 'restore' || opened.mode === 'paths') && !opened.current?.sparse) {
    return null;
  }
  const walk = walked.targetWalk;
  return collapseIndex(plan.result, stats, plan.extFlags, cone!, {
    walk:
      walk !== null && walked.targetEntries === walk.entries && opened.mode !== 'paths'
        ? { dirs: walk.dirs, entries: walk.entries }
        : null,
    current: opened.current,
  });
}

/**
 * Whether this phase reads the old index's entries or stat data (not only its raw file and
 * version): a restore or a checkout of paths keeps entries from it, a split or expanded sparse
 * index read is rebuilt from its parts, a sparse index written collapses with it. Otherwise
 * they may be let go before the write (open.ts, releaseIndexRead).
 */
export function readsIndexRead(job: Job, opened: Opened, cone: Planned['cone']): boolean {
  const { current, mode } = opened;
  if (current === null) return false;
  return (
    mode === 'restore' ||
    mode === 'paths' ||
    current.split !== undefined ||
    current.expandedFrom !== undefined ||
    current.sparse ||
    sparseIndexAllowed(job.repo, cone)
  );
}

/** A new index file made as it is written (see composeIndex). */
interface IndexStream {
  readonly entries: EntryList;
  readonly stats: Uint32Array;
  readonly options: BuildIndexOptions;
  /** Whether the file read may be this one (compared before it is written). */
  readonly compare: boolean;
}

function sameBytes(parts: readonly Buffer[], raw: Buffer): boolean {
  let length = 0;
  for (const p of parts) length += p.length;
  if (length !== raw.length) return false;
  let at = 0;
  for (const p of parts) {
    if (!p.equals(raw.subarray(at, at + p.length))) return false;
    at += p.length;
  }
  return true;
}

/**
 * The bytes of the index to write: patched in place (a restore keeping every entry), a split
 * index's file (and perhaps a new shared index), or a whole new file, sparse where the cone
 * says so. A whole new file that cannot be the old one (there was none, or the checkout
 * changed an entry) is made as it is written (`stream`, and `index` null), never whole in
 * memory; else it is made whole (`index`) to be compared with the old one.
 */
function composeIndex(
  job: Job,
  opened: Opened,
  walked: Walked,
  plan: Planned['plan'],
  cone: Planned['cone'],
  stats: Uint32Array,
): {
  index: Buffer[] | null;
  stream: IndexStream | null;
  split: SplitFiles | null;
  inPlace: boolean;
} {
  const { mode, current } = opened;
  const sparse = sparseIndex(job, cone, opened, walked, plan, stats);
  // A restore keeps the entries as they are: the old file gets new stat data in place (a
  // sparse index read, when it is written sparse again).
  // (A split index read is one file of two: it is written whole.)
  const readSplit = current?.split ?? current?.expandedFrom?.file.split;
  const inPlace =
    mode === 'restore' &&
    current !== null &&
    readSplit === undefined &&
    !opened.split.split &&
    plan.result.count === current.entries.count &&
    (current.sparse === true) === (sparse !== null);
  const options = {
    extFlags: sparse?.extFlags ?? plan.extFlags,
    version: indexVersion(job.repo, current),
    extensions:
      // A restore of a split index keeps the entries, and so the extensions, as they were
      // (as inPlace does for a whole one).
      mode === 'restore' && current !== null && readSplit !== undefined && !current.expandedFrom
        ? current.extensions.map((e) => extensionBytes(e.signature, e.data))
        : [
            ...(mode === 'paths'
              ? pathsCacheTree(current, plan, sparse)
              : cacheTree(mode, walked.targetWalk, walked.targetEntries, plan, sparse)),
            ...(sparse ? [sparseExtension()] : []),
          ],
  };
  // A split index (core.splitIndex, index/split-write.ts): the index file, and perhaps a new
  // shared index written before it.
  const split: SplitFiles | null = opened.split.split
    ? buildSplitIndex(plan.result, stats, options, readSplit, opened.split)
    : null;
  const { created, updated, deleted } = plan.counts;
  if (split === null && !inPlace) {
    const stream = {
      entries: sparse?.entries ?? plan.result,
      stats: sparse?.stats ?? stats,
      options,
      // Nothing changed in the worktree: the file may be the one read, byte for byte.
      compare: current !== null && created + updated + deleted === 0,
    };
    return { index: null, stream, split, inPlace };
  }
  // Not streamed: a restore's entries patched in place, or a split index's file (a whole index
  // that is neither is streamed above, compared with the one read when nothing changed).
  const index = inPlace
    ? current.expandedFrom
      ? patchSparse(current, stats)
      : patchIndex(current.raw, current.offsets, current.stats, stats)
    : [split!.main];
  return { index, stream: null, split, inPlace };
}

/**
 * The tree the index written holds exactly, or null: a forced or fresh checkout of a whole
 * tree (no pathspec, no sparse checkout, no split index) leaves nothing of the index read.
 */
function wholeTree(job: Job, opened: Opened, cone: Cone | null): string | null {
  const { mode, target, split } = opened;
  if (mode !== 'force' && mode !== 'fresh') return null;
  if (job.settings.paths !== undefined || cone !== null || split.split) return null;
  return target?.tree ?? null;
}

export async function commitIndex(
  job: Job,
  config: CallConfig,
  opened: Opened,
  walked: Walked,
  { plan, cone }: Planned,
  { outcome }: Written,
): Promise<Indexed> {
  const { current } = opened;
  const indexLock = opened.indexLock!;
  // The kept entries' stat data and the written ones' fresh, in one array (execute.ts).
  const stats = outcome.stats;
  const { index, stream, split, inPlace } = composeIndex(job, opened, walked, plan, cone, stats);
  const written = [...plan.files.map((f) => f.index), ...plan.symlinks, ...plan.gitlinks];
  const racy = decideRacyWait(job.settings.racyWait, outcome.stats, Date.now(), written);
  // Nothing changed (a no-op refresh, a restore with nothing to do): the index on disk already
  // says all of it, byte for byte; the lock is let go instead of a rewrite, as git leaves an
  // index it did not change.
  const unchanged =
    current !== null &&
    !split?.shared &&
    (index !== null
      ? sameBytes(index, current.raw)
      : stream!.compare &&
        indexFileEquals(current.raw, stream!.entries, stream!.stats, stream!.options));
  if (unchanged) {
    indexLock.rollback();
    opened.watch?.record(
      indexIdentity(job.indexPath),
      plan.result,
      plan.verified,
      inPlace,
      wholeTree(job, opened, cone),
    );
    return { racy, waited: 0 };
  }
  // The racy second is waited out while the index is made and written, not before: the index
  // file's time is what git compares, and the lock is stamped afresh after the wait. A split
  // index's shared file is written first and is itself compared, so it waits first.
  const newest = racy.waited ? newestWritten(outcome.stats, written) : 0;
  let waited = racy.waited && split?.shared ? await leaveRacySecond(newest) : 0;
  const gitDir = dirname(job.indexPath);
  const durable = config.fsync !== 'none';
  const sharedPath = split?.shared
    ? writeSharedIndex(gitDir, split.shared, job.repo.shared, durable)
    : null;
  if (index !== null) indexLock.writeAll(index);
  else {
    const { entries, stats: words, options } = stream!;
    indexLock.writeThrough((fd) => writeIndexFile(fd, entries, words, options));
  }
  if (racy.waited && !split?.shared) waited = await leaveRacySecond(newest);
  if (racy.waited && indexLock.mtimeSeconds() <= newest) {
    // Written within the racy second (or the filesystem's clock is coarser than ours): stamp
    // the index with the time it is now, past that second.
    indexLock.touch();
  }
  killPoint();
  const checksum = indexLock.tail(INDEX_HASH);
  // The index first, then HEAD, as git: if HEAD cannot follow, the index and worktree hold
  // the target and HEAD the old commit — a state git reads as staged changes, not damage.
  indexLock.commit(durable);
  const identity = rememberCommitted(job.indexPath, checksum);
  if (sharedPath !== null) expireSharedIndexes(gitDir, sharedPath, opened.split.expireBefore);
  else if (split?.keptPath) freshenSharedIndex(split.keptPath);
  // What the next call may take as known: none of it where collisions rewrote files.
  opened.watch?.record(
    identity,
    plan.result,
    outcome.collisions.length === 0 ? plan.verified : null,
    inPlace,
    wholeTree(job, opened, cone),
    { positions: written, stats, threads: config.workers },
  );
  killPoint();
  return { racy, waited };
}
