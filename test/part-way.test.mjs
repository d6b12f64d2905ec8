// A checkout that fails after it began to change the worktree (here: a directory made immutable
// with chattr +i, so its files can be neither removed nor written, EPERM even for root) says
// what failed, how far it got and how to finish — `pcheckout --force <ref>` or
// `git checkout -f <ref>` — with the index and HEAD left as they were, and the error carries
// what was written (`written`). The command it names then completes the checkout exactly as git
// would have made it.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout, PcheckoutError } from '../dist/index.js';
import { assertMatchesGit } from './helpers/compare.mjs';
import { gitOut, Repo, tmpDir } from './helpers/git.mjs';

const CLI = path.resolve('dist/cli.cjs');

function immutable(dir, on) {
  return spawnSync('chattr', [on ? '+i' : '-i', dir], { encoding: 'utf8' });
}

/** Whether chattr +i works where the tests write (ext4 and root: yes; tmpfs: no). */
const probe = (() => {
  const dir = path.join(tmpDir('chattr'), 'd');
  fs.mkdirSync(dir);
  const r = immutable(dir, true);
  if (r.status !== 0)
    return `chattr +i failed here: ${(r.stderr || r.error?.message || '').trim()}`;
  let blocked = false;
  try {
    fs.writeFileSync(path.join(dir, 'x'), 'x');
  } catch {
    blocked = true;
  }
  immutable(dir, false);
  return blocked ? null : 'chattr +i does not stop writes here';
})();
if (probe) process.stderr.write(`part-way.test: skipped: ${probe}\n`);

describe('a checkout that stops part-way says how to finish', { skip: probe ?? false }, () => {
  let repo;
  before(() => {
    repo = Repo.init('partway');
    for (let i = 0; i < 60; i++) repo.write(`a/f${i}.txt`, `a ${i}\n`);
    for (let i = 0; i < 20; i++) repo.write(`z/f${i}.txt`, `z ${i}\n`);
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'one');
    repo.git('branch', 'one');
    // The next commit removes a/, and changes every file in z/.
    repo.git('rm', '-q', '-r', 'a');
    for (let i = 0; i < 20; i++) repo.write(`z/f${i}.txt`, `z ${i} changed\n`);
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'two');
    repo.git('branch', 'two');
    repo.git('checkout', '-q', 'one');
  });

  for (const [name, run] of [
    ['the API', (dir) => checkout(dir, { ref: 'two', racyWait: false })],
    [
      'the CLI',
      (dir) => {
        const r = spawnSync(process.execPath, [CLI, '--no-racy-wait', dir, 'two'], {
          encoding: 'utf8',
        });
        return r;
      },
    ],
  ]) {
    test(`${name}: the message names the failure and the command; index and HEAD unchanged`, async () => {
      const dir = tmpDir('pw');
      fs.rmSync(dir, { recursive: true });
      fs.cpSync(repo.dir, dir, { recursive: true });
      const index = fs.readFileSync(path.join(dir, '.git', 'index'));
      const head = gitOut(dir, 'rev-parse', 'HEAD');
      // a/ is removed first and may go; z/ cannot be written.
      assert.equal(immutable(path.join(dir, 'z'), true).status, 0);
      let message;
      try {
        if (name === 'the API') {
          let err;
          await run(dir).catch((e) => (err = e));
          assert.ok(err instanceof PcheckoutError, `expected a failure, got ${err}`);
          assert.ok(err.written, 'no written record');
          assert.equal(err.written.total, 20);
          assert.ok(err.written.files < 20, JSON.stringify(err.written));
          assert.equal(err.written.removed, 60, JSON.stringify(err.written));
          message = err.message;
        } else {
          const r = run(dir);
          assert.notEqual(r.status, 0);
          message = r.stderr;
        }
      } finally {
        immutable(path.join(dir, 'z'), false);
      }
      assert.match(message, /z\/f\d+\.txt/, 'the failing path');
      assert.match(message, /operation not permitted|EPERM/i);
      assert.match(message, /stopped part-way/);
      assert.match(message, /60 old entries removed/);
      assert.ok(message.includes('`pcheckout --force two`'), message);
      assert.ok(message.includes('`git checkout -f two`'), message);
      assert.deepEqual(fs.readFileSync(path.join(dir, '.git', 'index')), index, 'index changed');
      assert.equal(gitOut(dir, 'rev-parse', 'HEAD'), head, 'HEAD moved');
      // The command named completes it, as git would have.
      const r = spawnSync(process.execPath, [CLI, '--no-racy-wait', '--force', dir, 'two'], {
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
      assertMatchesGit(dir, repo.dir, { ref: 'two' });
      assert.equal(gitOut(dir, 'status', '--porcelain'), '');
      assert.equal(gitOut(dir, 'symbolic-ref', 'HEAD'), 'refs/heads/two');
    });
  }
});
