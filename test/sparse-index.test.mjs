// The sparse index (index.sparse=true with a cone-mode sparse checkout, as `git sparse-checkout
// init --cone --sparse-index` sets it): each directory outside the cone whose entries are all
// skip-worktree is ONE entry (mode 040000, the tree's id, its path with a final '/',
// skip-worktree) and the index carries the empty `sdir` extension. Compared with git 2.39 on
// real repositories: a fresh checkout, a switch (changes inside and outside the cone, a new
// directory outside it), force, restore, the untracked cache, the cone moved by hand, the
// sparse index turned on and off. Each must leave git's index (`ls-files --sparse -s -t`,
// `ls-files --sparse --debug` flags and stat data of the sparse directories, the index
// version, the extensions present, parsed here from the file), git's worktree, a cache-tree git
// verifies, and `git status` clean.
//
// What git 2.39 does (checked below as oracle assertions):
// - an index read full is collapsed when read (ensure_correct_sparsity): a directory outside
//   the cone whose entries were all skip-worktree then becomes one entry; an index read sparse
//   is not collapsed again, so after the patterns are narrowed by hand a checkout leaves the
//   entries that just left the cone as skip-worktree files (only `git sparse-checkout reapply`
//   collapses them); a directory new to the index and outside the cone goes in as one entry;
// - a directory holding a gitlink (out/mod/ here) is left expanded when git converts a full
//   index (`sparse-checkout set`, an index read full), but goes in as one entry when it is new
//   to the index (a fresh checkout);
// - `ls-files` converts (or expands) the index it reads as index.sparse says, in memory: what
//   the file holds is read from the file here.
// - after the patterns are widened by hand, `git checkout` fails on the sparse directory that
//   came into the cone ("error: unknown file mode for out/far/ in index") and leaves it a
//   directory entry without skip-worktree (`git status`: " D out/far/"); pcheckout expands it
//   and writes its files, which is what `git sparse-checkout reapply` does;
// - with index.sparse=false (`git config --worktree`), a sparse index read is written full;
// - `git checkout-index -a -f` keeps a sparse index as it is, and a full one full;
// - a checkout keeps the untracked cache (UNTR) of the index; pcheckout drops it (as for a
//   full index) and the next `git status` writes it again, showing the untracked file.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { readIndex as readIndexFile } from '../dist/index/read.js';
import { assertCacheTreeVerifies, cacheTreeBytes } from './helpers/cache-tree.mjs';
import { indexLayout } from './helpers/index-layout.mjs';
import { Repo, fakeCommitId, freshClone, git, gitOut, gitTry, tmpDir } from './helpers/git.mjs';
import {
  assertSameSnapshot,
  compareTwins,
  headOf,
  makeTwins,
  worktreeSnapshot,
} from './helpers/twin.mjs';

const pc = (op) => (dir) => checkout(dir, { ...op, racyWait: false });
const CONE = ['in', 'out/deep'];

/**
 * Branches A and B (main is B); the cone is in/ and out/deep/:
 *   in cone:  README.md top.txt in/** out/c.txt out/deep/**
 *   outside:  out/far/** (changes A → B: f.txt changed, g.txt removed, new/n.txt added),
 *             out/mod/ (holds a gitlink), x/y/z.txt (the same on both),
 *             gone/ (A only), zz/ (B only)
 *   A → B:    in/a.txt, out/c.txt, out/deep/d.txt change; in/new.txt added; in/exec.sh loses
 *             its exec bit; in/link retargeted
 */
