// materialize(repo, target, { ref, paths }): the tree of a ref written into a directory outside
// the repository, without touching the repository at all, compared with git's own checkout of
// the same tree: a copy of the repository's .git without an index, `git checkout <ref> --
// <pathspec | .>` in it (it writes exactly the entries the pathspec matches, and an index of
// them, and leaves HEAD alone). pcheckout's index of the target, `<target>/.git/index`, is read
// by git with GIT_INDEX_FILE against the repository: `ls-files -s` must equal the oracle's
// (and `ls-tree -r <ref>`), and `--work-tree=<target> diff-files` must be clean (the stat data
// describes the files). The repository (its .git, byte for byte and mtime for mtime, and its
// worktree, inodes included) must be exactly as before.
//
// Refreshing a target (another ref, the same ref after local damage, a narrower pathspec)
// writes only the differences: unchanged entries keep their inode, modified files are
// restored, entries not in the new tree are removed, untracked files in the way of the new
// tree are overwritten and other untracked files stay.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { materialize, PcheckoutError } from '../dist/index.js';
import { git, gitOut, gitTry, tmpPath } from './helpers/git.mjs';
import {
  KEEP_FILES,
  WORKER_MATRIX,
  assertSameSnapshot,
  buildSwitchRepo,
  worktreeSnapshot,
} from './helpers/twin.mjs';

const pcMaterialize = (repo, target, opts = {}) =>
  materialize(repo, target, { ...opts, racyWait: false });

const write = (dir, rel, text) => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
};
const read = (dir, rel) => fs.readFileSync(path.join(dir, rel), 'utf8');

/** Everything in a directory tree, .git included: type, size, bytes (sha1), mtime, inode. */
function fullState(dir) {
  const out = [];
  const walk = (rel) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const abs = path.join(dir, r);
      const st = fs.lstatSync(abs, { bigint: true });
      let what = `${st.mode.toString(8)} ino ${st.ino}`;
      if (st.isSymbolicLink()) what += ` -> ${fs.readlinkSync(abs)}`;
      else if (st.isFile()) {
        const sha = crypto.createHash('sha1').update(fs.readFileSync(abs)).digest('hex');
        what += ` ${st.size} bytes ${sha} mtime ${st.mtimeNs}`;
      }
      out.push(`${r}: ${what}`);
      if (st.isDirectory()) walk(r);
    }
  };
  walk('');
  return out;
}

/** The oracle: git's checkout of `ref` (restricted to `paths`) in an index-less copy. */
const oracles = new Map();
function oracle(repoDir, ref, paths) {
  const key = JSON.stringify([repoDir, ref, paths ?? null]);
  let o = oracles.get(key);
  if (o) return o;
  const dir = tmpPath('mat-oracle');
  fs.mkdirSync(dir);
  const skip = new Set(['index', 'hooks'].map((f) => path.join(repoDir, '.git', f)));
  fs.cpSync(path.join(repoDir, '.git'), path.join(dir, '.git'), {
    recursive: true,
    verbatimSymlinks: true,
    filter: (p) => !skip.has(p),
  });
  git(dir, ['checkout', '-q', ref, '--', ...(paths ?? ['.'])]);
  const lsFiles = git(dir, ['ls-files', '-s', '-z']);
  o = { dir, snapshot: worktreeSnapshot(dir), lsFiles, entries: parseLsFiles(lsFiles) };
  oracles.set(key, o);
  return o;
}

/** `ls-files -s -z` → Map(path → { mode, oid }). */
function parseLsFiles(text) {
  const out = new Map();
  for (const line of text.split('\0').filter(Boolean)) {
    const m = /^(\d+) ([0-9a-f]{40}) 0\t(.*)$/s.exec(line);
    assert.ok(m, `cannot parse ls-files line ${JSON.stringify(line)}`);
    out.set(m[3], { mode: m[1], oid: m[2] });
  }
  return out;
}

/** `ls-tree -r <ref>` in the same shape. */
function lsTree(repoDir, ref) {
  const out = new Map();
  for (const line of git(repoDir, ['ls-tree', '-r', '-z', ref]).split('\0').filter(Boolean)) {
    const m = /^(\d+) \w+ ([0-9a-f]{40})\t(.*)$/s.exec(line);
    out.set(m[3], { mode: m[1], oid: m[2] });
  }
  return out;
}

const kindOf = (mode) => (mode === '120000' ? 'symlink' : mode === '160000' ? 'gitlink' : 'file');

