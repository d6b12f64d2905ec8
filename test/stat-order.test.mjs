// The native lstat batch (statFiles) takes paths in any order — a switch asks for the files that
// change, then the directories of new paths, deepest first — and answers each slot as a single
// lstat of that path would, with a path under a symlinked or missing directory absent. It checks
// the leading directories of paths in byte order, and answers a directory it already saw on the
// way to a deeper path from that: the slots must not notice.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadAddon } from '../dist/addon.js';
import { STAT_WORDS } from '../dist/index/write.js';

function tree() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-stat-order-'));
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-stat-outside-'));
  fs.mkdirSync(path.join(outside, 'x'));
  fs.writeFileSync(path.join(outside, 'x', 'f'), 'outside\n');
  for (const d of ['a/b/c', 'a/b/d', 'a/e', 'z/y'])
    fs.mkdirSync(path.join(root, d), { recursive: true });
  for (const f of ['a/b/c/1', 'a/b/c/2', 'a/b/d/3', 'a/e/4', 'z/y/5', 'top']) {
    fs.writeFileSync(path.join(root, f), `${f}\n`);
  }
  fs.symlinkSync(outside, path.join(root, 'a', 'link'));
  fs.writeFileSync(path.join(root, 'a', 'file'), 'a file\n');
  return root;
}

// What one lstat of each path says, with the leading directories all real ones.
function expected(root, rel) {
  const parts = rel.split('/');
  for (let k = 1; k < parts.length; k++) {
    const st = fs.lstatSync(path.join(root, ...parts.slice(0, k)), { throwIfNoEntry: false });
    if (!st?.isDirectory()) return null;
  }
  return fs.lstatSync(path.join(root, rel), { throwIfNoEntry: false }) ?? null;
}

test('statFiles answers unsorted paths, directories asked for themselves, as one lstat each', () => {
  const root = tree();
  const rels = [
    'a/b/c/2',
    'z/y/5',
    'a/b/c',
    'a/b',
    'a',
    'a/link/x/f',
    'a/link/x',
    'a/link',
    'a/file/under',
    'a/b/d/3',
    'a/e/4',
    'a/missing/deep/x',
    'a/b/c/1',
    'top',
    'z/y',
    'z',
    'a/e',
  ];
  const paths = Buffer.from(rels.map((r) => `${r}\0`).join(''), 'latin1');
  for (const threads of [1, 4]) {
    const { stats, status } = loadAddon().statFiles({ root, paths, threads, perThread: 1 });
    rels.forEach((rel, k) => {
      const want = expected(root, rel);
      if (want === null) {
        assert.notEqual(status[k], 0, `${rel} (threads ${threads}) should be absent`);
        return;
      }
      assert.equal(status[k], 0, `${rel} (threads ${threads}) should be present`);
      const w = stats.subarray(k * STAT_WORDS, (k + 1) * STAT_WORDS);
      assert.equal(w[6], want.mode, `${rel}: mode`);
      assert.equal(w[5], want.ino % 2 ** 32, `${rel}: inode`);
      assert.equal(w[9], want.size % 2 ** 32, `${rel}: size`);
      assert.equal(w[2], Math.floor(want.mtimeMs / 1000), `${rel}: mtime`);
    });
  }
});
