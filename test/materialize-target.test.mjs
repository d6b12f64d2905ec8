// A materialize writes only into a directory that is new, empty, or holds pcheckout's own
// record (`.git/pcheckout-target`, a file no git repository has, written before any file). A
// git repository (a `.git` directory or gitfile, a bare repository, a directory under a git
// directory) is refused with ERR_TARGET_NOT_OURS and loses nothing — every file's bytes and its
// index stay as they were; `force` takes a non-empty plain directory, never a repository. The
// target may not be inside the source repository nor contain it, through symlinks too.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { materialize, PcheckoutError } from '../dist/index.js';
import { git, gitOut, Repo, tmpDir, tmpPath } from './helpers/git.mjs';

const CLI = path.resolve('dist/cli.cjs');
const mat = (repo, target, opts = {}) => materialize(repo, target, { ...opts, racyWait: false });

/** Every entry under dir, .git included: type, bytes (sha1), link target. */
function state(dir) {
  const out = [];
  const walk = (rel) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const abs = path.join(dir, r);
      const st = fs.lstatSync(abs);
      let what = st.mode.toString(8);
      if (st.isSymbolicLink()) what += ` -> ${fs.readlinkSync(abs)}`;
      else if (st.isFile()) {
        what += ` ${crypto.createHash('sha1').update(fs.readFileSync(abs)).digest('hex')}`;
      }
      out.push(`${r}: ${what}`);
      if (st.isDirectory()) walk(r);
    }
  };
  walk('');
  return out;
}

async function refusal(p, code = 'ERR_TARGET_NOT_OURS') {
  let err;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof PcheckoutError, `expected ${code}, got ${err}`);
  assert.equal(err.code, code, err.message);
  return err;
}

