// An index file's mapping gives its pages back once parsed (releaseMapped): the bytes stay
// readable, and no other Buffer is ever touched by the advice (dropping an anonymous page
// would lose its bytes).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadAddon } from '../dist/addon.js';
import { readIndex } from '../dist/index/read.js';
import { STAT_WORDS, buildIndex } from '../dist/index/write.js';
import { entryList } from './helpers/lists.mjs';

test('a mapped index file is released and still reads the same; other Buffers are left alone', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-release-'));
  try {
    const n = 50_000;
    const names = Array.from({ length: n }, (_, i) => `d${String(i).padStart(6, '0')}/f`);
    const list = entryList(names);
    const stats = new Uint32Array(n * STAT_WORDS);
    for (let i = 0; i < n; i++) stats[i * STAT_WORDS + 6] = 0o100644;
    const file = path.join(dir, 'index');
    const bytes = buildIndex(list, stats);
    fs.writeFileSync(file, bytes);
    const addon = loadAddon();
    const mapped = addon.mapFile(file);
    const before = crypto.createHash('sha1').update(mapped.data).digest('hex');
    assert.equal(addon.releaseMapped(mapped.data), true);
    assert.equal(crypto.createHash('sha1').update(mapped.data).digest('hex'), before);
    assert.ok(mapped.data.equals(bytes));
    // Not a mapping of mapFile's (or only part of one): nothing done, nothing lost.
    const copy = Buffer.from(bytes);
    assert.equal(addon.releaseMapped(copy), false);
    assert.ok(copy.equals(bytes));
    assert.equal(addon.releaseMapped(mapped.data.subarray(0, 4096)), false);
    // readIndex releases its own mapping and reads every entry.
    const idx = readIndex(file);
    assert.equal(idx.entries.count, n);
    assert.equal(idx.entries.name(n - 1), names[n - 1]);
    assert.ok(idx.raw.equals(bytes));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
