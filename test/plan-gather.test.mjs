// The plan's result gathered from the index (I) and the target (M): copied run by run, or —
// where it is one of them whole, or holds entry for entry what the target holds (a switch
// keeps most entries from the index, the target's too) — that list itself, not a copy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STAT_WORDS } from '../dist/index/write.js';
import { dirsOf, gatherEntries, gatherStats } from '../dist/plan/rows.js';
import { entryList as list } from './helpers/lists.mjs';

const entry = (l, k) => [l.name(k), l.modes[k], l.oid(k).toString('hex')];
const latin1 = (s) => Buffer.from(s).toString('latin1');
const all = (l) => Array.from({ length: l.count }, (_, k) => entry(l, k));

test('a result holding the target entry for entry is the target itself', () => {
  const I = list(['a', 'b', 'c', 'd']);
  const M = list(['a', 'b', 'c', 'd', 'e']);
  // a, b and d kept from the index (the target's too), c and e the target's.
  const src = Uint8Array.from([0, 0, 1, 0, 1]);
  const idx = Int32Array.from([0, 1, 2, 3, 4]);
  assert.equal(gatherEntries(src, idx, I, M), M);
});

test("a kept entry that is not the target's makes a copy with it", () => {
  const I = list(['a', 'b', 'c'], 'local ');
  const M = list(['a', 'b', 'c']);
  const src = Uint8Array.from([1, 0, 1]); // b kept: staged, not the target's
  const idx = Int32Array.from([0, 1, 2]);
  const result = gatherEntries(src, idx, I, M);
  assert.notEqual(result, M);
  assert.deepEqual(all(result), [entry(M, 0), entry(I, 1), entry(M, 2)]);
  // Another mode, or another path of the same length, is not the target's either.
  const modes = list(['a', 'b', 'c']);
  modes.modes[1] = 0o100755;
  assert.notEqual(gatherEntries(src, idx, modes, M), M);
  const renamed = list(['a', 'x', 'c']);
  renamed.oids.set(M.oid(1), 20);
  assert.deepEqual(all(gatherEntries(src, idx, renamed, M))[1], [
    'x',
    0o100644,
    M.oid(1).toString('hex'),
  ]);
  // Fewer entries than the target's: a copy.
  const short = gatherEntries(Uint8Array.from([0, 1]), Int32Array.from([0, 1]), list(['a']), M);
  assert.notEqual(short, M);
  assert.deepEqual(all(short), [entry(M, 0), entry(M, 1)]);
});

test('one list whole and in order is that list', () => {
  const I = list(['a', 'b']);
  const M = list(['a', 'c']);
  assert.equal(gatherEntries(Uint8Array.from([0, 0]), Int32Array.from([0, 1]), I, M), I);
  assert.equal(gatherEntries(Uint8Array.from([1, 1]), Int32Array.from([0, 1]), I, M), M);
});

test("the kept entries' stat data, gathered as the writes begin: zeros where written or new", () => {
  const W = STAT_WORDS;
  for (const n of [0, 3, 60_000]) {
    // Old index stat data (n entries) and a probe's (n / 2 slots).
    const old = Uint32Array.from({ length: n * W }, (_, k) => k + 1);
    const fresh = Uint32Array.from({ length: Math.ceil(n / 2) * W }, (_, k) => 0x80000000 + k);
    // Entry k: written (k % 5 == 1), new from the target (k % 5 == 2), hashed clean with the
    // probe's slot (k % 5 == 3), smudged (k % 5 == 4), else kept as it was.
    const src = Uint8Array.from({ length: n }, (_, k) => (k % 5 === 2 ? 1 : 0));
    const write = Uint8Array.from({ length: n }, (_, k) => (k % 5 === 1 ? 1 : 0));
    const idx = Int32Array.from({ length: n }, (_, k) => k);
    const freshSlot = Int32Array.from({ length: n }, (_, k) => (k % 5 === 3 ? k >> 1 : -1));
    const smudge = Uint8Array.from({ length: n }, (_, k) => (k % 5 === 4 ? 1 : 0));
    const stats = gatherStats({ src, idx, write, freshSlot, smudge }, old, fresh);
    assert.equal(stats.length, n * W);
    for (let k = 0; k < n; k++) {
      for (let w = 0; w < W; w++) {
        const got = stats[k * W + w];
        if (k % 5 === 1 || k % 5 === 2) assert.equal(got, 0, `entry ${k}: none yet`);
        else if (k % 5 === 3) assert.equal(got, fresh[(k >> 1) * W + w], `entry ${k}: the probe's`);
        else if (k % 5 === 4 && w === 9) assert.equal(got, 0, `entry ${k}: size smudged`);
        else assert.equal(got, old[k * W + w], `entry ${k}: kept`);
      }
    }
  }
});

// The directories a list's entries need (dirsOf: the writer makes them, the watch arms them):
// one pass over a sorted list, the set's way over any other; both give each directory once,
// parents first, in the order their first entry needs them.
test('dirsOf: each directory once, parents first, sorted or not', () => {
  const names = [
    '.gitattributes',
    'a-b/x',
    'a.txt',
    'a/b/c/deep',
    'a/b/f',
    'a/b0/g',
    'a/bc/h',
    'a/g',
    'a/x/y/z/w',
    'ab/c',
    'b',
    'c/d/e',
    'c/f',
    'z/\u00e9/1',
  ];
  const expected = (order) => {
    const out = [];
    for (const n of order) {
      const parts = n.split('/').slice(0, -1);
      for (let k = 1; k <= parts.length; k++) {
        const d = parts.slice(0, k).join('/');
        if (!out.includes(d)) out.push(d);
      }
    }
    return out;
  };
  const sorted = [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  assert.deepEqual(sorted, names, 'the list is in byte order');
  assert.deepEqual(dirsOf(list(sorted), null), expected(sorted).map(latin1));
  const shuffled = [names[8], names[0], names[12], names[3], ...names.slice(4, 8), names[1]];
  assert.deepEqual(dirsOf(list(shuffled), null), expected(shuffled).map(latin1));
  // A selection: only the selected entries' directories.
  const select = Uint8Array.from(sorted, (n) => (n.startsWith('a/b') || n === 'c/f' ? 1 : 0));
  const picked = sorted.filter((_, k) => select[k] === 1);
  assert.deepEqual(dirsOf(list(sorted), select), expected(picked).map(latin1));
});
