// Checking out paths (`checkout(repo, { ref?, paths })`), compared with git on twin worktrees:
// with a ref as `git checkout <ref> -- <pathspec>` (HEAD stays; index and worktree entries
// matching the pathspec set from the ref, local changes in them overwritten; overlay mode:
// index entries the ref lacks stay), without one as `git checkout -- <pathspec>` (worktree from
// the index), and `restore: true` as `git checkout-index -f -u -- <files>` (or, for pathspecs
// checkout-index does not take, `git checkout -- <pathspec>`). Every pathspec form git's
// default magic knows: files, directories, globs (`*` matching `/` too), `:(glob)`, exclusions
// (`:(exclude)`, `:!`, `:^`, alone or with other pathspecs), `:(top)`, `:/`, `:(literal)`.
// A pathspec that matches nothing fails as in git (ERR_PATHSPEC, git's wording, nothing written).
//
// What git does here (git 2.39, checked by the oracle assertions below):
// - with a ref, a pathspec must match an entry of the ref's tree: one matching only an index
//   entry that the ref lacks is "did not match any file(s) known to git";
// - entries under a directory pathspec that the ref lacks stay in the index and on disk, local
//   changes included (overlay mode);
// - unchanged entries are not rewritten (same inode), whether matched or not;
// - a file where the ref has a directory (f2d) is replaced by the directory.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout, PcheckoutError } from '../dist/index.js';
import { Repo, git, gitTry, prng, textLines } from './helpers/git.mjs';
import {
  WORKER_MATRIX,
  assertSameSnapshot,
  makeTwins,
  readIndex,
  worktreeSnapshot,
} from './helpers/twin.mjs';

const append = (dir, rel, text) => fs.appendFileSync(path.join(dir, rel), text);
const write = (dir, rel, text) => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
};
const read = (dir, rel) => fs.readFileSync(path.join(dir, rel), 'utf8');

/**
 * Branches A and B (main is B):
 *   top.txt top.c README.md dir/a.txt dir/b.c dir/sub/c.txt dir/sub/d.c dir/sub/deeper/e.txt
 *   other/x.txt other/y.c 'lit/star*.txt' lit/starX.txt: content differs between A and B
 *   same.txt, dir/same.txt: the same on both
 *   mode.sh: 644 on A, 755 on B;  link: symlink → top.txt on A, → top.c on B
 *   f2l: file on A, symlink on B;  f2d: file on A, directory (f2d/inner.txt) on B
 *   only-a/z.txt, dir/only-a.txt: A only;  new-dir/n.txt, dir/sub/new-b.txt: B only
 */
function buildPathspecRepo() {
  const r = Repo.init('pathspec');
  const rand = prng(4242);
  const changing = [
    'top.txt',
    'top.c',
    'README.md',
    'dir/a.txt',
    'dir/b.c',
    'dir/sub/c.txt',
    'dir/sub/d.c',
    'dir/sub/deeper/e.txt',
    'other/x.txt',
    'other/y.c',
    'lit/star*.txt',
    'lit/starX.txt',
  ];
  for (const f of changing) r.write(f, `${f} on A\n` + textLines(rand, 10).join('\n'));
  r.write('same.txt', 'the same on A and B\n');
  r.write('dir/same.txt', 'the same on A and B\n');
  r.write('mode.sh', '#!/bin/sh\necho mode\n');
  r.symlink('link', 'top.txt');
  r.write('f2l', 'a file on A\n');
  r.write('f2d', 'a file on A\n');
  r.write('only-a/z.txt', 'only on A\n');
  r.write('dir/only-a.txt', 'only on A\n');
  r.branch('A', r.commit('A'));

  for (const f of changing) r.write(f, `${f} on B\n` + textLines(rand, 12).join('\n'));
  r.chmod('mode.sh', true);
  r.symlink('link', 'top.c');
  r.symlink('f2l', 'top.txt');
  r.rm('f2d');
  r.write('f2d/inner.txt', 'inside f2d on B\n');
  r.rm('only-a');
  r.rm('dir/only-a.txt');
  r.write('new-dir/n.txt', 'new on B\n');
  r.write('dir/sub/new-b.txt', 'new on B\n');
  r.branch('B', r.commit('B'));
  r.gc();
  return r;
}

