// The split index (core.splitIndex, `git update-index --split-index`): the index file holds a
// `link` extension naming a shared index, .git/sharedindex.<its checksum>, with most entries;
// the file's own entries replace (no name, a bit in the replace bitmap) or add to them, and a
// delete bitmap removes some. Compared with git 2.39 on twins: switch, force, restore and a
// fresh checkout each leave the same entries and flags (`ls-files -s -v`, `ls-files --debug`)
// as git, a split index again (link extension, its shared index on disk), `git status` clean;
// git's rules for a new shared index (splitIndex.maxPercentChange) and for removing old ones
// (splitIndex.sharedIndexExpire); core.splitIndex=false writes the index whole again; a
// missing or damaged shared index is a coded error that writes nothing.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { readEwah, writeEwah } from '../dist/index/ewah.js';
import { readIndex } from '../dist/index/read.js';
import { indexLayout as layout } from './helpers/index-layout.mjs';
import { Repo, freshClone, git, gitOut, gitTry, prng } from './helpers/git.mjs';
import { compareTwins, makeTwins } from './helpers/twin.mjs';

const pc = (op) => (dir) => checkout(dir, { ...op, racyWait: false });

function assertPcheckoutError(fn, code, pattern) {
  assert.throws(fn, (e) => {
    assert.equal(e.code, code);
    assert.match(e.message, pattern);
    return true;
  });
}

/**
 * main: 40 files in d0..d3/ plus top.txt and a symlink; branch small: 2 files changed, one
 * added, one removed (under 20% of the entries); branch big: half the files changed.
 */
function buildRepo() {
  const r = Repo.init('split-index');
  for (let i = 0; i < 40; i++) r.write(`d${i % 4}/f${i}.txt`, `file ${i}\n`);
  r.write('top.txt', 'top\n').symlink('link', 'top.txt');
  r.branch('base', r.commit('base'));
  r.write('d0/f0.txt', 'changed\n').write('d1/f1.txt', 'changed too\n');
  r.write('d2/new.txt', 'new\n').rm('d3/f3.txt');
  r.branch('small', r.commit('small'));
  git(r.dir, ['checkout', '-q', '--detach', 'base']);
  for (let i = 0; i < 40; i += 2) r.write(`d${i % 4}/f${i}.txt`, `big change ${i}\n`);
  r.branch('big', r.commit('big'));
  git(r.dir, ['checkout', '-q', 'base']);
  return r;
}

const sharedIndexes = (dir) =>
  fs
    .readdirSync(path.join(dir, '.git'))
    .filter((n) => n.startsWith('sharedindex.'))
    .sort();

/** `ls-files --debug` with the stat data left out: path and flags per entry. */
const debugFlags = (dir) =>
  git(dir, ['ls-files', '--debug'])
    .split('\n')
    .filter((l) => !/^\s+(ctime|mtime|dev|uid|size):/.test(l))
    .join('\n');

/**
 * The worktree's files made 10 s older and the index refreshed: no entry is racily clean, so
 * that no git command (status, diff-files) rewrites the index before the call compared.
 */
function settle(d) {
  const past = Date.now() / 1000 - 10;
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      fs.lutimesSync(p, past, past);
    }
  };
  walk(d);
  git(d, ['update-index', '-q', '--refresh']);
}

function splitTwins(src, at, config = []) {
  return makeTwins(src, {
    at,
    mutate: (d) => {
      settle(d);
      git(d, ['config', 'core.splitIndex', 'true']);
      for (const [k, v] of config) git(d, ['config', k, v]);
      git(d, ['update-index', '--split-index']);
    },
  });
}

/** The twins after the same call: split as git's, its shared index there, status clean. */
function assertSplitLikeGit(twins, before) {
  const ours = layout(twins.pc);
  const theirs = layout(twins.git);
  assert.ok(theirs.link, 'oracle: git wrote a split index');
  assert.ok(ours.link, 'a split index');
  assert.deepEqual(ours.extensions, theirs.extensions, 'extensions');
  assert.equal(ours.version, theirs.version, 'version');
  assert.ok(sharedIndexes(twins.pc).includes(`sharedindex.${ours.link}`), 'its shared index');
  assert.equal(debugFlags(twins.pc), debugFlags(twins.git), 'ls-files --debug flags');
  if (before) {
    // A new shared index exactly when git wrote one.
    assert.equal(ours.link === before.pc, theirs.link === before.git, 'the shared index kept');
  }
  for (const d of [twins.pc, twins.git]) {
    assert.equal(git(d, ['status', '--porcelain', '--untracked-files=all']), '', d);
  }
  // git reads it as its own: it takes it apart the same way (both twins, so that they stay
  // alike for what follows).
  for (const d of [twins.pc, twins.git]) git(d, ['update-index', '--no-split-index']);
  assert.equal(layout(twins.pc).link, null);
  assert.equal(git(twins.pc, ['ls-files', '-s']), git(twins.git, ['ls-files', '-s']));
  assert.equal(git(twins.pc, ['status', '--porcelain']), '');
}

