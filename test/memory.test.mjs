// Memory between calls: glibc's trim walks every malloc arena under its lock, the host's main
// one too, so a call trims only when the threads' arenas (where pcheckout's threads allocate)
// hold enough free memory to be worth the host's stall (src/resources.ts, TRIM_WORTHWHILE).
// The count comes from malloc_info; releaseMemory(min) trims only at or above min.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { loadAddon } from '../dist/addon.js';
import { materialize } from '../dist/index.js';
import { Repo, git, tmpPath } from './helpers/git.mjs';

describe('memory between calls', () => {
  test('the threads’ arenas’ free memory is counted, and trimmed only at a bound', async (t) => {
    if (!process.report.getReport().header.glibcVersionRuntime)
      return t.skip('not glibc: no malloc_info, no trim');
    const addon = loadAddon();
    const before = addon.threadArenasFree();
    assert.ok(Number.isInteger(before) && before >= 0, String(before));
    // A call on the pool: its threads allocate in their own arenas and free it all at the end.
    const repo = Repo.init('memory');
    for (let i = 0; i < 600; i++) {
      const dir = repo.abs(`d${i % 20}`);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `f${i}.txt`), `line ${i}\n`.repeat(200 + i));
    }
    git(repo.dir, ['add', '-A']);
    git(repo.dir, ['commit', '-q', '-m', 'one']);
    git(repo.dir, ['gc', '-q']);
    const s = await materialize(repo.dir, tmpPath('t'), { racyWait: false, threshold: 0 });
    assert.equal(s.files, 600);
    const free = addon.threadArenasFree();
    assert.ok(free > 0, `free bytes in the threads' arenas after a call: ${free}`);
    // Below the bound asked for it returns at once, false; at the bound it trims (true: there
    // is free memory to give back).
    assert.equal(addon.releaseMemory(free + 1024 * 1024 * 1024), false);
    assert.equal(addon.releaseMemory(0), true);
    for (const bad of [-1, Number.NaN, 2 ** 60, '1', {}]) {
      assert.throws(() => addon.releaseMemory(bad), TypeError, String(bad));
    }
  });
});
