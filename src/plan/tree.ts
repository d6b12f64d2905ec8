import type { NativeOdb, NativeTreeDirs } from '../addon.js';
import { PcheckoutError, fromNative } from '../errors.js';
import { CACHE_TREE_SIGNATURE } from '../index/cache-tree.js';
import type { IndexFile } from '../index/read.js';
import { oidBuffer } from '../repo/objects.js';
import { EntryList } from './entries.js';
import { protectionBits, type PathProtection } from './paths.js';

export const MODE_FILE = 0o100644;
export const MODE_EXEC = 0o100755;
export const MODE_SYMLINK = 0o120000;
export const MODE_GITLINK = 0o160000;

/** A tree walked: its entries, and its directories (for the index's cache-tree). */
export interface TreeWalk {
  entries: EntryList;
  dirs: NativeTreeDirs;
}

/**
 * The tree, recursively, as one flat list in index order. Every path git's verify_path would
 * refuse under `protect` is refused here (ERR_UNSAFE_PATH), before anything is written.
 * Subtrees the reader's kept walk or the lent index (lendIndex) hold are copied from them.
 */
export function walkTree(
  odb: NativeOdb,
  tree: string,
  protect: PathProtection,
  options: { keep?: boolean } = {},
): EntryList {
  return walk(odb, tree, protect, options).entries;
}

export function walk(
  odb: NativeOdb,
  tree: string,
  protect: PathProtection,
  { keep = false }: { keep?: boolean } = {},
): TreeWalk {
  let raw;
  try {
    raw = odb.walkTree(oidBuffer(tree), protectionBits(protect), keep);
  } catch (err) {
    throw unsafePath(err, tree) ?? fromNative(err, `cannot read tree ${tree}`);
  }
  // In index order: the walk checks that each path sorts after the one before (natively: a
  // check here cost two Buffers and a compare per entry).
  return { entries: new EntryList(raw), dirs: raw.dirs };
}

/**
 * Lends the current index to the reader's next walks: a directory its cache-tree names with the
 * id the walk meets is copied from the index's entries, not read tree by tree (git's
 * unpack_trees does the same with the cache-tree). `index`'s paths must have been checked under
 * `protect` (assertSafePaths). Returns how many directories may be lent (0 without a usable
 * cache-tree: none, malformed, or naming no directory the index holds as it says) and, when
 * all of them may, the id of the tree the whole index holds.
 */
export function lendIndex(
  odb: NativeOdb,
  index: IndexFile,
  protect: PathProtection,
): { lent: number; root: string | null } {
  const ext = index.extensions.find((e) => e.signature === CACHE_TREE_SIGNATURE);
  if (ext === undefined || index.entries.count === 0) return { lent: 0, root: null };
  const { paths, starts, count, oids, modes } = index.entries;
  const { lent, root } = odb.lendIndex(
    { paths, starts, count, oids, modes },
    index.stages,
    index.extFlags,
    ext.data,
    protectionBits(protect),
  );
  return { lent, root: root === null ? null : root.toString('hex') };
}

/** The walk's refusal of a path ("<path> (in tree <id>): <rule>") as an error naming both. */
function unsafePath(err: unknown, tree: string): PcheckoutError | null {
  const e = err as { code?: unknown; message?: unknown };
  if (e?.code !== 'ERR_UNSAFE_PATH' || typeof e.message !== 'string') return null;
  const at = e.message.lastIndexOf(' (in tree ');
  const close = e.message.indexOf('): ', at);
  if (at < 0 || close < 0) return null;
  const path = e.message.slice(0, at);
  const rule = e.message.slice(close + 3);
  return new PcheckoutError('ERR_UNSAFE_PATH', `unsafe path '${path}' in tree ${tree}: ${rule}`, {
    path,
    oid: e.message.slice(at + 10, close),
    cause: err,
  });
}
