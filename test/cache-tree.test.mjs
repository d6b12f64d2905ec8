// The index's cache-tree (TREE extension): written as git writes it after a checkout (every
// directory valid where the index holds the tree checked out, not valid above a local change),
// verified by git itself (GIT_TEST_CHECK_CACHE_TREE), and read back on the next switch to copy
// the index's entries for unchanged directories instead of reading their trees — where it is
// malformed or does not match the index, it is not trusted and the result is still exactly
// the target.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { loadAddon } from '../dist/addon.js';
import { readIndex } from '../dist/index/read.js';
import { lendIndex, walk } from '../dist/plan/tree.js';
import {
  assertCacheTreeLike,
  assertCacheTreeVerifies,
  cacheTreeBytes,
  parseCacheTree,
} from './helpers/cache-tree.mjs';
import { Repo, freshClone, git, gitOut } from './helpers/git.mjs';
import { cloneAt } from './helpers/twin.mjs';

const PROTECT = { ntfs: true, hfs: false };

/** A repository: A with nested directories, B editing one file deep in it and adding one. */
function buildRepo() {
  const r = Repo.init('cache-tree');
  for (const d of ['a', 'a/b', 'a/b/c', 'a-b', 'c', 'x.d', 'x']) {
    for (let i = 0; i < 3; i++) r.write(`${d}/f${i}.txt`, `${d} ${i}\n`);
  }
  r.symlink('a/link', 'f0.txt');
  r.write('a/run.sh', '#!/bin/sh\n', { exec: true });
  r.gitlink('c/sub', '1234567890123456789012345678901234567890');
  r.write('top.txt', 'top\n');
  r.commit('A');
  r.branch('A');
  r.write('a/b/c/f1.txt', 'changed on B\n');
  r.write('x/new.txt', 'new on B\n');
  r.commit('B');
  r.branch('B');
  r.gc();
  return r;
}

/** Rewrites `dir`'s index with its TREE extension's data replaced by `edit(data)`. */
function editCacheTree(dir, edit) {
  const file = path.join(dir, '.git', 'index');
  const d = fs.readFileSync(file);
  const ext = cacheTreeBytes(file);
  assert.ok(ext, 'the fixture index has a cache-tree');
  const at = d.indexOf(ext);
  const data = Buffer.from(edit(Buffer.from(ext.subarray(8))));
  const header = Buffer.alloc(8);
  header.write('TREE', 0, 'latin1');
  header.writeUInt32BE(data.length, 4);
  const body = Buffer.concat([d.subarray(0, at), header, data, d.subarray(at + ext.length, -20)]);
  fs.writeFileSync(file, Buffer.concat([body, createHash('sha1').update(body).digest()]));
}

/** `dir` holds exactly `ref` of `repo`, as a clean git checkout of it does. */
function assertIsCheckoutOf(dir, repo, ref) {
  const oracle = freshClone(repo.dir, { prefix: 'cache-tree-oracle' });
  git(oracle, ['checkout', '-q', '-f', ref]);
  assert.equal(git(dir, ['ls-files', '-s', '-z']), git(oracle, ['ls-files', '-s', '-z']));
  assert.equal(gitOut(dir, 'status', '--porcelain'), '', 'git status is not clean');
  assert.equal(
    gitOut(dir, 'diff-index', '--cached', '--name-only', ref),
    '',
    `the index differs from ${ref}`,
  );
}

