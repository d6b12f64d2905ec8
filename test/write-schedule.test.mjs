// The writers' schedule on a network filesystem (src/write/schedule.ts), checked on plans, with
// no timing: files grouped by directory, big directories first and cut into pieces that share
// their directory's group, small directories packed whole into chunks of their own; directory
// levels interleaved by parent. Then the native scheduler honours the groups: with one writer
// per directory, a real parallel write never has two chunks of one directory in flight.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { loadAddon } from '../dist/addon.js';
import { EntryList } from '../dist/plan/entries.js';
import {
  byDirectory,
  interleaveByParent,
  makeChunks,
  spreadByDirectory,
} from '../dist/write/schedule.js';
import { Repo, tmpDir } from './helpers/git.mjs';

function listOf(paths) {
  const bufs = paths.map((p) => Buffer.from(`${p}\0`, 'latin1'));
  return new EntryList({
    count: paths.length,
    paths: Buffer.concat(bufs),
    oids: Buffer.alloc(20 * paths.length),
    modes: new Uint32Array(paths.length).fill(0o100644),
  });
}

const tasks = (n, size = 100) =>
  Array.from({ length: n }, (_, index) => ({ index, pack: 0, offset: index, size }));

const dirOf = (p) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');

/** A tree shaped like a real project: one big directory, two middling, many small. */
function projectPaths() {
  const paths = [];
  for (let i = 0; i < 200; i++) paths.push(`assets/syntaxes/s${i}.yml`);
  for (let i = 0; i < 70; i++) paths.push(`tests/highlighted/h${i}.txt`);
  for (let i = 0; i < 60; i++) paths.push(`src/bin/b${i}.rs`);
  for (let d = 0; d < 120; d++) for (let i = 0; i < 1 + (d % 5); i++) paths.push(`x/d${d}/f${i}`);
  paths.push('README.md', 'Cargo.toml');
  return paths;
}

test('byDirectory groups files by parent in order of first appearance', () => {
  const entries = listOf(['a/x', 'b/y', 'a/z', 'top', 'a/b/c', 'other']);
  const groups = byDirectory(entries, tasks(6));
  assert.deepEqual(
    groups.map((g) => g.map((f) => f.index)),
    [[0, 2], [1], [3, 5], [4]],
  );
});

test('spreadByDirectory: every file once; big directories first, largest first, in pieces of their group', () => {
  const paths = projectPaths();
  const entries = listOf(paths);
  const files = tasks(paths.length);
  const { chunks, groups, perDir } = spreadByDirectory(entries, files, { threads: 16, perDir: 2 });
  assert.equal(perDir, 2);
  assert.equal(groups.length, chunks.length);
  // Every file exactly once.
  const seen = chunks.flat().map((f) => f.index);
  assert.equal(seen.length, files.length);
  assert.equal(new Set(seen).size, files.length);
  // A chunk's directories: one for a piece of a big directory.
  const dirsOf = (chunk) => new Set(chunk.map((f) => dirOf(paths[f.index])));
  const byGroup = new Map();
  chunks.forEach((chunk, k) => {
    const g = groups[k];
    assert.ok(g < chunks.length, 'a group is below the number of chunks');
    if (!byGroup.has(g)) byGroup.set(g, []);
    byGroup.get(g).push(chunk);
  });
  // No directory in two groups: chunks of different groups never share a directory.
  const groupOfDir = new Map();
  for (const [g, list] of byGroup) {
    for (const chunk of list) {
      for (const d of dirsOf(chunk)) {
        assert.ok(!groupOfDir.has(d) || groupOfDir.get(d) === g, `${d} is in one group`);
        groupOfDir.set(d, g);
      }
    }
  }
  // The big directories come first, largest first, each in consecutive pieces of one directory.
  const order = [];
  for (const chunk of chunks) {
    const ds = [...dirsOf(chunk)];
    if (ds.length === 1 && order.at(-1) !== ds[0]) order.push(ds[0]);
  }
  assert.deepEqual(order.slice(0, 3), ['assets/syntaxes', 'tests/highlighted', 'src/bin']);
  const bigPieces = byGroup.get(groups[0]);
  assert.ok(bigPieces.length > 1, 'the big directory is cut into pieces');
  assert.ok(bigPieces.every((c) => dirsOf(c).size === 1));
  // Small directories are kept whole: each of x/dN is in one chunk.
  const chunkOfDir = new Map();
  chunks.forEach((chunk, k) => {
    for (const f of chunk) {
      const d = dirOf(paths[f.index]);
      if (!d.startsWith('x/')) continue;
      assert.ok(!chunkOfDir.has(d) || chunkOfDir.get(d) === k, `${d} stays in one chunk`);
      chunkOfDir.set(d, k);
    }
  });
  // Within a directory the files keep their (pack) order.
  for (const chunk of chunks) {
    const idx = chunk.map((f) => f.index);
    const byDir = new Map();
    for (const i of idx) {
      const d = dirOf(paths[i]);
      const last = byDir.get(d) ?? -1;
      assert.ok(i > last, 'pack order within a directory');
      byDir.set(d, i);
    }
  }
});