/** git with the target's index (GIT_INDEX_FILE) against the repository. */
const withTargetIndex = (repoDir, target, args) =>
  git(repoDir, args, { env: { GIT_INDEX_FILE: path.join(target, '.git', 'index') } });

/**
 * Run `materialize(repo, target, opts)` and check everything; `untracked`: files in the target
 * that must survive (rel → content). Returns { summary, snapBefore, snapAfter, oracle }.
 */
async function materializeMatchesGit(repoDir, target, opts = {}, { untracked = {} } = {}) {
  const ref = opts.ref ?? 'HEAD';
  const o = oracle(repoDir, ref, opts.paths);
  const repoBefore = fullState(repoDir);
  const snapBefore = fs.existsSync(target) ? worktreeSnapshot(target) : new Map();
  const indexBefore = fs.existsSync(path.join(target, '.git', 'index'))
    ? parseLsFiles(withTargetIndex(repoDir, target, ['ls-files', '-s', '-z']))
    : new Map();

  const summary = await pcMaterialize(repoDir, target, opts);

  // The repository: not one byte, mtime or inode changed (checked before git reads anything).
  assert.deepEqual(fullState(repoDir), repoBefore, 'the repository changed');

  // The worktree: git's, plus the untracked files that were not in the way.
  const snapAfter = worktreeSnapshot(target);
  const expected = new Map(o.snapshot);
  for (const [rel, content] of Object.entries(untracked)) {
    assert.equal(read(target, rel), content, `untracked ${rel}`);
    for (let p = rel; p !== '.'; p = path.dirname(p)) {
      if (!expected.has(p)) expected.set(p, snapAfter.get(p));
    }
  }
  assertSameSnapshot(snapAfter, expected, `target ${target} differs from git's ${o.dir}`);

  // pcheckout's own files in <target>/.git.
  assert.ok(fs.statSync(path.join(target, '.git', 'index')).isFile(), 'no <target>/.git/index');
  assert.ok(fs.existsSync(path.join(target, '.git', 'pcheckout.json')), 'no pcheckout.json');
  assert.ok(!fs.existsSync(path.join(target, '.git', 'index.lock')), 'index.lock left behind');

  // The index, as git reads it: git's entries, and stat data that describes the files.
  const lsFiles = withTargetIndex(repoDir, target, ['ls-files', '-s', '-z']);
  assert.equal(lsFiles, o.lsFiles, 'GIT_INDEX_FILE=<target>/.git/index git ls-files -s');
  if (!opts.paths) {
    assert.deepEqual(o.entries, lsTree(repoDir, ref), 'oracle: ls-files -s vs ls-tree -r');
  }
  const df = withTargetIndex(repoDir, target, [`--work-tree=${target}`, 'diff-files']);
  assert.equal(df, '', 'git diff-files against the target: stale stat data or content');
  assert.deepEqual(fullState(repoDir), repoBefore, 'oracle: git changed the repository');

  // The summary.
  assert.equal(summary.mode, 'materialize', 'summary.mode');
  const id = (rev) => gitOut(repoDir, 'rev-parse', '--verify', rev);
  const isTree = gitOut(repoDir, 'cat-file', '-t', ref) === 'tree';
  assert.equal(summary.tree, id(`${ref}^{tree}`), 'summary.tree');
  assert.equal(summary.commit, isTree ? null : id(`${ref}^{commit}`), 'summary.commit');
  assert.equal(summary.entries, o.entries.size, 'summary.entries');
  for (const k of ['created', 'updated', 'deleted', 'files', 'symlinks', 'gitlinks']) {
    assert.ok(Number.isInteger(summary[k]) && summary[k] >= 0, `summary.${k}: ${summary[k]}`);
  }
  const written = summary.files + summary.symlinks + summary.gitlinks;
  assert.equal(summary.created + summary.updated, written, 'created + updated = written');
  const gone = [...indexBefore.keys()].filter((p) => !o.entries.has(p));
  assert.ok(
    summary.deleted >= gone.filter((p) => snapBefore.has(p)).length &&
      summary.deleted <= gone.length,
    `summary.deleted ${summary.deleted}, ${gone.length} entries gone: ${JSON.stringify(gone)}`,
  );
  return { summary, snapBefore, snapAfter, oracle: o, indexBefore };
}

