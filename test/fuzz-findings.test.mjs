// What the fuzz targets (fuzz/, npm run fuzz) found in the native parsers, checked again through
// the public API on repositories made byte by byte. (A delta whose header declares a result
// of gigabytes is kept as fuzz/seeds/delta/regress-*: it is a matter of what gets allocated,
// which only the fuzzer's allocation limit sees.)

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { test } from 'node:test';
import { PcheckoutError, checkout } from '../dist/index.js';
import { objectStore, rawRepo, writeCommit, writeLoose } from './helpers/raw.mjs';
import { assertRejectsWith } from './helpers/run.mjs';

/** Stores `body` as a tree under the id `id`, which is not its hash: a store that lies. */
function writeTreeAs(objectsDir, id, body) {
  const file = path.join(objectsDir, id.slice(0, 2), id.slice(2));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(
    file,
    zlib.deflateSync(Buffer.concat([Buffer.from(`tree ${body.length}\0`), body])),
  );
}

const entry = (mode, name, id) =>
  Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(id, 'hex')]);

test('a tree that lists itself is refused as corrupt at once, not walked 4,096 levels deep', async () => {
  const objects = objectStore();
  const blob = writeLoose(objects, 'blob', 'x\n');
  const self = 'ab'.repeat(20);
  // Eight files and a directory d that is this very tree: d/d/d/... with eight files each.
  const files = Array.from({ length: 8 }, (_, i) => entry('100644', `f${i}`, blob));
  writeTreeAs(objects, self, Buffer.concat([entry('40000', 'd', self), ...files]));
  const { dir, gitDir } = rawRepo(objects, writeCommit(objects, self), { prefix: 'tree-cycle' });
  const err = await assertRejectsWith(
    PcheckoutError,
    () => checkout(dir, { racyWait: false }),
    'ERR_CORRUPT_OBJECT',
  );
  assert.match(err.message, /contains itself/);
  assert.deepEqual(fs.readdirSync(dir), ['.git'], 'nothing written');
  assert.equal(fs.existsSync(path.join(gitDir, 'index')), false, 'no index');
});
