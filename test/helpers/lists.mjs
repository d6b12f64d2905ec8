// Entry lists for tests of the addon's list work: the paths as given, each id the SHA-1 of
// `tag` and the path (another tag, other ids), every mode 100644.
import crypto from 'node:crypto';
import { EntryList } from '../../dist/plan/entries.js';

export function entryList(names, tag = '') {
  return new EntryList({
    count: names.length,
    paths: Buffer.from(names.map((p) => `${p}\0`).join('')),
    oids: Buffer.concat(
      names.map((p) =>
        crypto
          .createHash('sha1')
          .update(tag + p)
          .digest(),
      ),
    ),
    modes: new Uint32Array(names.length).fill(0o100644),
  });
}