/** Entries whose (mode, oid) differ between two ls-files maps (new or changed), by kind. */
function changedEntries(from, to) {
  const out = { file: [], symlink: [], gitlink: [] };
  for (const [p, e] of to) {
    const f = from.get(p);
    if (!f || f.mode !== e.mode || f.oid !== e.oid) out[kindOf(e.mode)].push(p);
  }
  return out;
}

/** Paths present in both snapshots whose inode changed. */
const reinoded = (paths, a, b) => paths.filter((p) => a.get(p)?.ino !== b.get(p)?.ino);

describe('materialize (a tree into a directory outside the repository)', () => {
  let src;
  before(() => {
    src = buildSwitchRepo('materialize');
    // The repository sits on A with local and staged changes and an untracked file: none of it
    // may leak into a target or be touched.
    git(src.dir, ['checkout', '-q', '-f', 'A']);
    fs.appendFileSync(src.abs('content.txt'), 'local edit in the repository\n');
    fs.appendFileSync(src.abs(KEEP_FILES[0]), 'staged edit in the repository\n');
    git(src.dir, ['add', KEEP_FILES[0]]);
    write(src.dir, 'untracked-in-repo.txt', 'untracked\n');
  });

  for (const m of WORKER_MATRIX) {
    test(`B into a new directory; workers ${m.workers}, threshold ${m.threshold}`, async () => {
      const target = path.join(tmpPath('mat'), 'not', 'yet');
      const { summary, oracle: o } = await materializeMatchesGit(src.dir, target, {
        ref: 'B',
        ...m,
      });
      const all = changedEntries(new Map(), o.entries);
      assert.deepEqual(
        { files: summary.files, symlinks: summary.symlinks, gitlinks: summary.gitlinks },
        { files: all.file.length, symlinks: all.symlink.length, gitlinks: all.gitlink.length },
      );
      assert.equal(summary.created, o.entries.size);
      assert.equal(summary.updated + summary.deleted, 0);
      // workers / pool are not in the materialize contract; checked when reported.
      if (summary.workers !== undefined) assert.equal(summary.workers, m.workers, 'workers');
      if (summary.pool !== undefined) {
        assert.equal(summary.pool.used, m.workers > 1 && m.threshold === 0, 'summary.pool.used');
      }
    });
  }

  test('no ref: HEAD (A), not the index or the worktree of the repository', async () => {
    const target = tmpPath('mat');
    const { summary } = await materializeMatchesGit(src.dir, target, { workers: 2 });
    assert.equal(summary.commit, src.rev('A'));
    assert.doesNotMatch(read(target, 'content.txt'), /local edit/);
    assert.doesNotMatch(read(target, KEEP_FILES[0]), /staged edit/);
    assert.ok(!fs.existsSync(path.join(target, 'untracked-in-repo.txt')));
  });

  test('into an existing empty directory; an annotated tag; a tree id and rev^{tree}', async () => {
    const target = tmpPath('mat');
    fs.mkdirSync(target);
    const tag = await materializeMatchesGit(src.dir, target, { ref: 'vA', workers: 1 });
    assert.equal(tag.summary.commit, src.rev('A'));
    // The same tree again, named as a tree: nothing to write.
    for (const ref of ['vA^{tree}', src.rev('A^{tree}')]) {
      const { summary, snapBefore, snapAfter } = await materializeMatchesGit(src.dir, target, {
        ref,
        workers: 2,
        threshold: 0,
      });
      assert.equal(summary.commit, null, 'summary.commit of a tree');
      assert.equal(summary.files + summary.symlinks + summary.gitlinks + summary.deleted, 0);
      assert.deepEqual(reinoded([...snapBefore.keys()], snapBefore, snapAfter), []);
    }
  });

  for (const [from, to] of [
    ['A', 'B'],
    ['B', 'A'],
  ]) {
    test(`${from} then ${to} into the same directory: only the difference is written`, async () => {
      const target = tmpPath('mat');
      await materializeMatchesGit(src.dir, target, { ref: from, workers: 2, threshold: 0 });
      const r = await materializeMatchesGit(src.dir, target, { ref: to, workers: 2, threshold: 0 });
      const { summary, snapBefore, snapAfter, indexBefore, oracle: o } = r;
      const changed = changedEntries(indexBefore, o.entries);
      assert.deepEqual(
        { files: summary.files, symlinks: summary.symlinks, gitlinks: summary.gitlinks },
        {
          files: changed.file.length,
          symlinks: changed.symlink.length,
          gitlinks: changed.gitlink.length,
        },
        `entries written (expected ${JSON.stringify(changed)})`,
      );
      const gone = [...indexBefore.keys()].filter((p) => !o.entries.has(p));
      assert.equal(summary.deleted, gone.length, `deleted: ${JSON.stringify(gone)}`);
      const same = [...o.entries.keys()].filter(
        (p) =>
          indexBefore.get(p)?.oid === o.entries.get(p).oid &&
          indexBefore.get(p)?.mode === o.entries.get(p).mode,
      );
      assert.ok(same.length >= KEEP_FILES.length, 'fixture: entries the same on A and B');
      assert.deepEqual(reinoded(same, snapBefore, snapAfter), [], 'unchanged entries rewritten');
    });
  }

  test('the same ref again after damage in the target: restored, untracked files handled', async () => {
    const target = tmpPath('mat');
    await materializeMatchesGit(src.dir, target, { ref: 'A', workers: 1, threshold: 1e9 });
    // Damage, and untracked files: some in the way of B, some not.
    fs.appendFileSync(path.join(target, 'content.txt'), 'modified in the target\n');
    fs.rmSync(path.join(target, KEEP_FILES[1]));
    fs.chmodSync(path.join(target, KEEP_FILES[2]), 0o755);
    fs.rmSync(path.join(target, 'same/link'));
    fs.symlinkSync('elsewhere', path.join(target, 'same/link'));
    fs.rmSync(path.join(target, 'gone'), { recursive: true });
    write(target, 'only-b.txt', 'untracked, in the way of B\n');
    write(target, 'new/p/q/r.txt', 'untracked, in the way of B\n');
    const untracked = {
      'stray.txt': 'untracked, not in the way\n',
      'same/sub/stray.txt': 'untracked, in a directory that stays\n',
    };
    for (const [rel, text] of Object.entries(untracked)) write(target, rel, text);

    // The same ref: the damage is repaired, nothing else is written.
    const again = await materializeMatchesGit(
      src.dir,
      target,
      { ref: 'A', workers: 2, threshold: 0 },
      {
        untracked: {
          ...untracked,
          'only-b.txt': 'untracked, in the way of B\n',
          'new/p/q/r.txt': 'untracked, in the way of B\n',
        },
      },
    );
    const repaired = ['content.txt', KEEP_FILES[1], KEEP_FILES[2], 'same/link', 'gone/x/y/z.txt'];
    const written = again.summary.files + again.summary.symlinks;
    assert.equal(written, repaired.length, 'only the damaged entries are written');
    const rest = [...again.oracle.entries.keys()].filter((p) => !repaired.includes(p));
    assert.deepEqual(reinoded(rest, again.snapBefore, again.snapAfter), []);

    // Then B: the untracked files in its way are overwritten, the others stay.
    fs.appendFileSync(path.join(target, 'content.txt'), 'modified again\n');
    await materializeMatchesGit(
      src.dir,
      target,
      { ref: 'B', workers: 2, threshold: 0 },
      { untracked },
    );
    assert.equal(read(target, 'only-b.txt'), 'only on B\n');
    assert.equal(read(target, 'new/p/q/r.txt'), 'new on B\n');
  });

  test('a symlink put in place of a directory in the target: nothing written through it', async () => {
    const target = tmpPath('mat');
    const outside = tmpPath('outside');
    fs.mkdirSync(outside);
    await materializeMatchesGit(src.dir, target, { ref: 'A', workers: 2, threshold: 0 });
    fs.rmSync(path.join(target, 'same'), { recursive: true });
    fs.symlinkSync(outside, path.join(target, 'same'));
    fs.rmSync(path.join(target, 'deep/a'), { recursive: true });
    fs.symlinkSync(outside, path.join(target, 'deep/a'));
    await materializeMatchesGit(src.dir, target, { ref: 'B', workers: 2, threshold: 0 });
    assert.deepEqual(fs.readdirSync(outside), [], 'written through a symlink');
    assert.ok(fs.lstatSync(path.join(target, 'same')).isDirectory());
  });

  test('paths: only the matching entries; a narrower pathspec removes the rest', async () => {
    const target = tmpPath('mat');
    const steps = [
      { paths: ['same', 'f2d', 'README.md'] },
      { paths: ['same/sub'] },
      { paths: ['*.txt', ':!same'] },
      { paths: [':(glob)*', 'new/p'] },
      {},
    ];
    for (const [i, step] of steps.entries()) {
      const m = i % 2 ? { workers: 1, threshold: 0 } : { workers: 2, threshold: 0 };
      await materializeMatchesGit(src.dir, target, { ref: 'B', ...step, ...m });
    }
    // Then narrower again, another ref.
    const r = await materializeMatchesGit(src.dir, target, { ref: 'A', paths: ['deep'] });
    assert.deepEqual(fs.readdirSync(target).sort(), ['.git', 'deep']);
    assert.equal(r.summary.entries, 2);
  });

  test('a pathspec that matches nothing: ERR_PATHSPEC, nothing written', async () => {
    const target = tmpPath('mat');
    await materializeMatchesGit(src.dir, target, { ref: 'A', paths: ['same'] });
    const before = fullState(target);
    const repoBefore = fullState(src.dir);
    const miss = gitTry(src.dir, ['ls-tree', '-r', '--name-only', 'B', '--', 'nomatch']);
    assert.equal(miss.stdout, '', 'oracle: nomatch matches');
    let error;
    await pcMaterialize(src.dir, target, { ref: 'B', paths: ['same', 'nomatch'] }).catch(
      (e) => (error = e),
    );
    assert.ok(error instanceof PcheckoutError, `expected ERR_PATHSPEC, got ${error}`);
    assert.equal(error.code, 'ERR_PATHSPEC', error.message);
    assert.match(error.message, /pathspec 'nomatch' did not match any file\(s\) known to git/);
    assert.deepEqual(fullState(target), before, 'the target changed');
    assert.deepEqual(fullState(src.dir), repoBefore, 'the repository changed');
  });

  // Trees git refuses to check out: a `.git` entry at the top (where pcheckout keeps its own
  // files) or deeper.
  for (const where of ['top', 'nested']) {
    test(`a tree with a .git entry (${where}): ERR_UNSAFE_PATH, nothing written`, async () => {
      const repo = src.copy('mat-dotgit');
      const blob = git(repo.dir, ['hash-object', '-w', '--stdin'], { input: 'evil\n' }).trim();
      let tree = git(repo.dir, ['mktree'], {
        input: `100644 blob ${blob}\t.git\n100644 blob ${blob}\tok.txt\n`,
      }).trim();
      if (where === 'nested') {
        tree = git(repo.dir, ['mktree'], {
          input: `100644 blob ${blob}\ta.txt\n040000 tree ${tree}\tsub\n`,
        }).trim();
      }
      const commit = git(repo.dir, ['commit-tree', '-m', 'dotgit', tree]).trim();
      const g = gitTry(repo.dir, ['read-tree', commit]);
      assert.notEqual(g.status, 0, 'oracle: git read this tree');
      assert.match(g.stderr, /invalid path '(sub\/)?\.git'/);
      const target = tmpPath('mat');
      const repoBefore = fullState(repo.dir);
      let error;
      await pcMaterialize(repo.dir, target, { ref: commit }).catch((e) => (error = e));
      assert.ok(error instanceof PcheckoutError, `expected ERR_UNSAFE_PATH, got ${error}`);
      assert.equal(error.code, 'ERR_UNSAFE_PATH', error.message);
      const left = fs.existsSync(target) ? fs.readdirSync(target).filter((n) => n !== '.git') : [];
      assert.deepEqual(left, [], 'entries written');
      if (fs.existsSync(path.join(target, '.git'))) {
        assert.ok(!fs.lstatSync(path.join(target, '.git')).isFile(), '.git written as a file');
      }
      assert.deepEqual(fullState(repo.dir), repoBefore, 'the repository changed');
    });
  }

  test('a bad ref: ERR_BAD_REF; a target inside the repository: refused', async () => {
    const repoBefore = fullState(src.dir);
    let error;
    await pcMaterialize(src.dir, tmpPath('mat'), { ref: 'no-such-ref' }).catch((e) => (error = e));
    assert.ok(error instanceof PcheckoutError, `${error}`);
    assert.equal(error.code, 'ERR_BAD_REF', error.message);
    error = undefined;
    await pcMaterialize(src.dir, path.join(src.dir, 'inside'), { ref: 'B' }).catch(
      (e) => (error = e),
    );
    assert.ok(error instanceof PcheckoutError, `a target inside the repository: ${error}`);
    assert.deepEqual(fullState(src.dir), repoBefore, 'the repository changed');
  });
});
