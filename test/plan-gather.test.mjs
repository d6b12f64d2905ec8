// The plan's result gathered from the index (I) and the target (M): copied run by run, or —
// where it is one of them whole, or holds entry for entry what the target holds (a switch
// keeps most entries from the index, the target's too) — that list itself, not a copy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STAT_WORDS } from '../dist/index/write.js';
import { gatherEntries, mergeStats } from '../dist/plan/rows.js';
import { entryList as list } from './helpers/lists.mjs';

const entry = (l, k) => [l.name(k), l.modes[k], l.oid(k).toString('hex')];
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

test('the stat data after the write: the kept words, the written ones where written', () => {
  const W = STAT_WORDS;
  for (const n of [0, 3, 60_000]) {
    const kept = Uint32Array.from({ length: n * W }, (_, k) => k + 1);
    const written = Uint32Array.from({ length: n * W }, (_, k) => 0x80000000 + k);
    const write = Uint8Array.from({ length: n }, (_, k) => (k % 3 === 1 ? 1 : 0));
    const merged = mergeStats(kept, written, write);
    assert.equal(merged.length, n * W);
    for (let k = 0; k < n; k++) {
      const want = write[k] ? written : kept;
      for (let w = 0; w < W; w++) assert.equal(merged[k * W + w], want[k * W + w]);
    }
    assert.equal(kept[0 * W], n > 0 ? 1 : undefined, 'the kept words are not changed');
  }
});