const links = (twins) => ({ pc: layout(twins.pc).link, git: layout(twins.git).link });

describe('split index', () => {
  let src;
  before(() => {
    src = buildRepo();
  });

  for (const [ref, m] of [
    ['small', { workers: 1, threshold: 1e9 }],
    ['big', { workers: 2, threshold: 0 }],
  ]) {
    test(`switch base → ${ref}: the same index as git, split again`, async () => {
      const twins = await splitTwins(src, 'base');
      const before = links(twins);
      const op = { ref, ...m };
      await compareTwins(twins, { op, run: pc(op), localChanges: false });
      // A few changes keep the shared index; half the entries changed make a new one.
      assert.equal(layout(twins.git).link === before.git, ref === 'small', 'oracle');
      assertSplitLikeGit(twins, before);
    });
  }

  test('force with local changes, then a restore: as git', async () => {
    const edit = (d) => {
      fs.writeFileSync(path.join(d, 'd0/f4.txt'), 'local\n');
      fs.rmSync(path.join(d, 'd1/f5.txt'));
    };
    let twins = await splitTwins(src, 'base');
    edit(twins.pc);
    edit(twins.git);
    let before = links(twins);
    const force = { ref: 'small', force: true };
    await compareTwins(twins, { op: force, run: pc(force) });
    assertSplitLikeGit(twins, before);

    twins = await splitTwins(src, 'small');
    edit(twins.pc);
    edit(twins.git);
    before = links(twins);
    const restore = { restore: true };
    await compareTwins(twins, { op: restore, run: pc(restore) });
    assertSplitLikeGit(twins, before);
  });

  test('index version 4 (feature.manyFiles), and a switch back and forth', async () => {
    const twins = await splitTwins(src, 'base', [['index.version', '4']]);
    git(twins.pc, ['update-index', '--index-version', '4']);
    git(twins.git, ['update-index', '--index-version', '4']);
    assert.equal(layout(twins.git).version, 4, 'oracle');
    for (const ref of ['small', 'base', 'small']) {
      const before = links(twins);
      const op = { ref };
      await compareTwins(twins, { op, run: pc(op), localChanges: false });
      assert.equal(layout(twins.pc).version, 4);
      const ours = layout(twins.pc);
      assert.ok(ours.link);
      assert.equal(ours.link === before.pc, layout(twins.git).link === before.git);
      assert.equal(debugFlags(twins.pc), debugFlags(twins.git), 'ls-files --debug flags');
    }
  });

  test('a fresh checkout with core.splitIndex=true writes a split index, as git', async () => {
    const twins = { git: freshClone(src), pc: freshClone(src) };
    for (const d of [twins.git, twins.pc]) git(d, ['config', 'core.splitIndex', 'true']);
    git(twins.git, ['checkout', '-q', 'base']);
    const summary = await checkout(twins.pc, { ref: 'base', racyWait: false });
    assert.equal(summary.mode, 'fresh');
    assert.equal(git(twins.pc, ['ls-files', '-s']), git(twins.git, ['ls-files', '-s']));
    assertSplitLikeGit(twins);
    // All of it in the new shared index; the index file holds no entries.
    assert.equal(sharedIndexes(twins.git).length, 1, 'oracle');
  });

  test('splitIndex.maxPercentChange=0 and sharedIndexExpire=now: a new shared index each time, the old removed', async () => {
    const config = [
      ['splitIndex.maxPercentChange', '0'],
      ['splitIndex.sharedIndexExpire', 'now'],
    ];
    const twins = await splitTwins(src, 'base', config);
    const before = links(twins);
    const op = { ref: 'small' };
    await compareTwins(twins, { op, run: pc(op), localChanges: false });
    const after = links(twins);
    assert.notEqual(after.git, before.git, 'oracle: a new shared index');
    assert.deepEqual(sharedIndexes(twins.git), [`sharedindex.${after.git}`], 'oracle');
    assert.deepEqual(sharedIndexes(twins.pc), [`sharedindex.${after.pc}`]);
    assertSplitLikeGit(twins, before);
  });

  test('the default expiry (two weeks): a shared index used recently stays, an old one goes', async () => {
    const twins = await splitTwins(src, 'base', [['splitIndex.maxPercentChange', '0']]);
    for (const d of [twins.pc, twins.git]) {
      const old = path.join(d, '.git', 'sharedindex.' + '0'.repeat(39) + '1');
      fs.writeFileSync(old, 'stale');
      const month = (Date.now() - 30 * 86400e3) / 1000;
      fs.utimesSync(old, month, month);
    }
    const before = links(twins);
    const op = { ref: 'small' };
    await compareTwins(twins, { op, run: pc(op), localChanges: false });
    const after = links(twins);
    const expected = (b, a) => [`sharedindex.${b}`, `sharedindex.${a}`].sort();
    assert.deepEqual(sharedIndexes(twins.git), expected(before.git, after.git), 'oracle');
    assert.deepEqual(sharedIndexes(twins.pc), expected(before.pc, after.pc));
    assertSplitLikeGit(twins, before);
  });

  test('a bad splitIndex.sharedIndexExpire is a config error before anything is written', async () => {
    const twins = await splitTwins(src, 'base', [['splitIndex.maxPercentChange', '0']]);
    git(twins.pc, ['config', 'splitIndex.sharedIndexExpire', 'not a date']);
    const index = fs.readFileSync(path.join(twins.pc, '.git', 'index'));
    await assert.rejects(checkout(twins.pc, { ref: 'small', racyWait: false }), (e) => {
      assert.equal(e.code, 'ERR_BAD_CONFIG');
      assert.match(e.message, /sharedIndexExpire/);
      return true;
    });
    assert.ok(fs.readFileSync(path.join(twins.pc, '.git', 'index')).equals(index));
    assert.equal(fs.readFileSync(path.join(twins.pc, 'd0/f0.txt'), 'utf8'), 'file 0\n');
  });

  test('core.splitIndex=false: a split index read is written whole, as git', async () => {
    const twins = await splitTwins(src, 'base');
    for (const d of [twins.pc, twins.git]) git(d, ['config', 'core.splitIndex', 'false']);
    const op = { ref: 'small' };
    await compareTwins(twins, { op, run: pc(op), localChanges: false });
    assert.equal(layout(twins.git).link, null, 'oracle');
    assert.equal(layout(twins.pc).link, null);
    assert.deepEqual(layout(twins.pc).extensions, layout(twins.git).extensions);
    assert.equal(git(twins.pc, ['status', '--porcelain']), '');
  });

  test('core.splitIndex unset: a split index stays split, a full one full', async () => {
    const twins = await makeTwins(src, {
      at: 'base',
      mutate: (d) => git(d, ['update-index', '--split-index']),
    });
    const before = links(twins);
    const op = { ref: 'small' };
    await compareTwins(twins, { op, run: pc(op), localChanges: false });
    assertSplitLikeGit(twins, before);
    const op2 = { ref: 'base' };
    await compareTwins(twins, { op: op2, run: pc(op2), localChanges: false });
    assert.equal(layout(twins.pc).link, null);
    assert.equal(layout(twins.git).link, null, 'oracle');
  });

  test('the entries read are git’s: replaced, deleted and added entries merged', async () => {
    // git writes the changes of a few `update-index` calls as replacements and additions.
    const twins = await splitTwins(src, 'base', [['splitIndex.maxPercentChange', '100']]);
    const d = twins.pc;
    fs.writeFileSync(path.join(d, 'd0/f8.txt'), 'staged\n');
    fs.writeFileSync(path.join(d, 'd2/added.txt'), 'added\n');
    git(d, ['add', 'd0/f8.txt', 'd2/added.txt']);
    git(d, ['rm', '-q', '--cached', 'd1/f9.txt']);
    git(d, ['update-index', '--chmod=+x', 'd3/f11.txt']);
    assert.ok(layout(d).count > 0, 'oracle: the index file holds entries of its own');
    const ours = readIndex(path.join(d, '.git', 'index'));
    const lines = [];
    for (let i = 0; i < ours.entries.count; i++) {
      const mode = ours.entries.modes[i].toString(8);
      lines.push(`${mode} ${ours.entries.oidHex(i)} ${ours.stages[i]}\t${ours.entries.name(i)}`);
    }
    assert.equal(lines.join('\n'), gitOut(d, 'ls-files', '-s'));
    assert.ok(ours.split);
    // And a restore over it keeps the staged changes, as git's checkout-index.
    const restore = { restore: true };
    fs.writeFileSync(path.join(twins.git, 'd0/f8.txt'), 'staged\n');
    fs.writeFileSync(path.join(twins.git, 'd2/added.txt'), 'added\n');
    git(twins.git, ['add', 'd0/f8.txt', 'd2/added.txt']);
    git(twins.git, ['rm', '-q', '--cached', 'd1/f9.txt']);
    git(twins.git, ['update-index', '--chmod=+x', 'd3/f11.txt']);
    await compareTwins(twins, { op: restore, run: pc(restore) });
  });

  test('a sparse index with core.splitIndex=true: refused, as git refuses it', async () => {
    const r = Repo.init('split-sparse');
    r.write('a/f.txt', 'a\n').write('b/c/g.txt', 'g\n').write('t.txt', 't\n');
    r.branch('one', r.commit('one'));
    r.write('b/c/g.txt', 'g2\n');
    r.commit('two');
    git(r.dir, ['checkout', '-q', 'one']);
    git(r.dir, ['sparse-checkout', 'init', '--cone', '--sparse-index']);
    git(r.dir, ['sparse-checkout', 'set', 'a']);
    git(r.dir, ['config', 'core.splitIndex', 'true']);
    const res = gitTry(r.dir, ['checkout', '-q', 'main']);
    assert.match(res.stderr, /cannot use split index with a sparse index/, 'oracle');
    const index = fs.readFileSync(path.join(r.dir, '.git', 'index'));
    await assert.rejects(checkout(r.dir, { ref: 'main', racyWait: false }), (e) => {
      assert.equal(e.code, 'ERR_UNSUPPORTED');
      assert.match(e.message, /cannot use split index with a sparse index/);
      return true;
    });
    assert.ok(fs.readFileSync(path.join(r.dir, '.git', 'index')).equals(index));
    // With the split index off, the sparse index is checked out and stays sparse.
    git(r.dir, ['config', 'core.splitIndex', 'false']);
    await checkout(r.dir, { ref: 'main', racyWait: false });
    assert.match(git(r.dir, ['ls-files', '--sparse', '-s']), /^040000 .*\tb\/$/m);
    assert.equal(git(r.dir, ['status', '--porcelain']), '');
  });

  test('a missing or damaged shared index: ERR_CORRUPT_INDEX, nothing written', async () => {
    const twins = await splitTwins(src, 'base');
    const d = twins.pc;
    const shared = path.join(d, '.git', `sharedindex.${layout(d).link}`);
    const index = fs.readFileSync(path.join(d, '.git', 'index'));
    const kept = fs.readFileSync(shared);
    const tries = [
      [() => fs.rmSync(shared), /shared index .* is missing/],
      [
        () => fs.writeFileSync(shared, Buffer.concat([kept.subarray(0, -21), Buffer.from('x')])),
        /checksum|corrupt/,
      ],
    ];
    for (const [damage, message] of tries) {
      damage();
      assertPcheckoutError(
        () => readIndex(path.join(d, '.git', 'index')),
        'ERR_CORRUPT_INDEX',
        message,
      );
      await assert.rejects(checkout(d, { ref: 'small', racyWait: false }), {
        code: 'ERR_CORRUPT_INDEX',
      });
      assert.ok(fs.readFileSync(path.join(d, '.git', 'index')).equals(index));
      assert.equal(fs.readFileSync(path.join(d, 'd0/f0.txt'), 'utf8'), 'file 0\n');
      assert.ok(!fs.existsSync(path.join(d, '.git', 'index.lock')));
      fs.writeFileSync(shared, kept);
    }
  });
});

describe('EWAH bitmaps (the link extension)', () => {
  test('what is written reads back, runs of empty words included', () => {
    const rand = prng(7);
    for (let round = 0; round < 200; round++) {
      const size = 1 + Math.floor(rand() * 5000);
      const bits = [];
      const density = rand() < 0.5 ? 0.001 : rand();
      for (let i = 0; i < size; i++) if (rand() < density) bits.push(i);
      const buf = writeEwah(bits);
      const read = readEwah(buf, 0, buf.length, size);
      assert.ok(read, `round ${round}`);
      assert.deepEqual(read.bits, bits, `round ${round}`);
      assert.equal(read.end, buf.length);
    }
    // An empty bitmap as git writes one: no bits, one run-length word.
    assert.equal(
      writeEwah([]).toString('hex'),
      '00000000' + '00000001' + '0'.repeat(16) + '00000000',
    );
  });

  test('a bit past the shared index, or a bitmap past its end: malformed', () => {
    const buf = writeEwah([3, 100]);
    assert.equal(readEwah(buf, 0, buf.length, 100), null);
    assert.equal(readEwah(buf, 0, buf.length - 1, 101), null);
    assert.ok(readEwah(buf, 0, buf.length, 101));
  });
});