function buildRepo() {
  const r = Repo.init('sparse-index');
  r.write('README.md', 'readme\n');
  r.write('top.txt', 'top\n');
  r.write('in/a.txt', 'a on A\n');
  r.write('in/deep/b.txt', 'b\n');
  r.symlink('in/link', 'a.txt');
  r.write('in/exec.sh', '#!/bin/sh\n', { exec: true });
  r.write('out/c.txt', 'c on A\n');
  r.write('out/deep/d.txt', 'd on A\n');
  r.write('out/deep/more/e.txt', 'e\n');
  r.write('out/far/f.txt', 'f on A\n');
  r.write('out/far/g.txt', 'g, A only\n');
  r.write('out/far/same.txt', 'the same on A and B\n');
  r.symlink('out/far/link', 'f.txt');
  r.write('out/mod/m.txt', 'next to a gitlink\n');
  r.gitlink('out/mod/sub', fakeCommitId('mod-sub'));
  r.write('x/y/z.txt', 'z\n');
  r.write('gone/only-a.txt', 'A only\n');
  r.branch('A', r.commit('A'));

  r.write('in/a.txt', 'a on B\n');
  r.write('in/new.txt', 'new on B\n');
  r.chmod('in/exec.sh', false);
  r.symlink('in/link', 'deep/b.txt');
  r.write('out/c.txt', 'c on B\n');
  r.write('out/deep/d.txt', 'd on B\n');
  r.write('out/far/f.txt', 'f on B\n');
  r.rm('out/far/g.txt');
  r.write('out/far/new/n.txt', 'new on B, outside\n');
  r.rm('gone');
  r.write('zz/q/q.txt', 'B only, outside\n');
  r.branch('B', r.commit('B'));
  r.git('reset', '-q', '--hard', 'B');
  r.gc();
  return r;
}

/** `git sparse-checkout init --cone --sparse-index` and `set <dirs>`. */
function sparseIndexSet(dir, dirs = CONE) {
  git(dir, ['sparse-checkout', 'init', '--cone', '--sparse-index']);
  git(dir, ['sparse-checkout', 'set', ...dirs]);
}

const patternsFile = (dir) => path.join(dir, '.git', 'info', 'sparse-checkout');

/** `ls-files --sparse --debug`: Map(path → { stat, flags }). */
function debugEntries(dir) {
  const out = new Map();
  for (const block of git(dir, ['ls-files', '--sparse', '--debug']).split(/\n(?! )/)) {
    if (!block) continue;
    const [name, ...rest] = block.split('\n');
    const flags = /flags: ([0-9a-f]+)/.exec(block)[1];
    const stat = rest
      .join(' ')
      .replace(/\s*flags: [0-9a-f]+/, '')
      .replace(/\s+/g, ' ')
      .trim();
    out.set(name, { stat, flags });
  }
  return out;
}

const ZERO_STAT = 'ctime: 0:0 mtime: 0:0 dev: 0 ino: 0 uid: 0 gid: 0 size: 0';
const sparseList = (dir) => git(dir, ['ls-files', '--sparse', '-s', '-t']);
const sparseDirs = (dir) =>
  sparseList(dir)
    .split('\n')
    .filter((l) => / 040000 /.test(l))
    .map((l) => l.split('\t')[1]);

/** The sparse directories the index file holds (read by pcheckout's reader). */
function fileSparseDirs(dir) {
  const index = readIndexFile(path.join(dir, '.git', 'index'));
  const dirs = [];
  for (let i = 0; i < index.entries.count; i++) {
    if (index.entries.modes[i] === 0o40000) dirs.push(index.entries.name(i));
  }
  return dirs;
}

/**
 * The sparse index as git left it: entries (sparse directories included) with their tags,
 * every entry's flags, zero stat data on each sparse directory, the version, the extensions
 * (`withoutUntracked`: git's minus UNTR, which pcheckout does not carry over), a cache-tree
 * git verifies.
 */
function assertSameSparseIndex(pcDir, gitDir, { withoutUntracked = false } = {}) {
  assert.equal(sparseList(pcDir), sparseList(gitDir), 'git ls-files --sparse -s -t');
  const a = debugEntries(pcDir);
  const g = debugEntries(gitDir);
  assert.deepEqual([...a.keys()], [...g.keys()], 'ls-files --sparse --debug entries');
  assert.deepEqual(fileSparseDirs(pcDir), fileSparseDirs(gitDir), 'sparse directories in the file');
  const problems = [];
  for (const [p, ge] of g) {
    const ae = a.get(p);
    if (ae.flags !== ge.flags) problems.push(`${p}: flags ${ae.flags}, git ${ge.flags}`);
    if (p.endsWith('/') && (ae.stat !== ZERO_STAT || ge.stat !== ZERO_STAT)) {
      problems.push(`${p}: stat ${ae.stat}, git ${ge.stat}`);
    }
  }
  assert.deepEqual(problems, [], 'ls-files --sparse --debug');
  const ours = indexLayout(pcDir);
  const theirs = indexLayout(gitDir);
  assert.equal(ours.version, theirs.version, 'index version');
  const expected = withoutUntracked
    ? theirs.extensions.filter((s) => s !== 'UNTR')
    : theirs.extensions;
  assert.deepEqual(ours.extensions, expected, 'extensions');
  assertCacheTreeVerifies(pcDir);
}