describe('the cache-tree', () => {
  let repo;
  before(() => {
    repo = buildRepo();
  });

  test('a fresh checkout writes the cache-tree git writes, byte for byte', async () => {
    const dir = freshClone(repo.dir, { prefix: 'ct-fresh' });
    await checkout(dir, { racyWait: false });
    const oracle = freshClone(repo.dir, { prefix: 'ct-fresh-git' });
    git(oracle, ['checkout', '-q', '-f', 'HEAD']);
    assertCacheTreeLike(dir, oracle, { exact: true });
    const tree = parseCacheTree(cacheTreeBytes(path.join(dir, '.git', 'index')));
    assert.equal(tree.get('').oid, gitOut(dir, 'rev-parse', 'HEAD^{tree}'));
    assert.equal(tree.get('a/b/c/').entries, 3);
    assert.ok(
      [...tree.values()].every((n) => n.entries >= 0),
      'every directory valid',
    );
  });

  test('index version 4 keeps its version and gets the cache-tree', async () => {
    const dir = cloneAt(repo, 'A', 'ct-v4');
    git(dir, ['update-index', '--index-version', '4']);
    await checkout(dir, { ref: 'B', racyWait: false });
    assert.equal(readIndex(path.join(dir, '.git', 'index')).version, 4);
    const oracle = cloneAt(repo, 'B', 'ct-v4-git');
    assertCacheTreeLike(dir, oracle, { exact: true });
  });

  test('a staged change carried across a switch leaves the directories above it not valid', async () => {
    for (const workers of [1, 2]) {
      const dir = cloneAt(repo, 'A', 'ct-staged');
      const theirs = cloneAt(repo, 'A', 'ct-staged-git');
      for (const d of [dir, theirs]) {
        fs.writeFileSync(path.join(d, 'c/f2.txt'), 'staged\n');
        git(d, ['add', 'c/f2.txt']);
      }
      await checkout(dir, { ref: 'B', workers, threshold: 0, racyWait: false });
      git(theirs, ['checkout', '-q', 'B']);
      const tree = parseCacheTree(cacheTreeBytes(path.join(dir, '.git', 'index')));
      assert.equal(tree.get('').entries, -1, 'the root is not valid');
      assert.equal(tree.get('c/').entries, -1, 'c/ is not valid');
      assert.ok(tree.get('a/').entries >= 0 && tree.get('x/').entries >= 0, 'the rest is');
      assertCacheTreeLike(dir, theirs, { exact: true });
      // git trusts it: a wrong one would hide the staged change from diff-index.
      assert.equal(gitOut(dir, 'diff', '--cached', '--name-only', 'B'), 'c/f2.txt');
    }
  });

  test('staged changes that share directories: each directory above any of them not valid, as git', async () => {
    const staged = ['a/b/c/f0.txt', 'a/b/f1.txt', 'a/f2.txt', 'x.d/f0.txt'];
    const dir = cloneAt(repo, 'A', 'ct-shared');
    const theirs = cloneAt(repo, 'A', 'ct-shared-git');
    for (const d of [dir, theirs]) {
      for (const f of staged) fs.writeFileSync(path.join(d, f), `staged ${f}\n`);
      git(d, ['add', ...staged]);
    }
    await checkout(dir, { ref: 'B', racyWait: false });
    git(theirs, ['checkout', '-q', 'B']);
    const tree = parseCacheTree(cacheTreeBytes(path.join(dir, '.git', 'index')));
    for (const d of ['', 'a/', 'a/b/', 'a/b/c/', 'x.d/']) assert.equal(tree.get(d).entries, -1, d);
    for (const d of ['a-b/', 'c/', 'x/']) assert.ok(tree.get(d).entries >= 0, d);
    // git 2.39 leaves x/ (where the switch added a file) not valid too; ours holds its true id,
    // which git verifies.
    assertCacheTreeLike(dir, theirs);
  });

  test('the walk-shaped writer equals the node-per-directory one, invalidations included', () => {
    const r = Repo.init('cache-tree-wide');
    const names = ['a', 'a-b', 'a.b', 'a0', 'ab', 'b', 'x.d', 'x', 'x-'];
    for (const top of names) {
      for (const mid of names.slice(0, 4)) {
        r.write(`${top}/${mid}/deep/f.txt`, `${top} ${mid}\n`);
        r.write(`${top}/${mid}/g.txt`, `${top}\n`);
      }
    }
    r.commit('wide');
    const odb = new (loadAddon().Odb)([path.join(r.dir, '.git', 'objects')], 1 << 20);
    const w = walk(odb, gitOut(r.dir, 'rev-parse', 'HEAD^{tree}'), PROTECT);
    odb.close();
    const paths = w.entries;
    const pick = (every) => {
      const out = [];
      for (let i = 0; i < paths.count; i += every) out.push(`${paths.name(i)}\0`);
      return Buffer.from(out.join(''), 'latin1');
    };
    const none = { paths: Buffer.alloc(0), oids: Buffer.alloc(0) };
    for (const differing of [Buffer.alloc(0), pick(7), pick(3), pick(1), Buffer.from('zz/new\0')]) {
      const flat = loadAddon().cacheTreeExtension(w.dirs, differing, null);
      const nodes = loadAddon().cacheTreeExtension(w.dirs, differing, none);
      assert.ok(flat.equals(nodes), `differing ${differing.length} bytes`);
    }
  });

  test('a switch copies unchanged directories from the index: the walk equals one from scratch', () => {
    const { Odb } = loadAddon();
    const objects = [path.join(repo.dir, '.git', 'objects')];
    for (const [at, to] of [
      ['A', 'B'],
      ['B', 'A'],
      ['A', 'A'],
    ]) {
      const dir = cloneAt(repo, at, 'ct-walk');
      const index = readIndex(path.join(dir, '.git', 'index'));
      const tree = gitOut(repo.dir, 'rev-parse', `${to}^{tree}`);
      const alone = new Odb(objects, 1 << 20);
      const expected = walk(alone, tree, PROTECT);
      alone.close();
      const odb = new Odb(objects, 1 << 20);
      const { lent, root } = lendIndex(odb, index, PROTECT);
      assert.equal(root, gitOut(repo.dir, 'rev-parse', `${at}^{tree}`), 'the whole index lent');
      assert.equal(lent, parseCacheTree(cacheTreeBytes(path.join(dir, '.git', 'index'))).size);
      const walked = walk(odb, tree, PROTECT);
      odb.close();
      for (const k of ['paths', 'oids']) {
        assert.ok(walked.entries[k].equals(expected.entries[k]), `${at} -> ${to}: ${k}`);
      }
      assert.deepEqual([...walked.entries.modes], [...expected.entries.modes]);
      assert.ok(walked.dirs.paths.equals(expected.dirs.paths), `${at} -> ${to}: directories`);
      assert.ok(walked.dirs.oids.equals(expected.dirs.oids), `${at} -> ${to}: directory ids`);
      assert.deepEqual([...walked.dirs.ranges], [...expected.dirs.ranges]);
    }
  });

  test('a directory holding an entry no tree can have is not lent', () => {
    const { Odb } = loadAddon();
    const objects = [path.join(repo.dir, '.git', 'objects')];
    const dir = cloneAt(repo, 'A', 'ct-lend');
    const file = path.join(dir, '.git', 'index');
    const valid = Buffer.from(cacheTreeBytes(file).subarray(8));
    // An intent-to-add entry under a/: git marks a/ and the root not valid. Put back the
    // cache-tree from before, its counts raised to take the new entry in: only the entry
    // itself can then tell that a/ is not A's a/.
    fs.writeFileSync(path.join(dir, 'a/ita.txt'), 'intent\n');
    git(dir, ['add', '-N', 'a/ita.txt']);
    editCacheTree(dir, () => bump(bump(valid, '', 1), 'a/', 1));
    const index = readIndex(file);
    const odb = new Odb(objects, 1 << 20);
    const { lent, root } = lendIndex(odb, index, PROTECT);
    assert.equal(root, null, 'the root is not lent');
    const all = parseCacheTree(cacheTreeBytes(file));
    // Neither a/ (it holds the entry) nor the root (it holds a/).
    assert.equal(lent, all.size - 2, `lent ${lent} of ${all.size}`);
    const walked = walk(odb, gitOut(repo.dir, 'rev-parse', 'A^{tree}'), PROTECT);
    odb.close();
    assert.ok(!walked.entries.paths.includes('a/ita.txt'), 'the intent-to-add entry was copied');
    assert.equal(walked.entries.count, index.entries.count - 1);
  });

  // Of the 8 directories, those lent: none from a cache-tree that does not parse; else all but
  // the one whose count is off and the root above it.
  for (const [what, edit, lent] of [
    ['truncated', (d) => d.subarray(0, d.length - 7), 0],
    ['garbage', (d) => Buffer.from(d).fill(0x41, 3, 40), 0],
    // Directories A and B share (a switch would copy them): c/ holds a gitlink, a-b/ files.
    ['a count one too high', (d) => bump(d, 'c/', +1), 6],
    ['a count one too low', (d) => bump(d, 'c/', -1), 6],
    ['a count one too low, at the end', (d) => bump(d, 'x.d/', -1), 6],
    ['a count one too high, into the next directory', (d) => bump(d, 'a-b/', +1), 6],
    ['a count past the index', (d) => bump(bump(d, '', 1000), 'c/', 1000), 6],
  ]) {
    test(`a cache-tree that is ${what} is not trusted: the switch gives exactly the target`, async () => {
      const dir = cloneAt(repo, 'A', 'ct-bad');
      editCacheTree(dir, edit);
      const { Odb } = loadAddon();
      const odb = new Odb([path.join(repo.dir, '.git', 'objects')], 1 << 20);
      assert.equal(lendIndex(odb, readIndex(path.join(dir, '.git', 'index')), PROTECT).lent, lent);
      odb.close();
      await checkout(dir, { ref: 'B', racyWait: false });
      assertIsCheckoutOf(dir, repo, 'B');
      assertCacheTreeVerifies(dir);
    });
  }

  test('a forced checkout with a cache-tree rewrites only what differs and stays verified', async () => {
    const dir = cloneAt(repo, 'B', 'ct-force');
    fs.writeFileSync(path.join(dir, 'a/b/f0.txt'), 'edited\n');
    fs.rmSync(path.join(dir, 'x/new.txt'));
    await checkout(dir, { force: true, racyWait: false });
    assertIsCheckoutOf(dir, repo, 'B');
    const theirs = cloneAt(repo, 'B', 'ct-force-git');
    assertCacheTreeLike(dir, theirs, { exact: true });
  });
});

/** The TREE data with the entry count of the directory at `dir` ('a/b/'; '' the root) moved. */
function bump(data, dir, by) {
  // Directories in file order: name NUL count SP subtrees LF [20-byte id], each followed by
  // its subdirectories.
  const open = []; // { path, left }
  for (let pos = 0; pos < data.length;) {
    const nul = data.indexOf(0, pos);
    const start = nul + 1;
    const space = data.indexOf(0x20, start);
    const nl = data.indexOf(0x0a, space);
    const count = Number(data.toString('latin1', start, space));
    const subtrees = Number(data.toString('latin1', space + 1, nl));
    const parent = open.length > 0 ? open[open.length - 1] : null;
    const path = parent === null ? '' : `${parent.path}${data.toString('latin1', pos, nul)}/`;
    if (path === dir) {
      return Buffer.concat([
        data.subarray(0, start),
        Buffer.from(String(count + by), 'latin1'),
        data.subarray(space),
      ]);
    }
    if (parent !== null) parent.left--;
    open.push({ path, left: subtrees });
    while (open.length > 0 && open[open.length - 1].left === 0) open.pop();
    pos = nl + 1 + (count >= 0 ? 20 : 0);
  }
  throw new Error(`no directory ${dir} in the cache-tree`);
}
