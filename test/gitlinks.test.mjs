// Submodules (gitlinks) with their directories populated, pcheckout against git on twin clones:
// a switch that changes a submodule's commit leaves the entry's stat data zero where the
// directory was already there (git's checkout_entry does not stat it), a fresh checkout
// records the stat data of the directory it made, and a switch that drops a submodule whose
// directory holds files leaves it with git's warning.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { indexListing } from './helpers/compare.mjs';
import { Repo, git, gitOut, gitTry, tmpPath } from './helpers/git.mjs';

const FILE_OK = ['-c', 'protocol.file.allow=always'];

describe('gitlinks with populated submodules', () => {
  let superRepo;
  const commits = {};
  before(() => {
    const sub = Repo.init('sub');
    sub.write('a.txt', 'a\n').git('add', '-A');
    sub.git('commit', '-qm', 'a');
    commits.subA = sub.git('rev-parse', 'HEAD');
    sub.write('b.txt', 'b\n').git('add', '-A');
    sub.git('commit', '-qm', 'b');
    commits.subB = sub.git('rev-parse', 'HEAD');
    superRepo = Repo.init('super');
    superRepo.write('top.txt', 'top\n');
    git(superRepo.dir, [...FILE_OK, 'submodule', 'add', '-q', sub.dir, 'sub']);
    superRepo.git('add', '-A');
    superRepo.git('commit', '-qm', 'sub at b');
    commits.one = superRepo.git('rev-parse', 'HEAD');
    git(path.join(superRepo.dir, 'sub'), ['checkout', '-q', commits.subA]);
    superRepo.git('add', 'sub');
    superRepo.git('commit', '-qm', 'sub at a');
    commits.two = superRepo.git('rev-parse', 'HEAD');
    superRepo.git('rm', '-q', 'sub');
    superRepo.write('top.txt', 'no sub\n').git('add', '-A');
    superRepo.git('commit', '-qm', 'no sub');
    commits.three = superRepo.git('rev-parse', 'HEAD');
    superRepo.git('checkout', '-q', commits.one);
  });

  /** A clone at `one` with its submodule populated. */
  function populated(prefix) {
    const dir = tmpPath(prefix);
    git(path.dirname(dir), ['clone', '-q', superRepo.dir, dir]);
    git(dir, [...FILE_OK, 'submodule', 'update', '--init', '-q']);
    return dir;
  }

  const subEntry = (dir) => indexListing(dir).entries.find((e) => e.name === 'sub');

  test('a switch that changes the submodule commit: the entry as git leaves it (stat data zero)', async () => {
    const mine = populated('gl-mine');
    const twin = populated('gl-git');
    git(twin, ['checkout', '-q', commits.two]);
    const summary = await checkout(mine, { ref: commits.two, racyWait: false });
    assert.equal(summary.gitlinks, 1);
    const expected = subEntry(twin);
    assert.equal(expected.oid, commits.subA);
    assert.equal(
      expected.size,
      0,
      'git records no stat data for a submodule directory already there',
    );
    assert.deepEqual(subEntry(mine), expected);
    assert.equal(
      gitOut(mine, 'status', '--porcelain', '--ignore-submodules=none'),
      gitOut(twin, 'status', '--porcelain', '--ignore-submodules=none'),
    );
  });

  test('a fresh checkout records the stat data of the directory it made, as git does', async () => {
    const mine = tmpPath('gl-fresh');
    git(path.dirname(mine), ['clone', '-q', '--no-checkout', superRepo.dir, mine]);
    await checkout(mine, { racyWait: false });
    const entry = subEntry(mine);
    const st = fs.lstatSync(path.join(mine, 'sub'));
    assert.ok(st.isDirectory());
    assert.equal(entry.size, st.size);
    assert.equal(entry.ino, st.ino);
    assert.notEqual(entry.mtimeSec, 0);
    const twin = tmpPath('gl-fresh-git');
    git(path.dirname(twin), ['clone', '-q', superRepo.dir, twin]);
    assert.notEqual(subEntry(twin).mtimeSec, 0, "git's clone stats it too");
    assert.equal(gitOut(mine, 'status', '--porcelain'), '');
  });

  test("a switch that drops a submodule with files: the directory stays, with git's warning", async () => {
    const mine = populated('gl-drop');
    const twin = populated('gl-drop-git');
    const r = gitTry(twin, ['checkout', '-q', commits.three]);
    assert.equal(r.status, 0, r.stderr);
    const gitWarning = r.stderr
      .split('\n')
      .find((l) => l.startsWith('warning: unable to rmdir'))
      ?.replace(/^warning: /, '');
    assert.equal(gitWarning, "unable to rmdir 'sub': Directory not empty");
    const summary = await checkout(mine, { ref: commits.three, racyWait: false });
    assert.deepEqual(summary.warnings, [gitWarning]);
    assert.deepEqual(
      fs.readdirSync(path.join(mine, 'sub')).sort(),
      fs.readdirSync(path.join(twin, 'sub')).sort(),
    );
    assert.equal(indexListing(mine).lsFiles, indexListing(twin).lsFiles);
    assert.equal(gitOut(mine, 'status', '--porcelain'), gitOut(twin, 'status', '--porcelain'));
  });
});