/** Twins at `at` with the sparse index set up (CONE), then git's checkout vs pcheckout's. */
async function compareSparseIndex(src, { at, op, mutate, localChanges = false, cone = CONE }) {
  const twins = await makeTwins(src, {
    at,
    mutate: async (d) => {
      sparseIndexSet(d, cone);
      await mutate?.(d);
    },
  });
  assert.ok(sparseDirs(twins.pc).length > 0, 'oracle: the index is sparse before');
  assert.ok(indexLayout(twins.pc).extensions.includes('sdir'), 'oracle: sdir');
  const result = await compareTwins(twins, { op, run: pc(op), localChanges });
  assertSameSparseIndex(twins.pc, twins.git);
  return result;
}

describe('sparse index', () => {
  let src;
  before(() => {
    src = buildRepo();
  });

  test('fresh checkout (a --no-checkout clone set up with the sparse index): as git', async () => {
    const twins = { git: freshClone(src), pc: freshClone(src) };
    for (const d of [twins.git, twins.pc]) sparseIndexSet(d);
    git(twins.git, ['read-tree', '-mu', 'HEAD']);
    const summary = await checkout(twins.pc, { workers: 2, threshold: 0, racyWait: false });
    assert.equal(summary.mode, 'fresh');
    assertSameSnapshot(worktreeSnapshot(twins.pc), worktreeSnapshot(twins.git), 'worktree');
    assertSameSparseIndex(twins.pc, twins.git);
    assert.deepEqual(headOf(twins.pc), headOf(twins.git), 'HEAD');
    // out/mod/ holds a gitlink, and is collapsed all the same.
    assert.deepEqual(sparseDirs(twins.git), ['out/far/', 'out/mod/', 'x/', 'zz/'], 'oracle');
    assert.deepEqual(indexLayout(twins.git).extensions, ['TREE', 'sdir'], 'oracle');
    assert.equal(indexLayout(twins.git).version, 3, 'oracle: version 3');
    for (const d of [twins.git, twins.pc]) {
      assert.equal(git(d, ['status', '--porcelain', '--untracked-files=all']), '', d);
    }
    assert.ok(!fs.existsSync(path.join(twins.pc, 'out/far')), 'outside the cone: written');
  });

  for (const [from, to, m] of [
    ['A', 'B', { workers: 2, threshold: 0 }],
    ['B', 'A', { workers: 1, threshold: 1e9 }],
  ]) {
    test(`switch ${from} → ${to}: changes inside and outside the cone; workers ${m.workers}`, async () => {
      const { twins } = await compareSparseIndex(src, { at: from, op: { ref: to, ...m } });
      // out/mod/ (a gitlink in it) stays expanded, as `sparse-checkout set` left it; zz/,
      // new to the index, goes in as one entry.
      assert.deepEqual(
        fileSparseDirs(twins.git),
        to === 'B' ? ['out/far/', 'x/', 'zz/'] : ['gone/', 'out/far/', 'x/'],
        'oracle',
      );
      // The sparse directory that changed holds the target's tree.
      const far = gitOut(twins.git, 'rev-parse', `${to}:out/far`);
      assert.match(sparseList(twins.pc), new RegExp(`^S 040000 ${far} 0\tout/far/$`, 'm'));
    });
  }

  test('switch with a staged change in the cone carried across (cache-tree still verifies)', async () => {
    await compareSparseIndex(src, {
      at: 'B',
      op: { ref: 'A', workers: 2, threshold: 0 },
      mutate: (d) => {
        fs.appendFileSync(path.join(d, 'in/deep/b.txt'), 'staged\n');
        git(d, ['add', 'in/deep/b.txt']);
      },
      localChanges: true,
    });
  });

  test('index version 4 (update-index --index-version 4): switch A → B as git', async () => {
    const { twins } = await compareSparseIndex(src, {
      at: 'A',
      op: { ref: 'B', workers: 2, threshold: 0 },
      mutate: (d) => git(d, ['update-index', '--index-version', '4']),
    });
    assert.equal(indexLayout(twins.git).version, 4, 'oracle: version 4');
  });

  test('switch refused (a local change to an entry that changes): as git, nothing written', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    const twins = await makeTwins(src, {
      at: 'A',
      mutate: (d) => {
        sparseIndexSet(d);
        fs.appendFileSync(path.join(d, 'in/a.txt'), 'local\n');
      },
    });
    const { error } = await compareTwins(twins, { op, run: pc(op), expect: 'ERR_WOULD_OVERWRITE' });
    assert.deepEqual(error.paths, ['in/a.txt']);
  });

  test('dry run: the plan of a sparse index, nothing written', async () => {
    const twins = await makeTwins(src, { at: 'A', mutate: (d) => sparseIndexSet(d) });
    const file = path.join(twins.pc, '.git', 'index');
    const bytes = fs.readFileSync(file);
    const summary = await checkout(twins.pc, { ref: 'B', dryRun: true, changes: true });
    assert.equal(summary.dryRun, true);
    assert.ok(fs.readFileSync(file).equals(bytes), 'index changed');
    git(twins.git, ['checkout', '-q', 'B']);
    assert.equal(summary.entries, git(twins.git, ['ls-files']).split('\n').length - 1);
  });

  test('force (checkout -f B): local changes in the cone discarded, sparse dirs kept', async () => {
    await compareSparseIndex(src, {
      at: 'A',
      op: { ref: 'B', force: true, workers: 2, threshold: 0 },
      mutate: (d) => {
        fs.appendFileSync(path.join(d, 'in/a.txt'), 'local\n');
        fs.rmSync(path.join(d, 'out/deep/d.txt'));
      },
      localChanges: true,
    });
  });

  test('restore (checkout-index -a -f): deleted files in the cone restored, index as git', async () => {
    const { twins } = await compareSparseIndex(src, {
      at: 'B',
      op: { restore: true, workers: 2, threshold: 0 },
      mutate: (d) => {
        fs.rmSync(path.join(d, 'in/a.txt'));
        fs.rmSync(path.join(d, 'out/deep'), { recursive: true });
      },
      localChanges: true,
    });
    assert.ok(fs.existsSync(path.join(twins.pc, 'out/deep/more/e.txt')), 'restored');
  });

  test('checkout of paths (B -- in/a.txt in/deep): the sparse index and its cache-tree as git', async () => {
    const twins = await makeTwins(src, { at: 'A', mutate: (d) => sparseIndexSet(d) });
    git(twins.git, ['checkout', 'B', '--', 'in/a.txt', 'in/deep']);
    await checkout(twins.pc, { ref: 'B', paths: ['in/a.txt', 'in/deep'], racyWait: false });
    assertSameSnapshot(worktreeSnapshot(twins.pc), worktreeSnapshot(twins.git), 'worktree');
    assertSameSparseIndex(twins.pc, twins.git);
    // git keeps the cache-tree read, not valid above in/a.txt: so does pcheckout.
    const tree = (d) => cacheTreeBytes(path.join(d, '.git', 'index'));
    assert.ok(tree(twins.pc)?.equals(tree(twins.git)), 'cache-tree bytes');
    for (const d of [twins.git, twins.pc]) {
      assert.equal(git(d, ['status', '--porcelain']), 'M  in/a.txt\n', `${d}: status`);
    }
  });

  test('core.untrackedCache=true: the untracked file planted shows in git status', async () => {
    const twins = await makeTwins(src, {
      at: 'A',
      mutate: (d) => {
        sparseIndexSet(d);
        git(d, ['config', 'core.untrackedCache', 'true']);
        fs.writeFileSync(path.join(d, 'in/untracked.txt'), 'untracked\n');
        git(d, ['status', '--porcelain']); // writes the untracked cache
        assert.ok(indexLayout(d).extensions.includes('UNTR'), 'oracle: UNTR written');
      },
    });
    git(twins.git, ['checkout', '-q', 'B']);
    await checkout(twins.pc, { ref: 'B', racyWait: false });
    assertSameSnapshot(worktreeSnapshot(twins.pc), worktreeSnapshot(twins.git), 'worktree');
    assertSameSparseIndex(twins.pc, twins.git, { withoutUntracked: true });
    for (const d of [twins.git, twins.pc]) {
      assert.equal(git(d, ['status', '--porcelain']), '?? in/untracked.txt\n', `${d}: status`);
    }
    // git status wrote the untracked cache again: now the same extensions.
    assert.deepEqual(indexLayout(twins.pc).extensions, indexLayout(twins.git).extensions);
    assert.deepEqual(indexLayout(twins.pc).extensions, ['TREE', 'UNTR', 'sdir']);
  });

  test('git sparse-checkout set, then pcheckout (refresh): nothing to do, the index untouched', async () => {
    const dir = (await makeTwins(src, { at: 'B', mutate: (d) => sparseIndexSet(d) })).pc;
    git(dir, ['sparse-checkout', 'set', 'in', 'out']);
    const file = path.join(dir, '.git', 'index');
    const bytes = fs.readFileSync(file);
    const ino = fs.statSync(file).ino;
    const summary = await checkout(dir, { racyWait: false });
    assert.equal(summary.files, 0);
    assert.ok(fs.readFileSync(file).equals(bytes), 'index rewritten');
    assert.equal(fs.statSync(file).ino, ino);
    assert.equal(git(dir, ['status', '--porcelain']), '');
  });

  test('patterns widened by hand, then a refresh: the directory entering the cone expanded as sparse-checkout reapply does (git checkout fails there)', async () => {
    const widen = (d) => {
      sparseIndexSet(d);
      fs.appendFileSync(patternsFile(d), '/out/far/\n');
    };
    const twins = await makeTwins(src, { at: 'A', mutate: widen });
    git(twins.git, ['sparse-checkout', 'reapply']);
    await checkout(twins.pc, { racyWait: false });
    assertSameSnapshot(worktreeSnapshot(twins.pc), worktreeSnapshot(twins.git), 'worktree');
    assertSameSparseIndex(twins.pc, twins.git);
    assert.equal(git(twins.pc, ['status', '--porcelain']), '');
    assert.ok(fs.existsSync(path.join(twins.pc, 'out/far/f.txt')), 'entered the cone: written');
    // git's own checkout cannot do it.
    const broken = (await makeTwins(src, { at: 'A', mutate: widen })).git;
    const r = gitTry(broken, ['checkout']);
    assert.match(r.stderr, /unknown file mode for out\/far\/ in index/, 'oracle: git fails');
    assert.match(sparseList(broken), /^H 040000 \S+ 0\tout\/far\/$/m, 'oracle: no bit');
  });

  test('patterns widened by hand, then a switch: as sparse-checkout reapply and checkout', async () => {
    const twins = await makeTwins(src, {
      at: 'A',
      mutate: (d) => {
        sparseIndexSet(d);
        fs.appendFileSync(patternsFile(d), '/out/far/\n');
      },
    });
    git(twins.git, ['sparse-checkout', 'reapply']);
    git(twins.git, ['checkout', '-q', 'B']);
    await checkout(twins.pc, { ref: 'B', workers: 2, threshold: 0, racyWait: false });
    assertSameSnapshot(worktreeSnapshot(twins.pc), worktreeSnapshot(twins.git), 'worktree');
    assertSameSparseIndex(twins.pc, twins.git);
    assert.equal(git(twins.pc, ['status', '--porcelain']), '');
  });

  for (const ref of [undefined, 'B']) {
    test(`patterns narrowed by hand, then ${ref ? 'a switch' : 'a refresh'}: as git (the entries leaving the cone stay entries)`, async () => {
      const op = { ref, workers: 2, threshold: 0 };
      const { twins } = await compareSparseIndex(src, {
        at: 'A',
        op,
        mutate: (d) => fs.writeFileSync(patternsFile(d), '/*\n!/*/\n/in/\n'),
      });
      assert.match(sparseList(twins.git), /^S 100644 \S+ 0\tout\/c.txt$/m, 'oracle: no collapse');
      assert.ok(!fs.existsSync(path.join(twins.pc, 'out/c.txt')), 'left the cone: removed');
    });
  }

  test('a full index with index.sparse=true: collapsed on the switch, as git', async () => {
    const twins = await makeTwins(src, {
      at: 'A',
      mutate: (d) => {
        git(d, ['sparse-checkout', 'set', '--cone', ...CONE]);
        git(d, ['config', '--worktree', 'index.sparse', 'true']);
        assert.deepEqual(fileSparseDirs(d), [], 'oracle: full');
      },
    });
    const op = { ref: 'B', workers: 2, threshold: 0 };
    await compareTwins(twins, { op, run: pc(op), localChanges: false });
    assertSameSparseIndex(twins.pc, twins.git);
    assert.deepEqual(fileSparseDirs(twins.git), ['out/far/', 'x/', 'zz/'], 'oracle');
  });

  test('index.sparse turned off (config --worktree): the sparse index read written full, as git', async () => {
    const op = { ref: 'B', workers: 1, threshold: 0 };
    const twins = await makeTwins(src, {
      at: 'A',
      mutate: (d) => {
        sparseIndexSet(d);
        git(d, ['config', '--worktree', 'index.sparse', 'false']);
      },
    });
    assert.ok(fileSparseDirs(twins.pc).length > 0, 'oracle: sparse before');
    await compareTwins(twins, { op, run: pc(op), localChanges: false });
    assertSameSparseIndex(twins.pc, twins.git);
    assert.deepEqual(fileSparseDirs(twins.git), [], 'oracle: written full');
    assert.deepEqual(indexLayout(twins.pc).extensions, ['TREE']);
  });
});

