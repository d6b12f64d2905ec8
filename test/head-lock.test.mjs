// A held HEAD.lock: a deliberate difference from git (docs/git.md, "Deliberate differences from git").
// git writes the worktree and the index, then fails to move HEAD with exit 128; pcheckout
// takes HEAD.lock before it writes anything and refuses with ERR_REF_LOCKED, nothing changed.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { checkout, PcheckoutError } from '../dist/index.js';
import { Repo, git, gitOut, gitTry, tmpPath } from './helpers/git.mjs';
import { assertRejectsWith, runCli, targetState } from './helpers/run.mjs';

test('HEAD.lock held: pcheckout refuses before writing; git writes, then fails with 128', async () => {
  const src = Repo.init('headlock');
  src.write('a.txt', 'one\n').write('d/b.txt', 'b\n').git('add', '-A');
  src.git('commit', '-qm', 'one');
  src.git('branch', 'topic');
  src.git('checkout', '-q', 'topic');
  src.write('a.txt', 'two\n').write('new.txt', 'new\n').git('add', '-A');
  src.git('commit', '-qm', 'two');
  src.git('checkout', '-q', 'main');
  const clone = (prefix) => {
    const dir = tmpPath(prefix);
    git(path.dirname(dir), ['clone', '-q', src.dir, dir]);
    git(dir, ['branch', '-q', 'topic', 'origin/topic']);
    fs.writeFileSync(path.join(dir, '.git', 'HEAD.lock'), 'held\n');
    return dir;
  };
  const twin = clone('headlock-git');
  const r = gitTry(twin, ['checkout', '-q', 'topic']);
  assert.equal(r.status, 128, r.stderr);
  assert.match(r.stderr, /HEAD\.lock/);
  assert.equal(fs.readFileSync(path.join(twin, 'a.txt'), 'utf8'), 'two\n', 'git wrote the tree');
  assert.equal(gitOut(twin, 'symbolic-ref', 'HEAD'), 'refs/heads/main', 'and left HEAD');

  const mine = clone('headlock-mine');
  const before = targetState(mine);
  const err = await assertRejectsWith(
    PcheckoutError,
    () => checkout(mine, { ref: 'topic', racyWait: false }),
    'ERR_REF_LOCKED',
  );
  assert.match(err.message, /HEAD\.lock/);
  assert.deepEqual(targetState(mine), before, 'nothing written, no index.lock left');
  assert.equal(fs.readFileSync(path.join(mine, '.git', 'HEAD.lock'), 'utf8'), 'held\n');
  const cli = runCli(['-q', 'topic'], { cwd: mine });
  assert.notEqual(cli.status, 0);
  assert.match(cli.stderr, /ERR_REF_LOCKED/);
  assert.equal(gitOut(mine, 'status', '--porcelain'), '');
});
