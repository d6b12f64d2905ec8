// Deep relative paths under a long worktree path: git works relative to the worktree, so a
// path is limited by its own length, not by the worktree's plus its own. pcheckout works
// relative to a handle on the worktree's root and must succeed wherever git does — fresh, on
// the pool, switching (deletions, new directories, a file turned into a directory), restoring
// — and fail, where git fails too, with a short message.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { PcheckoutError, checkout } from '../dist/index.js';
import { Repo, ROOT, git, gitOut, gitTry } from './helpers/git.mjs';
import { assertRejectsWith } from './helpers/run.mjs';

const segment = (c, n) => c.repeat(n);
// A worktree path of ~2,900 bytes and tree paths of ~1,450: together past PATH_MAX (4,096).
const LONG_PARENT = path.join(
  ROOT,
  'long',
  ...Array.from({ length: 14 }, (_, i) => segment(String.fromCharCode(97 + i), 200)),
);
const DEEP = Array.from({ length: 7 }, (_, i) => `${segment('d', 200)}${i}`).join('/');

// Node's recursive rm goes by absolute path and stops at PATH_MAX; rm(1) walks by handle.
after(() => {
  spawnSync('rm', ['-rf', path.join(ROOT, 'long')]);
});

let counter = 0;
/** A clone (no checkout) whose worktree sits under LONG_PARENT. */
function longClone(src) {
  fs.mkdirSync(LONG_PARENT, { recursive: true });
  const dir = path.join(LONG_PARENT, `w${++counter}`);
  git(ROOT, ['clone', '-q', '--no-checkout', src.dir, dir]);
  return dir;
}

/**
 * git's own view of `dir` (it works relative to the worktree, so it can look): the index
 * equals git's checkout of the same commit, git status is clean, and with the stat data
 * thrown away (read-tree) every file's content, mode and link target still hashes to HEAD's.
 */
function assertLikeGit(dir, gitDir) {
  assert.equal(gitOut(dir, 'ls-files', '-s'), gitOut(gitDir, 'ls-files', '-s'));
  assert.equal(gitOut(dir, 'status', '--porcelain', '--untracked-files=all'), '');
  git(dir, ['read-tree', 'HEAD']);
  const refresh = gitTry(dir, ['update-index', '--refresh']);
  assert.equal(refresh.status, 0, `content differs from HEAD: ${refresh.stdout}`);
  assert.equal(gitOut(dir, 'status', '--porcelain', '--untracked-files=all'), '');
}

describe('deep paths under a long worktree path', () => {
  let src;
  before(() => {
    src = Repo.init('long-src');
    src.write(`${DEEP}/file.txt`, 'deep\n');
    src.write(`${DEEP}/run.sh`, '#!/bin/sh\n', { exec: true });
    src.write(`${DEEP}/gone.txt`, 'removed on other\n');
    src.write(`${DEEP}/becomes-dir`, 'a file on main\n');
    src.symlink(`${DEEP}/link`, 'file.txt');
    for (let i = 0; i < 30; i++) src.write(`${DEEP}/many/${i}.txt`, `many ${i}\n`);
    src.write('top.txt', 'top\n');
    src.commit('main');
    git(src.dir, ['checkout', '-q', '-b', 'other']);
    src.rm(`${DEEP}/gone.txt`).rm(`${DEEP}/becomes-dir`);
    src.write(`${DEEP}/becomes-dir/inside.txt`, 'a directory on other\n');
    src.write(`${DEEP}/file.txt`, 'changed\n');
    src.write(`${DEEP}/new/deeper/new.txt`, 'new\n');
    src.commit('other');
    git(src.dir, ['checkout', '-q', 'main']);
  });

  test('git itself checks the tree out there', () => {
    const dir = longClone(src);
    assert.ok(dir.length + DEEP.length > 4096, 'not past PATH_MAX');
    git(dir, ['checkout', '-q', 'main']);
    assert.equal(gitOut(dir, 'status', '--porcelain'), '');
  });

  for (const workers of [1, 2]) {
    test(`fresh checkout, then a switch and a restore (workers ${workers})`, async () => {
      const theirs = longClone(src);
      git(theirs, ['checkout', '-q', 'main']);
      const dir = longClone(src);
      const opts = { workers, threshold: 0, racyWait: false };
      const fresh = await checkout(dir, opts);
      assert.equal(fresh.mode, 'fresh');
      assertLikeGit(dir, theirs);

      git(theirs, ['checkout', '-q', 'other']);
      git(dir, ['branch', '-q', 'other', 'origin/other']);
      git(dir, ['reset', '-q']); // the read-tree above dropped the stat data
      const sw = await checkout(dir, { ...opts, ref: 'other' });
      assert.equal(sw.mode, 'switch');
      assert.ok(sw.deleted >= 1 && sw.created >= 2, JSON.stringify(sw));
      assertLikeGit(dir, theirs);

      // Restore a deleted deep file and a modified one (relative paths from the worktree).
      git(dir, ['reset', '-q']);
      fs.rmSync(path.join(dir, 'top.txt'));
      const restored = await checkout(dir, { ...opts, restore: true });
      assert.equal(restored.mode, 'restore');
      assertLikeGit(dir, theirs);
    });
  }
});

describe('a path too long for git as well', () => {
  test('refused with a message that names the path once', async () => {
    // Built with plumbing: no filesystem can hold it for `git add`.
    const src = Repo.init('too-long');
    const blob = git(src.dir, ['hash-object', '-w', '--stdin'], { input: 'x\n' }).trim();
    const tooLong = `${Array.from({ length: 17 }, (_, i) => `${segment('t', 250)}${i}`).join('/')}/f`;
    git(src.dir, ['update-index', '--add', '--cacheinfo', `100644,${blob},${tooLong}`]);
    git(src.dir, ['update-index', '--add', '--cacheinfo', `100644,${blob},short.txt`]);
    git(src.dir, ['commit', '-q', '-m', 'too long']);
    const theirs = longClone(src);
    assert.notEqual(gitTry(theirs, ['checkout', '-q', 'main']).status, 0, 'git succeeded');
    const dir = path.join(ROOT, 'long', `too-long-${++counter}`);
    git(ROOT, ['clone', '-q', '--no-checkout', src.dir, dir]);
    const err = await assertRejectsWith(PcheckoutError, () => checkout(dir, { racyWait: false }), [
      'ERR_IO',
      'ERR_WRITE_FAILED',
    ]);
    assert.equal(err.message.split(tooLong).length - 1, 1, 'the path is not named exactly once');
    assert.ok(err.message.length < tooLong.length + 300, `message of ${err.message.length} bytes`);
    assert.match(err.message, /ENAMETOOLONG|File name too long/);
    assert.equal(fs.existsSync(path.join(dir, '.git', 'index.lock')), false);
  });
});