describe('reading a sparse index', () => {
  let sparseIndex;
  let repo;
  before(async () => {
    const r = buildRepo();
    repo = r.dir;
    const dir = tmpDir('sparse-read');
    git(dir, ['clone', '-q', r.dir, '.']);
    sparseIndexSet(dir);
    sparseIndex = fs.readFileSync(path.join(dir, '.git', 'index'));
  });

  /** The file with `edit(buf, at)` applied to the entry of `name`, checksum recomputed. */
  function edited(name, edit) {
    const buf = Buffer.from(sparseIndex);
    const at = buf.indexOf(Buffer.from(`${name}\0`, 'latin1')) - 64; // v3 with extended flags
    assert.equal(buf.readUInt32BE(at + 24), 0o40000, 'oracle: a sparse directory entry');
    edit(buf, at);
    createHash('sha1')
      .update(buf.subarray(0, buf.length - 20))
      .digest()
      .copy(buf, buf.length - 20);
    const file = path.join(tmpDir('bad-sparse'), 'index');
    fs.writeFileSync(file, buf);
    return file;
  }

  test('the sparse directory entries read as entries, sdir recognised', () => {
    const dir = tmpDir('good-sparse');
    const file = path.join(dir, '.git', 'index');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, sparseIndex);
    const index = readIndexFile(file);
    assert.equal(index.sparse, true);
    assert.equal(index.sparseDirs, 3);
    assert.deepEqual(fileSparseDirs(dir), ['out/far/', 'x/', 'zz/']);
  });

  for (const [what, edit] of [
    ['without the skip-worktree bit', (b, at) => b.writeUInt16BE(0, at + 62)],
    ['with a mode other than 040000', (b, at) => b.writeUInt32BE(0o40755, at + 24)],
    ['at stage 1', (b, at) => b.writeUInt16BE(b.readUInt16BE(at + 60) | 0x1000, at + 60)],
    ['whose path does not end in /', (b, at) => b.write('x', at + 64 + 'zz'.length, 'latin1')],
  ]) {
    test(`a sparse directory entry ${what}: ERR_CORRUPT_INDEX`, () => {
      const file = edited('zz/', edit);
      assert.throws(
        () => readIndexFile(file),
        (err) => err.code === 'ERR_CORRUPT_INDEX' && /is a directory/.test(err.message),
      );
    });
  }
});
