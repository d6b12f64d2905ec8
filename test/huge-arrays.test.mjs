// Arrays of 2 MiB and more that the addon hands out live in memory of huge pages they own
// (native/binding/arrays.h), unmapped when collected: they must hold exactly what the smaller
// ones, in V8's memory, hold.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { readIndex } from '../dist/index/read.js';
import { STAT_WORDS, buildIndex, newStats } from '../dist/index/write.js';
import { joinRows } from '../dist/plan/rows.js';
import { entryList } from './helpers/lists.mjs';

function list(n, tag) {
  return entryList(
    Array.from({ length: n }, (_, i) => `dir${String(i).padStart(7, '0')}/file.txt`),
    tag,
  );
}

test('arrays above 2 MiB from the addon hold what the smaller ones hold', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-huge-'));
  try {
    // 80,000 entries: their stat words (3.2 MB), ids (1.6 MB), paths (2 MB) and starts cross
    // the 2 MiB line; 1,000 stay below it.
    for (const n of [1000, 80_000]) {
      const entries = list(n, 'a');
      const stats = new Uint32Array(n * STAT_WORDS);
      for (let k = 0; k < stats.length; k++) stats[k] = (k * 40503) >>> 0;
      for (let i = 0; i < n; i++) stats[i * STAT_WORDS + 6] = 0o100644;
      const file = path.join(dir, 'index');
      fs.writeFileSync(file, buildIndex(entries, stats));
      const back = readIndex(file);
      assert.equal(back.entries.count, n);
      assert.ok(
        Buffer.from(back.stats.buffer, back.stats.byteOffset, back.stats.byteLength).equals(
          Buffer.from(stats.buffer),
        ),
        `stats of ${n}`,
      );
      assert.ok(back.entries.oids.subarray(0, 20 * n).equals(entries.oids), `ids of ${n}`);
      assert.equal(back.entries.name(n - 1), entries.name(n - 1));
      // Rows of two lists that differ in every id: one row per path, nothing the same.
      const rows = joinRows(back.entries, back.stages, list(n, 'b'), null);
      assert.equal(rows.count, n);
      assert.ok(rows.i.every((v, k) => v === k));
      assert.ok(rows.h.every((v, k) => v === k));
      assert.ok(rows.m.every((v) => v === -1));
      assert.ok(rows.same.every((v) => v === 0));
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('newStats: zeroed stat records of the size asked for, below and above 2 MiB', () => {
  for (const n of [0, 10, 80_000]) {
    const stats = newStats(n);
    assert.ok(stats instanceof Uint32Array);
    assert.equal(stats.length, n * STAT_WORDS);
    assert.ok(stats.every((w) => w === 0));
    if (n > 0) {
      stats[stats.length - 1] = 7;
      assert.equal(stats[stats.length - 1], 7);
    }
  }
  assert.throws(() => newStats(-1), /count/);
});
