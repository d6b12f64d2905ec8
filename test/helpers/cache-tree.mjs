// The index's cache-tree (TREE extension) as git reads it, and the checks a checkout's index
// must pass: git's own verification (GIT_TEST_CHECK_CACHE_TREE recomputes every valid
// directory's tree from the entries and aborts on a mismatch) and agreement with git's index.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { readIndex } from '../../dist/index/read.js';
import { gitTry, tmpDir } from './git.mjs';

/** The TREE extension's bytes (signature, size, data) of an index file, or null. */
export function cacheTreeBytes(indexFile) {
  const ext = readIndex(indexFile).extensions.find((e) => e.signature === 'TREE');
  if (!ext) return null;
  const header = Buffer.alloc(8);
  header.write('TREE', 0, 'latin1');
  header.writeUInt32BE(ext.data.length, 4);
  return Buffer.concat([header, ext.data]);
}

/** Map(path with '/' or '' -> { entries, subtrees, oid | null }) of a TREE extension. */
export function parseCacheTree(ext) {
  const data = ext.subarray(8);
  const out = new Map();
  let pos = 0;
  const readNode = (prefix) => {
    const nul = data.indexOf(0, pos);
    const name = data.toString('latin1', pos, nul);
    pos = nul + 1;
    const sp = data.indexOf(0x20, pos);
    const entries = Number(data.toString('latin1', pos, sp));
    pos = sp + 1;
    const nl = data.indexOf(0x0a, pos);
    const subtrees = Number(data.toString('latin1', pos, nl));
    pos = nl + 1;
    let oid = null;
    if (entries >= 0) {
      oid = data.toString('hex', pos, pos + 20);
      pos += 20;
    }
    const p = prefix === null ? '' : `${prefix}${name}/`;
    out.set(p, { entries, subtrees, oid });
    for (let k = 0; k < subtrees; k++) readNode(p);
  };
  readNode(null);
  assert.equal(pos, data.length, 'TREE extension: bytes after the last directory');
  return out;
}

/**
 * git's verification of `dir`'s index's cache-tree, on a copy of the index: a no-op
 * `git checkout HEAD` with GIT_TEST_CHECK_CACHE_TREE, which aborts ("BUG: cache-tree ... does
 * not match") when a valid directory's id or count is not what its entries make.
 */
export function assertCacheTreeVerifies(dir) {
  const copy = path.join(tmpDir('index-copy'), 'index');
  fs.copyFileSync(path.join(dir, '.git', 'index'), copy);
  const r = gitTry(dir, ['checkout', '-q', 'HEAD'], {
    env: { GIT_INDEX_FILE: copy, GIT_TEST_CHECK_CACHE_TREE: '1' },
  });
  assert.ok(
    r.status !== 134 && !/BUG: .*cache-tree/.test(r.stderr),
    `git rejects the index's cache-tree in ${dir}:\n${r.stderr}`,
  );
}

/**
 * `dir`'s cache-tree against git's in `gitDir` after the same checkout: the same directories;
 * each valid in both with the same id and count; with `exact`, the same bytes (git writes a
 * whole valid one after a fresh checkout). And git verifies it, unless it is git's own, byte
 * for byte.
 */
export function assertCacheTreeLike(dir, gitDir, { exact = false } = {}) {
  const ours = cacheTreeBytes(path.join(dir, '.git', 'index'));
  const theirs = cacheTreeBytes(path.join(gitDir, '.git', 'index'));
  if (exact) {
    assert.ok(ours !== null, `${dir}: the index has no cache-tree (git's has)`);
    assert.ok(theirs !== null && ours.equals(theirs), `${dir}: cache-tree differs from git's`);
  }
  if (ours === null) return;
  // git's own cache-tree, byte for byte: nothing of ours for git to verify.
  if (theirs !== null && ours.equals(theirs)) return;
  if (theirs !== null) {
    const a = parseCacheTree(ours);
    const b = parseCacheTree(theirs);
    const problems = [];
    for (const [p, n] of a) {
      const g = b.get(p);
      if (!g) {
        if (n.entries >= 0) problems.push(`${p || '(root)'}: valid here, not in git's`);
        continue;
      }
      if (n.entries >= 0 && g.entries >= 0 && (n.entries !== g.entries || n.oid !== g.oid)) {
        problems.push(`${p || '(root)'}: ${n.entries} ${n.oid}, git's ${g.entries} ${g.oid}`);
      }
    }
    assert.deepEqual(problems, [], `${dir}: cache-tree against git's`);
  }
  assertCacheTreeVerifies(dir);
}
