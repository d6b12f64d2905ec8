// An index's paths are checked in one pass that skips the leading directories a path shares
// with the one before (native/plan/path_rules.h, verify_paths): it must refuse exactly the
// first path the one-path check refuses, with the same rule, whatever the list holds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadAddon } from '../dist/addon.js';
import { protectionBits } from '../dist/plan/paths.js';

function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const PIECES = ['a', 'b', 'src', '.git', '.GIT', 'git~1', '.gitmodules', '.', '..', '', 'x\\y'];
const PIECES_OK = ['a', 'b', 'src', 'lib', 'x.c', '.github', 'gitx', 'a.b'];

/** A sorted list of `n` paths, mostly safe, a bad component now and then at any depth. */
function list(rand, n, badEvery) {
  const seen = new Set();
  while (seen.size < n) {
    const depth = 1 + Math.floor(rand() * 5);
    const parts = [];
    for (let d = 0; d < depth; d++) {
      const pool = rand() < 1 / badEvery ? PIECES : PIECES_OK;
      parts.push(pool[Math.floor(rand() * pool.length)]);
    }
    seen.add(parts.join('/'));
  }
  const names = [...seen].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  const modes = Uint32Array.from(names, () => (rand() < 0.1 ? 0o120000 : 0o100644));
  return { names, modes };
}

function pack(names) {
  const bufs = names.map((n) => Buffer.from(`${n}\0`, 'latin1'));
  const starts = new Uint32Array(names.length + 1);
  for (let i = 0; i < bufs.length; i++) starts[i + 1] = starts[i] + bufs[i].length;
  return { paths: Buffer.concat(bufs), starts };
}

test('the one-pass check refuses the first path the one-path check refuses, by the same rule', () => {
  const addon = loadAddon();
  const rand = prng(20261207);
  let refused = 0;
  for (let round = 0; round < 400; round++) {
    const { names, modes } = list(rand, 20 + Math.floor(rand() * 60), 4 + (round % 40));
    const { paths, starts } = pack(names);
    for (const protect of [
      { ntfs: true, hfs: false },
      { ntfs: true, hfs: true },
      { ntfs: false, hfs: false },
    ]) {
      const bits = protectionBits(protect);
      let first = null;
      for (let i = 0; i < names.length && first === null; i++) {
        const v = addon.verifyPath(Buffer.from(names[i], 'latin1'), modes[i], bits);
        if (v !== null) first = { index: i, rule: v.rule };
      }
      const batch = addon.verifyPaths(paths, modes, bits, starts);
      const plain = addon.verifyPaths(paths, modes, bits);
      for (const got of [batch, plain]) {
        if (first === null) assert.equal(got, null, names.join(' | '));
        else assert.deepEqual({ index: got?.index, rule: got?.rule }, first, names.join(' | '));
      }
      if (first !== null) refused++;
    }
  }
  assert.ok(refused > 100, `the lists exercised refusals (${refused})`);
});

test('a symlinked .gitmodules under a shared directory, and a bad component after one', () => {
  const addon = loadAddon();
  const bits = protectionBits({ ntfs: true, hfs: false });
  const cases = [
    [['sub/a', 'sub/.gitmodules'], [0o100644, 0o120000], 1, 'symlink-gitmodules'],
    [['d/x', 'd/.git/y'], [0o100644, 0o100644], 1, 'dotgit'],
    [['d/e/x', 'd/e/git~1/y'], [0o100644, 0o100644], 1, 'ntfs-dotgit'],
    [['d/e/x', 'd/e/x/..'], [0o100644, 0o100644], 1, 'dotdot'],
    [['d/e/x', 'd/e//x'], [0o100644, 0o100644], 1, 'slash'],
  ];
  for (const [names, modes, index, rule] of cases) {
    const { paths, starts } = pack(names);
    const got = addon.verifyPaths(paths, Uint32Array.from(modes), bits, starts);
    assert.deepEqual({ index: got?.index, rule: got?.rule }, { index, rule }, names.join(' | '));
  }
  const { paths } = pack(['a', 'b']);
  assert.throws(
    () => addon.verifyPaths(paths, new Uint32Array(2), bits, Uint32Array.of(0, 3, 4)),
    /starts do not match/,
  );
});