test('makeChunks: runs of pack order of about equal weight', () => {
  const files = tasks(1000, 4096);
  const chunks = makeChunks(files, 16);
  assert.deepEqual(
    chunks.flat().map((f) => f.index),
    files.map((f) => f.index),
  );
  assert.ok(chunks.length >= 15 && chunks.length <= 17, `${chunks.length} chunks`);
});

test('interleaveByParent: neighbours have different parents while they can', () => {
  const level = ['a/1', 'a/2', 'a/3', 'b/1', 'b/2', 'c/1'];
  const out = interleaveByParent(level);
  assert.deepEqual(out, ['a/1', 'b/1', 'c/1', 'a/2', 'b/2', 'a/3']);
  assert.deepEqual(interleaveByParent(['x', 'y']), ['x', 'y']);
  assert.deepEqual(interleaveByParent([]), []);
});

test('the native scheduler never runs two chunks of one group at once (perGroup 1)', async (t) => {
  const addon = loadAddon();
  const repo = Repo.init('schedule');
  for (const p of projectPaths()) repo.write(p, `${p}\n`);
  repo.git('add', '-A');
  repo.git('commit', '-qm', 'tree');
  const lines = repo.git('ls-files', '-s', '-z').split('\0').filter(Boolean);
  const out = tmpDir('schedule-out');
  const listed = lines.map((l) => {
    const [meta, p] = l.split('\t');
    return { p, oid: meta.split(' ')[1] };
  });
  for (const d of new Set(listed.map(({ p }) => dirOf(p)).filter(Boolean)))
    fs.mkdirSync(path.join(out, d), { recursive: true });
  const entries = new EntryList({
    count: listed.length,
    paths: Buffer.concat(listed.map(({ p }) => Buffer.from(`${p}\0`))),
    oids: Buffer.concat(listed.map(({ oid }) => Buffer.from(oid, 'hex'))),
    modes: new Uint32Array(listed.length).fill(0o100644),
  });
  const files = listed.map((_, index) => ({ index, pack: 0, offset: index, size: 10 }));
  const { chunks, groups } = spreadByDirectory(entries, files, { threads: 8, perDir: 1 });
  const readers = Array.from(
    { length: 8 },
    () => new addon.Odb([path.join(repo.gitDir, 'objects')], 0),
  );
  t.after(() => readers.forEach((r) => r.close()));
  const requests = chunks.map((chunk) => ({
    root: out,
    paths: Buffer.concat(chunk.map((f) => Buffer.from(`${listed[f.index].p}\0`))),
    oids: Buffer.concat(chunk.map((f) => Buffer.from(listed[f.index].oid, 'hex'))),
    modes: new Uint32Array(chunk.length).fill(0o100644),
    sizes: new Float64Array(chunk.length).fill(10),
    flags: new Uint8Array(chunk.length),
    streamThreshold: 1 << 30,
    sync: 0,
  }));
  const cancel = new Int32Array(new SharedArrayBuffer(4));
  const finishedAt = [];
  let written = 0;
  await addon.writeParallel(
    readers,
    requests,
    cancel,
    (k, res) => {
      assert.ok(!('failure' in res), JSON.stringify(res));
      finishedAt.push(k);
      written += res.status.length;
    },
    groups,
    1,
  );
  assert.equal(written, files.length);
  for (const { p } of listed) assert.equal(fs.readFileSync(path.join(out, p), 'utf8'), `${p}\n`, p);
  // Pieces of one group, one at a time and in list order: they finish in list order too.
  const pieces = [...groups.keys()].filter((k) => groups[k] === groups[0]);
  const finishOrder = finishedAt.filter((k) => groups[k] === groups[0]);
  assert.deepEqual(finishOrder, pieces);
  // A bad group table is refused, not read out of bounds.
  assert.throws(() =>
    addon.writeParallel(readers, requests, cancel, () => {}, new Uint32Array(1), 1),
  );
  const tooBig = new Uint32Array(groups.length).fill(groups.length);
  assert.throws(() => addon.writeParallel(readers, requests, cancel, () => {}, tooBig, 1));
});
