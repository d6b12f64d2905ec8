// A single file over 100 MB (incompressible), packed, checked out through the pool and
// sequentially; compared byte for byte with git's checkout and with the bytes written.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../../dist/index.js';
import { checkoutMatchesGit } from '../helpers/compare.mjs';
import {
  ROOT,
  Repo,
  assertStorage,
  cachedFixture,
  freeBytes,
  writeRandomFile,
} from '../helpers/git.mjs';

const SIZE = 100 * 1024 * 1024 + 12345; // not a multiple of any block size
// source file + loose object + pack + three worktrees (git's and two pcheckout runs) + slack
const NEEDED = SIZE * 8;

function sha256(file) {
  const hash = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.allocUnsafe(1 << 22);
  try {
    for (let n; (n = fs.readSync(fd, buf, 0, buf.length, null)) > 0;) {
      hash.update(buf.subarray(0, n));
    }
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

describe('a file over 100 MB', () => {
  const free = freeBytes(ROOT);
  const skip =
    free < NEEDED
      ? `needs ${Math.ceil(NEEDED / 2 ** 20)} MB free in ${ROOT}, only ${Math.floor(free / 2 ** 20)} MB`
      : false;
  let repo;
  let digest;

  before(() => {
    if (skip) return;
    ({ repo, digest } = cachedFixture('large-file', [SIZE], () => {
      const r = Repo.init('large');
      const sha = writeRandomFile(r.abs('big/large.bin'), SIZE, 1);
      r.write('small.txt', 'small\n');
      r.write('big/exec.sh', '#!/bin/sh\n', { exec: true });
      r.commit('large');
      r.gc();
      return { repo: r, digest: sha };
    }));
    assertStorage(repo.dir, 'packed');
  });

  for (const opts of [
    { workers: 2, threshold: 0 },
    { workers: 1, threshold: 0 },
  ]) {
    test(`workers ${opts.workers}, threshold ${opts.threshold}`, { skip }, async () => {
      const { dir, summary } = await checkoutMatchesGit(checkout, repo, opts);
      const file = path.join(dir, 'big/large.bin');
      assert.equal(fs.statSync(file).size, SIZE);
      assert.equal(sha256(file), digest, 'content differs from the bytes committed');
      assert.ok(summary.bytes >= SIZE, `summary.bytes ${summary.bytes} < ${SIZE}`);
      fs.rmSync(dir, { recursive: true, force: true }); // keep disk use down
    });
  }
});
