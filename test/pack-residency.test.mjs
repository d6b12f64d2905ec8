// A pack's mapping stays small in the process however its objects are spread: a reader that
// jumps to a new part of the pack counts the pages the fault maps around it (the kernel's
// fault_around_bytes, 64 KiB by default), and the mapping's pages are dropped every 32 MB so
// counted. Before, each small object counted one page: a 1% switch of a million files read
// 15,000 small blobs spread over a 1 GB pack and kept ~300 MB of it resident.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { loadAddon } from '../dist/addon.js';
import { Repo, git } from './helpers/git.mjs';

/** The resident KB of this process's mappings of files ending in `suffix` (/proc/self/smaps). */
function residentOf(suffix) {
  let kb = 0;
  let inside = false;
  for (const line of fs.readFileSync('/proc/self/smaps', 'latin1').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inside = line.trimEnd().endsWith(suffix);
    else if (inside && line.startsWith('Rss:')) kb += Number(line.split(/\s+/)[1]);
  }
  return kb;
}

test('small objects read from all over a 96 MB pack keep little of it resident', () => {
  const repo = Repo.init('residency');
  // 2,000 blobs of 48 KB that do not compress, each followed by a small one: a pack in this
  // order (fast-import writes what it is given; no small blob is a delta).
  const chunks = [];
  const small = [];
  for (let i = 0; i < 2000; i++) {
    const big = crypto.randomBytes(48 << 10);
    chunks.push(Buffer.from(`blob\ndata ${big.length}\n`), big, Buffer.from('\n'));
    const text = Buffer.from(`a small blob, number ${i}, of a few dozen bytes\n`);
    chunks.push(Buffer.from(`blob\ndata ${text.length}\n`), text, Buffer.from('\n'));
    const header = Buffer.from(`blob ${text.length}\0`);
    small.push(crypto.createHash('sha1').update(header).update(text).digest());
  }
  git(repo.dir, ['fast-import', '--quiet'], { input: Buffer.concat(chunks) });
  const packDir = path.join(repo.dir, '.git', 'objects', 'pack');
  const pack = fs.readdirSync(packDir).find((f) => f.endsWith('.pack'));
  assert.ok(fs.statSync(path.join(packDir, pack)).size > 96e6);
  const { Odb } = loadAddon();
  const odb = new Odb([path.join(repo.dir, '.git', 'objects')], 1 << 20);
  try {
    for (let i = 0; i < small.length; i++) {
      const { type, data } = odb.read(small[i]);
      assert.equal(type, 'blob');
      assert.equal(data.toString(), `a small blob, number ${i}, of a few dozen bytes\n`);
    }
    // Every page of the pack was mapped around some read; at most ~32 MB stay at any time.
    const kb = residentOf(pack);
    assert.ok(kb < 40 << 10, `${kb >> 10} MB of the pack resident`);
  } finally {
    odb.close();
  }
});
