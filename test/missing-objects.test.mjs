// Every object a checkout needs is found before anything is written — symlink targets too —
// and an object a repository lacks by design is named as such: a tree a partial clone
// (--filter=tree:0) was never sent, history beyond a shallow clone's boundary.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { PcheckoutError, checkout } from '../dist/index.js';
import { Repo, ROOT, freshClone, git, gitOut, tmpPath, worktreeEntries } from './helpers/git.mjs';
import { assertRejectsWith, targetState } from './helpers/run.mjs';

function assertNothingWritten(dir) {
  const state = targetState(dir);
  assert.deepEqual(state.worktree, [], 'files were written before the missing object was found');
  assert.equal(state.index, null, 'an index was written');
  assert.equal(state.indexLock, null, 'index.lock left behind');
}

describe('a missing symlink target', () => {
  let src;
  before(() => {
    src = Repo.init('missing-link');
    for (let i = 0; i < 20; i++) src.write(`files/${i}.txt`, `file ${i}\n`);
    src.symlink('link', 'a target no file has');
    src.commit('one');
  });

  for (const workers of [1, 2]) {
    test(`is found before any file is written (workers ${workers})`, async () => {
      const dir = freshClone(src, { hardlinks: false });
      const blob = gitOut(dir, 'rev-parse', 'HEAD:link');
      fs.rmSync(path.join(dir, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
      const err = await assertRejectsWith(
        PcheckoutError,
        () => checkout(dir, { workers, threshold: 0, racyWait: false }),
        'ERR_MISSING_OBJECT',
      );
      assert.equal(err.path, 'link');
      assert.equal(err.oid, blob);
      assertNothingWritten(dir);
    });
  }
});

describe('repositories missing objects by design', () => {
  let src;
  before(() => {
    src = Repo.init('incomplete-src');
    git(src.dir, ['config', 'uploadpack.allowFilter', 'true']);
    src.write('a.txt', 'one\n');
    src.write('dir/b.txt', 'b\n');
    src.symlink('link', 'a.txt');
    src.commit('1');
    src.write('a.txt', 'two\n');
    src.commit('2');
  });

  test('a partial clone missing trees (--filter=tree:0): named as promised, not fetched', async () => {
    // pcheckout fetches a partial clone's missing blobs (partial-clone.test.mjs), not its trees.
    const dir = tmpPath('partial');
    git(ROOT, ['clone', '-q', '--no-checkout', '--filter=tree:0', `file://${src.dir}`, dir]);
    assert.equal(gitOut(dir, 'config', 'remote.origin.promisor'), 'true');
    const err = await assertRejectsWith(
      PcheckoutError,
      () => checkout(dir, { racyWait: false }),
      'ERR_MISSING_OBJECT',
    );
    assert.match(err.message, /partial clone \(--filter=tree:0 from remote 'origin'\)/);
    assert.match(err.message, /not missing commits or trees/);
    assertNothingWritten(dir);
    // Once git has fetched the trees and blobs, the same checkout succeeds.
    git(dir, ['checkout', '-q', 'main']);
    fs.rmSync(path.join(dir, '.git', 'index'));
    for (const f of worktreeEntries(dir)) fs.rmSync(path.join(dir, f), { recursive: true });
    const summary = await checkout(dir, { racyWait: false });
    assert.equal(summary.files, 2);
  });

  test('a shallow clone: a revision beyond its boundary is named as such', async () => {
    const dir = tmpPath('shallow');
    git(ROOT, ['clone', '-q', '--no-checkout', '--depth=1', `file://${src.dir}`, dir]);
    assert.ok(fs.existsSync(path.join(dir, '.git', 'shallow')));
    const err = await assertRejectsWith(
      PcheckoutError,
      () => checkout(dir, { ref: 'HEAD~1', racyWait: false }),
      ['ERR_MISSING_OBJECT', 'ERR_BAD_REF'],
    );
    assert.match(err.message, /shallow clone/);
    assert.doesNotMatch(err.message, /([0-9a-f]{40}).*\1/, 'the id is repeated');
    assertNothingWritten(dir);
    // HEAD itself is inside the boundary.
    const summary = await checkout(dir, { racyWait: false });
    assert.equal(summary.files, 2);
  });
});