/** Local changes of every kind, in and out of dir/. */
function localChanges(d) {
  append(d, 'dir/a.txt', 'local edit: overwritten when dir/ is checked out from a ref\n');
  append(d, 'dir/sub/c.txt', 'local edit\n');
  append(d, 'other/x.txt', 'local edit outside dir/\n');
  append(d, 'dir/b.c', 'staged edit\n');
  git(d, ['add', 'dir/b.c']);
  write(d, 'dir/staged-new.txt', 'staged, in no commit\n');
  git(d, ['add', 'dir/staged-new.txt']);
  append(d, 'dir/only-a.txt', 'local edit to an entry B lacks\n');
  fs.rmSync(path.join(d, 'dir/sub/d.c'));
  write(d, 'dir/untracked.txt', 'untracked\n');
}

/** Worktree (with inodes), index bytes, HEAD, lock: for "nothing was written". */
function frozenState(dir) {
  const rd = (f) => (fs.existsSync(f) ? fs.readFileSync(f).toString('base64') : null);
  return {
    worktree: [...worktreeSnapshot(dir)].map(([p, e]) => `${p}: ${JSON.stringify(e)}`),
    index: rd(path.join(dir, '.git', 'index')),
    indexLock: fs.existsSync(path.join(dir, '.git', 'index.lock')),
    head: rd(path.join(dir, '.git', 'HEAD')),
  };
}

/**
 * The git command a pathspec checkout stands for. checkout-index takes file names, not
 * pathspecs: a restore of directories or globs is given `git checkout -- <pathspec>` (`args`).
 */
function gitCommand({ ref, restore, paths }) {
  if (restore) return ['checkout-index', '-f', '-u', '--', ...paths];
  return ref === undefined
    ? ['checkout', '-q', '--', ...paths]
    : ['checkout', '-q', ref, '--', ...paths];
}

const PATHSPEC_ERROR = /^error: (pathspec '.*' did not match any file\(s\) known to git)$/gm;

/**
 * `git <args ?? gitCommand(op)>` in twins.git, `checkout(twins.pc, { ...op, racyWait: false })`
 * in the other; everything compared: worktree, `ls-files -s -v`, HEAD (unmoved), inodes of the
 * entries git leaves alone, `git diff-files` (the stat data written), `git status --ignored`.
 * `expect`: 'success' or 'ERR_PATHSPEC' (checked against git first). The twins can be used
 * again: a sequence of calls compares every step.
 */
async function compareTwinPaths(twins, { op, expect = 'success', args }) {
  const g = twins.git;
  const pc = twins.pc;
  const gitIndexBefore = readIndex(g).entries;
  const dirtyBefore = new Set(git(g, ['diff-files', '--name-only', '-z']).split('\0'));
  const gitSnapBefore = worktreeSnapshot(g);
  const snapBefore = worktreeSnapshot(pc);
  const gitFrozen = frozenState(g);
  const frozen = frozenState(pc);
  const headBefore = fs.readFileSync(path.join(pc, '.git', 'HEAD'), 'utf8');

  const gitArgs = args ?? gitCommand(op);
  const gr = gitTry(g, gitArgs);
  const gitErrors = [...gr.stderr.matchAll(PATHSPEC_ERROR)].map((m) => m[1]);
  if (expect === 'ERR_PATHSPEC') {
    assert.notEqual(gr.status, 0, `oracle: git ${gitArgs.join(' ')} succeeded`);
    assert.ok(gitErrors.length > 0, `oracle: git failed otherwise:\n${gr.stderr}`);
    assert.deepEqual(frozenState(g), gitFrozen, 'oracle: git failed, yet wrote');
  } else {
    assert.equal(gr.status, 0, `oracle: git ${gitArgs.join(' ')} failed:\n${gr.stderr}`);
  }

  let summary;
  let error;
  try {
    summary = await checkout(pc, { ...op, racyWait: false });
  } catch (err) {
    error = err;
  }

  if (expect !== 'success') {
    assert.ok(error, `expected ${expect}, but pcheckout succeeded: ${JSON.stringify(summary)}`);
    assert.ok(error instanceof PcheckoutError, `not a PcheckoutError: ${error.stack}`);
    assert.equal(error.code, expect, `error code (message: ${error.message})`);
    for (const line of gitErrors) {
      assert.ok(error.message.includes(line), `message lacks git's "${line}": ${error.message}`);
    }
    assert.deepEqual(frozenState(pc), frozen, 'failed, yet the twin changed');
    return { twins, error, git: gr };
  }
  assert.ok(
    !error,
    `git ${gitArgs.join(' ')} succeeded, pcheckout failed: ${error?.code} ${error?.stack}`,
  );
  assert.equal(typeof summary, 'object', 'summary');
  assert.ok(!fs.existsSync(path.join(pc, '.git', 'index.lock')), 'index.lock left behind');

  const snapAfter = worktreeSnapshot(pc);
  const gitSnapAfter = worktreeSnapshot(g);
  assertSameSnapshot(snapAfter, gitSnapAfter, `worktree differs from git's (${pc} vs ${g})`);

  const index = readIndex(pc);
  const gitIndex = readIndex(g);
  if (index.text !== gitIndex.text) {
    const a = index.text.split('\0');
    const b = gitIndex.text.split('\0');
    assert.fail(
      'git ls-files -s -v differs from git' +
        `\n  only in pcheckout's index: ${JSON.stringify(a.filter((x) => !b.includes(x)))}` +
        `\n  only in git's index: ${JSON.stringify(b.filter((x) => !a.includes(x)))}`,
    );
  }

  // HEAD does not move.
  assert.equal(frozenState(g).head, gitFrozen.head, 'oracle: git moved HEAD');
  assert.equal(fs.readFileSync(path.join(pc, '.git', 'HEAD'), 'utf8'), headBefore, 'HEAD moved');

  // Entries whose index entry stays and whose file was clean are not rewritten.
  const stable = [];
  for (const [p, list] of gitIndexBefore) {
    const after = gitIndex.entries.get(p);
    if (list.length !== 1 || !after || after.length !== 1) continue;
    if (list[0].mode !== after[0].mode || list[0].oid !== after[0].oid) continue;
    if (dirtyBefore.has(p) || !snapBefore.has(p)) continue;
    stable.push(p);
  }
  const moved = (b, a) => stable.filter((p) => b.get(p)?.ino !== a.get(p)?.ino);
  assert.deepEqual(moved(gitSnapBefore, gitSnapAfter), [], 'oracle: git rewrote entries');
  assert.deepEqual(moved(snapBefore, snapAfter), [], 'unchanged entries rewritten (new inode)');

  // The stat data of what was written (before anything refreshes the index).
  const diffFiles = (d) => git(d, ['diff-files', '--name-status', '-z']);
  assert.equal(diffFiles(pc), diffFiles(g), 'git diff-files differs from git');
  const status = (d) =>
    git(d, ['status', '--porcelain=v1', '--untracked-files=all', '--ignored', '-z']);
  assert.equal(status(pc), status(g), 'git status --porcelain --ignored differs from git');
  return { twins, summary, git: gr };
}

