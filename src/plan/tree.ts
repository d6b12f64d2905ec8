import type { NativeOdb } from '../addon.js';
import { PcheckoutError, fromNative } from '../errors.js';
import { oidBuffer } from '../repo/objects.js';
import { EntryList } from './entries.js';
import { protectionBits, type PathProtection } from './paths.js';

export const MODE_FILE = 0o100644;
export const MODE_EXEC = 0o100755;
export const MODE_SYMLINK = 0o120000;
export const MODE_GITLINK = 0o160000;

/**
 * The tree, recursively, as one flat list in index order. Every path git's verify_path would
 * refuse under `protect` is refused here (ERR_UNSAFE_PATH), before anything is written.
 */
export function walkTree(
  odb: NativeOdb,
  tree: string,
  protect: PathProtection,
  { keep = false }: { keep?: boolean } = {},
): EntryList {
  let raw;
  try {
    raw = odb.walkTree(oidBuffer(tree), protectionBits(protect), keep);
  } catch (err) {
    throw unsafePath(err, tree) ?? fromNative(err, `cannot read tree ${tree}`);
  }
  // In index order: the walk checks that each path sorts after the one before (natively: a
  // check here cost two Buffers and a compare per entry).
  return new EntryList(raw);
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
