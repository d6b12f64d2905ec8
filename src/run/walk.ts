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

/** The id of the tree HEAD points at now (null when HEAD is unborn): a switch's "old tree". */
function headTreeId(refs: Refs, odb: NativeOdb): string | null {
  const oid = refs.resolve('HEAD');
  if (oid === undefined) return null;
  const commit = readObject(odb, oid);
  return commit.type === 'commit' ? commitTree(commit.data, oid) : oid;
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
  // A switch's old tree: the index's entries where the index holds exactly HEAD's tree (its
  // whole cache-tree lent), else walked after the target, whose walk is kept to lend it the
  // subtrees they share.
  const headId = mode === 'switch' && current !== null ? headTreeId(opened.refs, odb) : undefined;
  const headIsIndex = headId !== undefined && headId !== null && headId === lent?.root;
  const targetWalk: TreeWalk | null = target
    ? walk(odb, target.tree, protect, { keep: headId !== undefined && !headIsIndex })
    : null;
  let targetEntries = targetWalk?.entries ?? null;
  if (job.materialize && pathspec && targetEntries) {
    targetEntries = targetEntries.filter((name) => pathspec.matches(name));
    pathspec.assertAllMatched();
  }
  const head =
    headId === undefined
      ? null
      : headId === null
        ? EMPTY()
        : headIsIndex
          ? current!.entries
          : walkTree(odb, headId, protect);
  // No walk copies from the kept walk or the lent index after these: their tables go now (tens
  // of MB at a million entries), not when the plan ends.
  odb.releaseWalks();
  return { protect, pathspec, targetWalk, targetEntries, head };
}
