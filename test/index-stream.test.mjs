// The index written as it is made (writeIndexFile: natively, a part of entries at a time, the
// checksum last): the same bytes as the index made whole (buildIndex), for every version and
// across the parts' boundaries; git reads it; a write that fails is a coded error. And compared
// as it is made with a file read (indexFileEquals), as a checkout that changed nothing does.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { INTENT_TO_ADD, SKIP_WORKTREE, readIndex } from '../dist/index/read.js';
import {
  STAT_WORDS,
  buildIndex,
  extensionBytes,
  indexFileEquals,
  writeIndexFile,
} from '../dist/index/write.js';
import { loadAddon } from '../dist/addon.js';
import { LockFile } from '../dist/lock.js';
import { EntryList } from '../dist/plan/entries.js';

/** `n` sorted paths in directories of ten, with ids, modes and stat data from a seed. */
function entries(n) {
  const names = [];
  for (let i = 0; i < n; i++)
    names.push(`d${String(Math.floor(i / 10)).padStart(5, '0')}/f${i % 10}-${'x'.repeat(i % 37)}`);
  names.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const list = new EntryList({
    count: n,
    paths: Buffer.from(names.map((p) => `${p}\0`).join('')),
    oids: Buffer.concat(names.map((p) => crypto.createHash('sha1').update(p).digest())),
    modes: Uint32Array.from(names, (_, i) => (i % 7 === 0 ? 0o100755 : 0o100644)),
  });
  const stats = new Uint32Array(n * STAT_WORDS);
  for (let k = 0; k < stats.length; k++) stats[k] = (k * 2654435761) >>> 0;
  for (let i = 0; i < n; i++) stats[i * STAT_WORDS + 6] = list.modes[i];
  return { list, stats };
}

function written(dir, list, stats, options) {
  const file = path.join(dir, 'index');
  const fd = fs.openSync(file, 'w');
  try {
    assert.equal(writeIndexFile(fd, list, stats, options), 0);
  } finally {
    fs.closeSync(fd);
  }
  return fs.readFileSync(file);
}

test('the index written as it is made is the index made whole, every version, across parts', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-index-stream-'));
  try {
    // 8,192 entries a part: 20,005 makes two whole parts and a short last one.
    for (const n of [0, 1, 8192, 20_005]) {
      const { list, stats } = entries(n);
      const extFlags = Uint16Array.from({ length: n }, (_, i) =>
        i % 11 === 0 ? SKIP_WORKTREE : i % 13 === 0 ? INTENT_TO_ADD : 0,
      );
      const extensions = [extensionBytes('ZZZZ', Buffer.from('an extension git skips'))];
      for (const options of [
        { version: 2 },
        { version: 2, extFlags },
        { version: 3, extFlags, extensions },
        { version: 4, extensions },
        { version: 4, extFlags },
      ]) {
        const streamed = written(dir, list, stats, options);
        const whole = buildIndex(list, stats, options);
        assert.ok(
          streamed.equals(whole),
          `${n} entries, ${JSON.stringify(Object.keys(options))} v${options.version}`,
        );
        const back = readIndex(path.join(dir, 'index'));
        assert.equal(back.entries.count, n);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('git reads the index written as it is made', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-index-stream-'));
  try {
    execFileSync('git', ['init', '-q', dir]);
    const { list, stats } = entries(9000);
    for (const version of [2, 4]) {
      const file = path.join(dir, '.git', 'index');
      const fd = fs.openSync(file, 'w');
      assert.equal(writeIndexFile(fd, list, stats, { version }), 0);
      fs.closeSync(fd);
      const listed = execFileSync('git', ['-C', dir, 'ls-files', '-s'], { maxBuffer: 1 << 26 })
        .toString()
        .trimEnd()
        .split('\n');
      assert.equal(listed.length, 9000, `version ${version}`);
      assert.equal(
        listed[0],
        `100755 ${list.oids.subarray(0, 20).toString('hex')} 0\t${list.name(0)}`,
      );
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a write that fails is ERR_IO naming the lock, its errno kept', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-index-stream-'));
  try {
    const { list, stats } = entries(100);
    // A descriptor open for reading only: the write fails with EBADF.
    fs.writeFileSync(path.join(dir, 'ro'), '');
    const ro = fs.openSync(path.join(dir, 'ro'), 'r');
    assert.equal(writeIndexFile(ro, list, stats), os.constants.errno.EBADF);
    fs.closeSync(ro);
    const lock = new LockFile(path.join(dir, 'index'), 'ERR_INDEX_LOCKED');
    try {
      assert.throws(
        () => lock.writeThrough(() => os.constants.errno.ENOSPC),
        (err) =>
          err.code === 'ERR_IO' &&
          err.path === lock.lockPath &&
          /cannot write .*index\.lock: .*\(ENOSPC\)/.test(err.message),
      );
      lock.writeThrough((fd) => writeIndexFile(fd, list, stats));
    } finally {
      lock.rollback();
    }
    assert.equal(fs.existsSync(path.join(dir, 'index.lock')), false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the index compared as it is made with a file read: equal only byte for byte', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-index-equals-'));
  try {
    const addon = loadAddon();
    for (const n of [0, 1, 20_005]) {
      const { list, stats } = entries(n);
      const extensions = [extensionBytes('ZZZZ', Buffer.from('an extension git skips'))];
      for (const options of [{ version: 2 }, { version: 4, extensions }]) {
        const bytes = written(dir, list, stats, options);
        const file = path.join(dir, 'index');
        // A mapping, as the index read is: its pages are dropped as they are compared, and it
        // still reads the same afterwards.
        const mapped = addon.mapFile(file).data;
        assert.equal(indexFileEquals(mapped, list, stats, options), true, `${n} entries`);
        assert.ok(mapped.equals(bytes));
        // Any other Buffer is compared and left as it is.
        const copy = Buffer.from(bytes);
        assert.equal(indexFileEquals(copy, list, stats, options), true);
        assert.ok(copy.equals(bytes), 'a Buffer not mapped lost its bytes');
        // Another version, other extensions: not the same file.
        assert.equal(indexFileEquals(mapped, list, stats, { version: 3, extensions: [] }), false);
        if (n === 0) continue;
        // A stat word changed in the first part, or in the last one.
        for (const i of [0, n - 1]) {
          const other = stats.slice();
          other[i * STAT_WORDS + 1] ^= 1;
          assert.equal(indexFileEquals(mapped, list, other, options), false, `entry ${i}`);
        }
        // Shorter or longer than what is made, or written with index.skipHash (a zero checksum).
        assert.equal(
          indexFileEquals(bytes.subarray(0, bytes.length - 1), list, stats, options),
          false,
        );
        assert.equal(
          indexFileEquals(Buffer.concat([bytes, Buffer.alloc(1)]), list, stats, options),
          false,
        );
        const skipped = Buffer.from(bytes);
        skipped.fill(0, skipped.length - 20);
        assert.equal(indexFileEquals(skipped, list, stats, options), false);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