/** New twins of `src` at `at` (with `mutate`), then compareTwinPaths. */
async function comparePaths(src, { at = 'A', mutate, ...rest }) {
  return compareTwinPaths(await makeTwins(src, { at, mutate }), rest);
}

describe('pathspecs (git checkout [<ref>] -- <pathspec>)', () => {
  let src;
  before(() => {
    src = buildPathspecRepo();
  });

  for (const m of WORKER_MATRIX) {
    test(`<ref> -- dir: local changes in dir/ overwritten, overlay kept, the rest untouched; workers ${m.workers}, threshold ${m.threshold}`, async () => {
      const op = { ref: 'B', paths: ['dir'], ...m };
      const { twins } = await comparePaths(src, { mutate: localChanges, op });
      const { pc } = twins;
      assert.match(read(pc, 'dir/a.txt'), /^dir\/a\.txt on B\n/);
      assert.match(read(pc, 'other/x.txt'), /local edit outside dir\/\n$/);
      assert.match(read(pc, 'dir/only-a.txt'), /local edit to an entry B lacks\n$/);
      assert.equal(read(pc, 'dir/staged-new.txt'), 'staged, in no commit\n');
      assert.equal(read(pc, 'dir/untracked.txt'), 'untracked\n');
      assert.equal(read(pc, 'dir/sub/new-b.txt'), 'new on B\n');
      assert.match(read(pc, 'top.txt'), /^top\.txt on A\n/);
      const idx = readIndex(pc).entries;
      assert.ok(idx.has('dir/only-a.txt') && idx.has('dir/staged-new.txt'), 'overlay');
    });
  }

  // Each chain runs on one pair of twins (with local changes), step after step.
  const lit = (d, rel, re) => assert.match(read(d, rel), re, rel);
  const chains = {
    'files, directories, "."': [
      [['top.txt'], (d) => lit(d, 'top.c', / on A\n/)],
      [['top.c', 'README.md', 'other']],
      [['dir/sub/'], (d) => lit(d, 'dir/a.txt', /local edit/)],
      [['.'], (d) => lit(d, 'dir/a.txt', / on B\n/)],
    ],
    'globs (default magic: * matches /)': [
      [['dir/*.c'], (d) => lit(d, 'dir/sub/d.c', / on B\n/)],
      [['dir/sub/?.txt'], (d) => lit(d, 'dir/sub/deeper/e.txt', / on A\n/)],
      [['other/[xy].*']],
      [['*.txt'], (d) => lit(d, 'dir/sub/deeper/e.txt', / on B\n/)],
    ],
    ':(glob) magic (* stops at /, ** does not)': [
      [[':(glob)*.txt'], (d) => lit(d, 'dir/a.txt', /local edit/)],
      [[':(glob)dir/**/*.c'], (d) => lit(d, 'dir/sub/d.c', / on B\n/)],
      [[':(glob)**/e.txt'], (d) => lit(d, 'dir/sub/deeper/e.txt', / on B\n/)],
    ],
    exclusions: [
      [['dir', ':(exclude)dir/sub'], (d) => lit(d, 'dir/sub/c.txt', /local edit/)],
      [
        ['dir', ':^dir/sub/deeper', ':!dir/*.c'],
        (d) => assert.ok(!fs.existsSync(path.join(d, 'dir/sub/d.c')), 'excluded: stays deleted'),
      ],
    ],
    'an exclusion alone: everything else': [
      [[':!dir'], (d) => lit(d, 'dir/a.txt', /local edit/)],
      [[':(exclude)other', ':^lit']],
    ],
    ':(top), :/, :(literal)': [
      [[':(top)dir/a.txt'], (d) => lit(d, 'dir/a.txt', /^dir\/a\.txt on B\n/)],
      [[':/other']],
      [[':(literal)lit/star*.txt'], (d) => lit(d, 'lit/starX.txt', / on A\n/)],
      [['lit/star?.txt'], (d) => lit(d, 'lit/starX.txt', / on B\n/)],
    ],
    'mode, symlinks, file → directory, new directory, unchanged files': [
      [['mode.sh', 'link', 'f2l']],
      [['f2d'], (d) => assert.ok(fs.statSync(path.join(d, 'f2d')).isDirectory())],
      [['new-dir']],
      [['same.txt', 'dir/same.txt']],
    ],
  };
  for (const [what, steps] of Object.entries(chains)) {
    test(`B -- pathspecs, step by step: ${what}`, async () => {
      const twins = await makeTwins(src, { at: 'A', mutate: localChanges });
      for (const [paths, check] of steps) {
        const op = { ref: 'B', paths, workers: 2, threshold: 0 };
        await compareTwinPaths(twins, { op });
        check?.(twins.pc);
      }
    });
  }

  // A git 2.39 quirk, reproduced here on purpose: when a wildcard pathspec also names an entry
  // literally ('lit/star*.txt' is a file), the index gets every entry the glob matches in the
  // ref, but only the literal match is written to the worktree (lit/starX.txt ends up "MM").
  // The same with :(glob). 'lit/star?.txt' (no literal match) writes all of them (above).
  test('B -- a glob that is also a file name: index from every match, worktree only the file', async () => {
    const twins = await makeTwins(src, { at: 'A' });
    for (const paths of [['lit/star*.txt'], [':(glob)lit/star*.txt']]) {
      await compareTwinPaths(twins, { op: { ref: 'B', paths, workers: 1, threshold: 0 } });
      assert.match(read(twins.git, 'lit/star*.txt'), / on B\n/);
      assert.match(read(twins.git, 'lit/starX.txt'), / on A\n/, 'oracle: the quirk is gone');
      const st = git(twins.git, ['status', '--porcelain', '--', 'lit']);
      assert.equal(st, 'M  lit/star*.txt\nMM lit/starX.txt\n', 'oracle: status');
    }
  });

  test('the ref as a tag-less commit id and as rev~n', async () => {
    const id = src.rev('B');
    await comparePaths(src, { mutate: localChanges, op: { ref: id, paths: ['dir/sub'] } });
    await comparePaths(src, { at: 'B', op: { ref: 'B~1', paths: ['dir', 'top.txt'] } });
  });

  test('from B back to A: the file/directory and symlink/file transitions reversed', async () => {
    const op = { ref: 'A', paths: ['f2d', 'f2l', 'link', 'mode.sh'], workers: 1, threshold: 0 };
    await comparePaths(src, { at: 'B', op });
  });

  // Pathspecs that match nothing: nothing is written, so one pair of twins serves them all.
  describe('a pathspec that matches nothing: ERR_PATHSPEC, nothing written', () => {
    let twins;
    before(async () => {
      twins = await makeTwins(src, { at: 'A', mutate: localChanges });
    });
    const misses = [
      ['a path in no tree', { ref: 'B', paths: ['nomatch'] }],
      ['one of several (nothing written for the others)', { ref: 'B', paths: ['dir', 'nomatch'] }],
      ['two misses (both named)', { ref: 'B', paths: ['nomatch', 'no/such/dir'] }],
      ['a glob matching nothing', { ref: 'B', paths: ['*.nothing'] }],
      ['an index entry the ref lacks', { ref: 'B', paths: ['only-a'] }],
      ['an untracked file', { ref: 'B', paths: ['dir/untracked.txt'] }],
      [':(glob)dir/*.h', { ref: 'B', paths: [':(glob)dir/*.h'] }],
      ['without a ref: a path not in the index', { paths: ['new-dir'] }],
      ['restore: a path not in the index', { restore: true, paths: ['nomatch'] }],
    ];
    for (const [what, op] of misses) {
      test(what, async () => {
        const args = op.restore ? ['checkout', '-q', '--', ...op.paths] : undefined;
        const { error } = await compareTwinPaths(twins, { op, args, expect: 'ERR_PATHSPEC' });
        for (const p of op.paths.filter((x) => x !== 'dir')) {
          assert.ok(error.message.includes(`'${p}'`), `message lacks '${p}': ${error.message}`);
        }
      });
    }
  });

  // Without a ref: the worktree from the index.
  for (const m of [
    { workers: 1, threshold: 1e9 },
    { workers: 2, threshold: 0 },
  ]) {
    test(`no ref -- dir: worktree from the index (staged content wins); workers ${m.workers}, threshold ${m.threshold}`, async () => {
      const op = { paths: ['dir'], ...m };
      const { twins } = await comparePaths(src, { mutate: localChanges, op });
      assert.match(read(twins.pc, 'dir/b.c'), /staged edit\n$/);
      assert.match(read(twins.pc, 'dir/a.txt'), /^dir\/a\.txt on A\n/);
      assert.match(read(twins.pc, 'other/x.txt'), /local edit outside dir\/\n$/);
      assert.ok(fs.existsSync(path.join(twins.pc, 'dir/sub/d.c')), 'deleted file restored');
    });
  }

  for (const [what, paths] of [
    ['a glob', ['*.c']],
    ['an exclusion', ['dir', ':!dir/sub']],
    ['a deleted file, a symlink, an exec bit', ['dir/sub/d.c', 'link', 'mode.sh']],
  ]) {
    test(`no ref -- ${what}`, async () => {
      await comparePaths(src, {
        mutate: (d) => {
          localChanges(d);
          fs.chmodSync(path.join(d, 'mode.sh'), 0o755);
          fs.rmSync(path.join(d, 'link'));
          fs.symlinkSync('elsewhere', path.join(d, 'link'));
        },
        op: { paths, workers: 2, threshold: 0 },
      });
    });
  }

  // restore: true with paths: checkout-index for those paths.
  for (const m of [
    { workers: 1, threshold: 0 },
    { workers: 2, threshold: 0 },
  ]) {
    test(`restore -- files (git checkout-index -f -u -- files); workers ${m.workers}, threshold ${m.threshold}`, async () => {
      const op = { restore: true, paths: ['dir/a.txt', 'dir/b.c', 'dir/sub/d.c'], ...m };
      const { twins } = await comparePaths(src, { mutate: localChanges, op });
      assert.match(read(twins.pc, 'dir/b.c'), /staged edit\n$/);
      assert.match(read(twins.pc, 'dir/sub/c.txt'), /local edit\n$/, 'not in the paths: kept');
    });
  }

  test('restore -- a directory and a glob (as git checkout -- <pathspec>)', async () => {
    const op = { restore: true, paths: ['dir/sub', 'other/*.c'], workers: 2, threshold: 0 };
    await comparePaths(src, {
      args: ['checkout', '-q', '--', ...op.paths],
      mutate: (d) => {
        localChanges(d);
        append(d, 'other/y.c', 'local\n');
      },
      op,
    });
  });

  test('restore -- files: the same result as git checkout -- files (oracle check)', async () => {
    const paths = ['dir/a.txt', 'dir/b.c', 'dir/sub/d.c'];
    const a = await makeTwins(src, { at: 'A', mutate: localChanges });
    git(a.git, ['checkout-index', '-f', '-u', '--', ...paths]);
    git(a.pc, ['checkout', '-q', '--', ...paths]);
    assertSameSnapshot(worktreeSnapshot(a.pc), worktreeSnapshot(a.git), 'worktrees');
    assert.equal(readIndex(a.pc).text, readIndex(a.git).text, 'indexes');
  });
});
