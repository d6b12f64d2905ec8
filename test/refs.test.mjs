// Which commit gets checked out and what HEAD becomes, for every kind of ref, exactly like
// `git checkout <ref>`; refs stored loose and only in packed-refs; bad refs rejected untouched.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout, PcheckoutError } from '../dist/index.js';
import {
  assertIndexStatMatchesDisk,
  assertSameWorktree,
  checkoutMatchesGit,
  gitOracle,
} from './helpers/compare.mjs';
import { Repo, freshClone, git, gitOut, readHead } from './helpers/git.mjs';
import { assertRejectsWith, targetState } from './helpers/run.mjs';

/** main: c1 → c2 → c3; feature: c2 → f1; tags v1 (annotated, c1), lw (c2); 'dup' is both. */
function buildRefsRepo() {
  const r = Repo.init('refs');
  r.write('a.txt', 'one\n');
  r.write('tool.sh', '#!/bin/sh\n');
  r.write('old.txt', 'removed in c2\n');
  r.write('dir/x', 'x1\n');
  r.symlink('link', 'a.txt');
  const c1 = r.commit('c1');
  r.tag('v1', c1, { annotated: true, message: 'version 1' });
  r.write('a.txt', 'two\n');
  r.chmod('tool.sh', true);
  r.rm('old.txt');
  r.write('new.txt', 'added in c2\n');
  const c2 = r.commit('c2');
  r.tag('lw', c2);
  r.branch('feature', c2);
  r.switchTo('feature');
  r.write('feature.txt', 'feature\n');
  r.symlink('link', 'new.txt');
  const f1 = r.commit('f1');
  r.switchTo('main');
  r.write('a.txt', 'three\n');
  r.write('dir/x', 'x3\n');
  const c3 = r.commit('c3');
  r.branch('dup', c1);
  r.tag('dup', c2);
  return { repo: r, c1, c2, c3, f1 };
}