describe('materialize targets: ours or refused', () => {
  let src;
  before(() => {
    src = Repo.init('src');
    src.write('notes.txt', 'from the source\n');
    src.write('dir/a.txt', 'a\n');
    src.git('add', '-A');
    src.git('commit', '-q', '-m', 'src');
  });

  /** A throwaway project with tracked files, an uncommitted edit and an untracked file. */
  function project() {
    const p = Repo.init('project');
    p.write('notes.txt', 'committed\n');
    p.write('keep/me.txt', 'tracked\n');
    p.git('add', '-A');
    p.git('commit', '-q', '-m', 'p');
    p.write('notes.txt', 'uncommitted edit\n');
    p.write('untracked.txt', 'mine\n');
    return p;
  }

  for (const force of [false, true]) {
    test(`a git repository as the target${force ? ' (force)' : ''}: refused, nothing lost`, async () => {
      const p = project();
      const before = state(p.dir);
      const status = gitOut(p.dir, 'status', '--porcelain');
      await refusal(mat(src.dir, p.dir, { force }));
      assert.deepEqual(state(p.dir), before);
      assert.equal(gitOut(p.dir, 'status', '--porcelain'), status);
      // The CLI: non-zero, the code named.
      const r = spawnSync(
        process.execPath,
        [CLI, '--target', p.dir, ...(force ? ['-f'] : []), src.dir],
        {
          encoding: 'utf8',
        },
      );
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, /ERR_TARGET_NOT_OURS/);
      assert.deepEqual(state(p.dir), before);
    });
  }

  test('a linked worktree (gitfile), a bare repository, a directory under a .git: refused', async () => {
    const p = project();
    const wt = tmpPath('linked');
    git(p.dir, ['worktree', 'add', '-q', wt]);
    const bare = tmpPath('bare');
    git(p.dir, ['clone', '-q', '--bare', p.dir, bare]);
    const under = path.join(p.gitDir, 'build-out');
    for (const target of [wt, bare, under]) {
      const before = state(p.dir);
      const beforeTarget = fs.existsSync(target) ? state(target) : null;
      await refusal(mat(src.dir, target, { force: true }));
      assert.deepEqual(state(p.dir), before, target);
      assert.deepEqual(fs.existsSync(target) ? state(target) : null, beforeTarget, target);
    }
  });

  test('a non-empty directory without the record: refused; force takes it', async () => {
    const dir = tmpDir('plain');
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'in the way\n');
    fs.writeFileSync(path.join(dir, 'other.txt'), 'stays\n');
    const before = state(dir);
    await refusal(mat(src.dir, dir));
    assert.deepEqual(state(dir), before);
    await mat(src.dir, dir, { force: true });
    assert.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'from the source\n');
    assert.equal(fs.readFileSync(path.join(dir, 'other.txt'), 'utf8'), 'stays\n');
    assert.ok(fs.existsSync(path.join(dir, '.git', 'pcheckout-target')));
    // Now ours: a second run needs no force.
    await mat(src.dir, dir);
  });

  test('an empty or new directory: the record is written, and a later run is accepted', async () => {
    const dir = tmpPath('fresh');
    await mat(src.dir, dir);
    assert.ok(
      fs.readFileSync(path.join(dir, '.git', 'pcheckout-target'), 'utf8').includes('pcheckout'),
    );
    fs.writeFileSync(path.join(dir, 'untracked.txt'), 'x\n');
    await mat(src.dir, dir);
    // A directory pcheckout wrote before the record existed (its note beside the index).
    fs.rmSync(path.join(dir, '.git', 'pcheckout-target'));
    assert.ok(fs.existsSync(path.join(dir, '.git', 'pcheckout.json')));
    await mat(src.dir, dir);
    assert.ok(fs.existsSync(path.join(dir, '.git', 'pcheckout-target')));
    // A record faked inside a real repository does not make it ours.
    const p = project();
    fs.copyFileSync(
      path.join(dir, '.git', 'pcheckout-target'),
      path.join(p.gitDir, 'pcheckout-target'),
    );
    const before = state(p.dir);
    await refusal(mat(src.dir, p.dir, { force: true }));
    assert.deepEqual(state(p.dir), before);
  });

  test('a symlink to a repository, to the source worktree or its .git: refused, nothing lost', async () => {
    const p = project();
    const links = tmpDir('links');
    const cases = [
      [p.dir, 'ERR_TARGET_NOT_OURS'],
      [src.dir, 'ERR_INVALID_OPTION'],
      [src.gitDir, 'ERR_INVALID_OPTION'],
      [path.join(src.dir, 'dir'), 'ERR_INVALID_OPTION'],
    ];
    for (const [i, [to, code]] of cases.entries()) {
      const link = path.join(links, `l${i}`);
      fs.symlinkSync(to, link);
      const before = [state(p.dir), state(src.dir)];
      await refusal(mat(src.dir, link, { force: true }), code);
      assert.deepEqual([state(p.dir), state(src.dir)], before, to);
    }
  });

  test("the source's worktree, a directory in it, its .git, or one containing it: refused", async () => {
    const before = state(src.dir);
    for (const target of [
      src.dir,
      path.join(src.dir, 'dir'),
      path.join(src.gitDir, 'x'),
      path.dirname(src.dir),
    ]) {
      await refusal(mat(src.dir, target, { force: true }), 'ERR_INVALID_OPTION');
      assert.deepEqual(state(src.dir), before, target);
    }
  });

  test('nested targets: a target inside a materialized directory is refused', async () => {
    const outer = tmpPath('outer');
    await mat(src.dir, outer);
    const before = state(outer);
    await refusal(mat(src.dir, path.join(outer, 'dir'), { force: true }));
    await refusal(mat(src.dir, path.join(outer, 'new', 'deeper')));
    assert.deepEqual(state(outer), before);
  });

  test('a target that is a file: refused', async () => {
    const file = path.join(tmpDir('f'), 'file');
    fs.writeFileSync(file, 'x');
    await refusal(mat(src.dir, file, { force: true }));
    assert.equal(fs.readFileSync(file, 'utf8'), 'x');
  });
});
