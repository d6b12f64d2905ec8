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
export function walkTree(odb: NativeOdb, tree: string, protect: PathProtection): EntryList {
  let raw;
  try {
    raw = odb.walkTree(oidBuffer(tree), protectionBits(protect));
  } catch (err) {
    throw unsafePath(err, tree) ?? fromNative(err, `cannot read tree ${tree}`);
  }
  const entries = new EntryList(raw);
  for (let i = 1; i < entries.count; i++) {
    // Trees are sorted, so their walk is already in index order; a tree that breaks the rule
    // would break the index too, so refuse it rather than guess.
    if (Buffer.compare(entries.pathBytes(i - 1), entries.pathBytes(i)) >= 0) {
      throw new PcheckoutError(
        'ERR_CORRUPT_OBJECT',
        `tree ${tree} lists ${entries.display(i - 1)} and ${entries.display(i)} out of order`,
        { oid: tree },
      );
    }
  }
  return entries;
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