describe('refs', () => {
  let fx;
  let packed;
  before(() => {
    fx = buildRefsRepo();
    // Objects in a pack, every ref only in packed-refs (with the peeled line for v1).
    packed = fx.repo.copy('refs-packed').gc();
    const loose = fs.readdirSync(path.join(packed.gitDir, 'refs'), { recursive: true });
    const looseRefs = loose.filter((f) =>
      fs.statSync(path.join(packed.gitDir, 'refs', f)).isFile(),
    );
    assert.deepEqual(looseRefs, [], 'packed fixture still has loose refs');
    const packedRefs = fs.readFileSync(path.join(packed.gitDir, 'packed-refs'), 'utf8');
    assert.match(packedRefs, /refs\/heads\/feature\n/);
    assert.match(packedRefs, new RegExp(`refs/tags/v1\\n\\^${fx.c1}\\n`));
  });

  test('no ref: HEAD and its branch stay as they are', async () => {
    const { dir, summary } = await checkoutMatchesGit(checkout, fx.repo, {}, { method: 'copy' });
    assert.equal(readHead(dir), 'ref: refs/heads/main\n');
    assert.equal(summary.ref, 'refs/heads/main');
    assert.equal(summary.detached, false);
    assert.equal(summary.commit, fx.c3);
    assert.equal(gitOut(dir, 'rev-parse', 'refs/heads/main'), fx.c3);
  });

  test('no ref with a detached HEAD: stays detached', async () => {
    const src = fx.repo.copy('refs-detached');
    git(src.dir, ['checkout', '-q', '--detach', fx.c2]);
    const { dir, summary } = await checkoutMatchesGit(checkout, src, {}, { method: 'copy' });
    assert.equal(readHead(dir), `${fx.c2}\n`);
    assert.equal(summary.detached, true);
    assert.equal(summary.ref, null);
  });

  test('local branch: HEAD becomes a symbolic ref to it', async () => {
    const opts = { ref: 'feature' };
    const { dir, summary } = await checkoutMatchesGit(checkout, fx.repo, opts, { method: 'copy' });
    assert.equal(readHead(dir), 'ref: refs/heads/feature\n');
    assert.equal(summary.ref, 'refs/heads/feature');
    assert.equal(summary.detached, false);
    assert.equal(summary.commit, fx.f1);
    assert.equal(gitOut(dir, 'rev-parse', 'refs/heads/feature'), fx.f1, 'branch moved');
    assert.equal(gitOut(dir, 'rev-parse', 'refs/heads/main'), fx.c3, 'main moved');
  });

  test('the branch HEAD already names', async () => {
    const { dir } = await checkoutMatchesGit(
      checkout,
      fx.repo,
      { ref: 'main' },
      { method: 'copy' },
    );
    assert.equal(readHead(dir), 'ref: refs/heads/main\n');
  });

  const detachedCases = [
    ['full commit id', () => fx.c2, () => fx.c2],
    ['abbreviated commit id', () => fx.c1.slice(0, 7), () => fx.c1],
    ['annotated tag (peeled to its commit)', () => 'v1', () => fx.c1],
    ['lightweight tag', () => 'lw', () => fx.c2],
    ['full tag refname', () => 'refs/tags/v1', () => fx.c1],
  ];
  for (const [label, ref, commit] of detachedCases) {
    test(`${label}: detached HEAD`, async () => {
      const opts = { ref: ref() };
      const { dir, summary } = await checkoutMatchesGit(checkout, fx.repo, opts, {
        method: 'copy',
      });
      assert.equal(readHead(dir), `${commit()}\n`);
      assert.equal(summary.commit, commit());
      assert.equal(summary.detached, true);
      assert.equal(summary.ref, null);
      assert.equal(gitOut(dir, 'rev-parse', 'refs/heads/main'), fx.c3, 'main moved');
    });
  }

  test('remote branch: detached at its commit', async () => {
    const opts = { ref: 'origin/feature' };
    const { dir, summary } = await checkoutMatchesGit(checkout, fx.repo, opts, { method: 'clone' });
    assert.equal(readHead(dir), `${fx.f1}\n`);
    assert.equal(summary.detached, true);
    assert.equal(
      gitOut(dir, 'for-each-ref', '--format=%(refname)', 'refs/heads'),
      'refs/heads/main',
    );
  });

  test('a name that is both a branch and a tag: the branch, like git', async () => {
    const { dir, summary } = await checkoutMatchesGit(
      checkout,
      fx.repo,
      { ref: 'dup' },
      {
        method: 'copy',
      },
    );
    assert.equal(readHead(dir), 'ref: refs/heads/dup\n');
    assert.equal(summary.commit, fx.c1);
  });

  describe('refs only in packed-refs', () => {
    test('no ref', async () => {
      const { dir } = await checkoutMatchesGit(checkout, packed, {}, { method: 'copy' });
      assert.equal(readHead(dir), 'ref: refs/heads/main\n');
    });
    test('local branch', async () => {
      const opts = { ref: 'feature' };
      const { dir } = await checkoutMatchesGit(checkout, packed, opts, { method: 'copy' });
      assert.equal(readHead(dir), 'ref: refs/heads/feature\n');
    });
    test('annotated tag (peeled line)', async () => {
      const { dir } = await checkoutMatchesGit(checkout, packed, { ref: 'v1' }, { method: 'copy' });
      assert.equal(readHead(dir), `${fx.c1}\n`);
    });
    test('lightweight tag', async () => {
      const { dir } = await checkoutMatchesGit(checkout, packed, { ref: 'lw' }, { method: 'copy' });
      assert.equal(readHead(dir), `${fx.c2}\n`);
    });
  });

  // git refuses a tree (`git checkout main^{tree}`: "Cannot switch branch to a non-commit").
  // pcheckout may refuse it (ERR_BAD_REF, nothing touched) or check the tree out with
  // commit: null, HEAD untouched, worktree and index equal to `git read-tree -u --reset`.
  for (const [label, ref] of [
    ['<rev>^{tree}', () => 'main^{tree}'],
    ['a tree id', () => gitOut(fx.repo.dir, 'rev-parse', `${fx.c2}^{tree}`)],
  ]) {
    test(`${label}: rejected, or checked out as a bare tree`, async () => {
      const dir = freshClone(fx.repo, { method: 'copy' });
      const stateBefore = targetState(dir);
      const treeRef = ref();
      const treeId = gitOut(fx.repo.dir, 'rev-parse', treeRef);
      let summary;
      let error;
      try {
        summary = await checkout(dir, { ref: treeRef });
      } catch (err) {
        error = err;
      }
      if (error) {
        assert.ok(error instanceof PcheckoutError, `not a PcheckoutError: ${error}`);
        assert.equal(error.code, 'ERR_BAD_REF', error.message);
        assert.deepEqual(targetState(dir), stateBefore, 'a rejected ref must leave no trace');
        return;
      }
      assert.equal(summary.commit, null, 'a tree has no commit');
      assert.equal(summary.tree, treeId);
      assert.equal(readHead(dir), 'ref: refs/heads/main\n', 'HEAD must not move to a tree');
      const oracle = gitOracle(fx.repo, { method: 'copy', readTree: treeId });
      assertSameWorktree(dir, oracle);
      assert.equal(git(dir, ['ls-files', '-s', '-z']), oracle.lsFiles, 'index differs from git');
      assertIndexStatMatchesDisk(dir);
    });
  }

  const badRefs = [
    ['unknown name', () => 'no-such-branch', ['ERR_BAD_REF']],
    ['a blob id', () => gitOut(fx.repo.dir, 'rev-parse', `${fx.c1}:a.txt`), ['ERR_BAD_REF']],
    ['an absent commit id', () => 'f'.repeat(40), ['ERR_BAD_REF', 'ERR_MISSING_OBJECT']],
    ['an empty string', () => '', ['ERR_BAD_REF', 'ERR_INVALID_OPTION']],
    ['a malformed name', () => 'bad..name', ['ERR_BAD_REF', 'ERR_INVALID_OPTION']],
  ];
  for (const [label, ref, codes] of badRefs) {
    test(`bad ref (${label}): rejected, nothing written`, async () => {
      const dir = freshClone(fx.repo, { method: 'copy' });
      const stateBefore = targetState(dir);
      await assertRejectsWith(PcheckoutError, () => checkout(dir, { ref: ref() }), codes);
      assert.deepEqual(targetState(dir), stateBefore, 'worktree, index or HEAD changed');
    });
  }
});
