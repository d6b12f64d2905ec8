// git's refusal headings for a tracked file with a directory of untracked files in its place,
// pcheckout against git on twin clones: a target that changes the file reports it as a local
// change; one that removes it, or makes it a directory, as a directory that would lose its
// untracked files (git's deleted_entry looks at the directory first). Each heading's paths are
// also in their own list of the error.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import { checkout, PcheckoutError } from '../dist/index.js';
import { Repo, git, gitTry, tmpPath } from './helpers/git.mjs';
import { assertRejectsWith, targetState } from './helpers/run.mjs';

let src;
before(() => {
  src = Repo.init('refusals');
  src.write('f', 'one\n').write('keep.txt', 'keep\n').git('add', '-A');
  src.git('commit', '-qm', 'one');
  src.git('checkout', '-q', '-b', 'changed');
  src.write('f', 'two\n').git('add', '-A');
  src.git('commit', '-qm', 'f changed');
  src.git('checkout', '-q', '-b', 'removed', 'main');
  src.git('rm', '-q', 'f');
  src.git('commit', '-qm', 'f removed');
  src.git('checkout', '-q', '-b', 'to-dir', 'main');
  src.git('rm', '-q', 'f');
  src.write('f/inside.txt', 'now a directory\n').git('add', '-A');
  src.git('commit', '-qm', 'f a directory');
  src.git('checkout', '-q', 'main');
});

/** A clone at main with f replaced by a directory holding an untracked file. */
function dirInPlace(prefix) {
  const dir = tmpPath(prefix);
  git(path.dirname(dir), ['clone', '-q', src.dir, dir]);
  for (const b of ['changed', 'removed', 'to-dir']) git(dir, ['branch', '-q', b, `origin/${b}`]);
  fs.rmSync(path.join(dir, 'f'));
  fs.mkdirSync(path.join(dir, 'f'));
  fs.writeFileSync(path.join(dir, 'f', 'untracked.txt'), 'mine\n');
  return dir;
}

const cases = [
  { ref: 'changed', heading: 'Your local changes to the following files', list: 'modified' },
  { ref: 'removed', heading: 'Updating the following directories', list: 'directories' },
  { ref: 'to-dir', heading: 'Updating the following directories', list: 'directories' },
];

for (const { ref, heading, list } of cases) {
  test(`target ${ref}: git's heading and paths, nothing changed`, async () => {
    const twin = dirInPlace(`refusal-git-${ref}`);
    const r = gitTry(twin, ['checkout', ref]);
    assert.equal(r.status, 1, r.stderr);
    assert.ok(r.stderr.startsWith(`error: ${heading}`), r.stderr);
    const mine = dirInPlace(`refusal-mine-${ref}`);
    const before = targetState(mine);
    const err = await assertRejectsWith(
      PcheckoutError,
      () => checkout(mine, { ref, racyWait: false }),
      'ERR_WOULD_OVERWRITE',
    );
    assert.equal(`error: ${err.message}\n`, r.stderr);
    assert.deepEqual(err.paths, ['f']);
    assert.deepEqual(err.overwrite[list], ['f']);
    for (const other of ['modified', 'overwritten', 'removed', 'directories']) {
      if (other !== list) assert.deepEqual(err.overwrite[other], [], other);
    }
    assert.deepEqual(targetState(mine), before);
  });
}
