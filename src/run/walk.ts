/**
 * Phase 2, walk: the trees the plan compares — the target's (directories the index's
 * cache-tree says are unchanged lent from it, not read), and for a switch HEAD's — and the
 * path rules the plan applies (protection of .git names, pathspecs).
 */
import { EntryList } from '../plan/entries.js';
import { Pathspec } from '../plan/pathspec.js';
import { assertSafePaths, pathProtection, type PathProtection } from '../plan/paths.js';
import { lendIndex, walk, walkTree, type TreeWalk } from '../plan/tree.js';
import { commitTree, readObject } from '../repo/objects.js';
import type { NativeOdb } from '../addon.js';
import type { Refs } from '../repo/refs.js';
import type { Job } from './job.js';
import type { Opened } from './open.js';

export interface Walked {
  readonly protect: PathProtection;
  readonly pathspec: Pathspec | null;
  /** The target's walk (null: a restore walks no tree). */
  readonly targetWalk: TreeWalk | null;
  /** The target's entries, filtered by a materialize's pathspecs. */
  readonly targetEntries: EntryList | null;
  /** HEAD's entries, the old tree of a switch (else null). */
  readonly head: EntryList | null;
}

const EMPTY = (): EntryList =>
  new EntryList({
    count: 0,
    paths: Buffer.alloc(0),
    oids: Buffer.alloc(0),
    modes: new Uint32Array(0),
  });

/** The tree HEAD points at now (empty when HEAD is unborn): the "old tree" of a switch. */
function headTree(
  refs: Refs,
  odb: NativeOdb,
  protect: PathProtection,
  indexHolds: { tree: string | null; entries: EntryList },
): EntryList {
  const oid = refs.resolve('HEAD');
  if (oid === undefined) return EMPTY();
  const commit = readObject(odb, oid);
  const tree = commit.type === 'commit' ? commitTree(commit.data, oid) : oid;
  // The index holds exactly HEAD's tree (its whole cache-tree lent): its entries are that walk.
  if (tree === indexHolds.tree) return indexHolds.entries;
  return walkTree(odb, tree, protect);
}

export function walkTrees(job: Job, opened: Opened): Walked {
  const { repo, settings } = job;
  const { odb, current, target, mode } = opened;
  const protect = pathProtection(repo.config);
  if (current) assertSafePaths(current.entries, protect, 'the index');
  const pathspec = settings.paths ? new Pathspec(settings.paths) : null;
  // Directories the index's cache-tree says are unchanged are copied from it, not read.
  const lent =
    current && target && (mode === 'switch' || mode === 'force')
      ? lendIndex(odb, current, protect)
      : null;
  // A switch walks HEAD's tree next: kept, the target's walk lends it the subtrees they share.
  const targetWalk: TreeWalk | null = target
    ? walk(odb, target.tree, protect, { keep: mode === 'switch' })
    : null;
  let targetEntries = targetWalk?.entries ?? null;
  if (job.materialize && pathspec && targetEntries) {
    targetEntries = targetEntries.filter((name) => pathspec.matches(name));
    pathspec.assertAllMatched();
  }
  const head =
    mode === 'switch' && current !== null
      ? headTree(opened.refs, odb, protect, { tree: lent?.root ?? null, entries: current.entries })
      : null;
  return { protect, pathspec, targetWalk, targetEntries, head };
}
