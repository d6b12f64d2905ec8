// Durability modes (`fsync: 'none' | 'file' | 'batch'`), proved from the system calls: each
// checkout runs in a child under `strace -f`, and the trace must show every file written and every
// removal covered by the barrier (syncfs, or fsyncs of the files and directories) before
// index.lock is renamed over the index — and with `none`, no sync at all and four calls per file.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { Repo, freshClone, gitEnv, tmpPath } from './helpers/git.mjs';
import { DIST_INDEX } from './helpers/run.mjs';

const STRACE = spawnSync('strace', ['-V']).status === 0;
const skip = STRACE ? false : 'strace is not installed (apt-get install strace)';
if (skip) process.stdout.write(`# fsync tests skipped: ${skip}\n`);

const CALLS = [
  'openat',
  'openat2',
  'dup',
  'write',
  'fstat',
  'newfstatat',
  'sync_file_range',
  'syncfs',
  'fsync',
  'fdatasync',
  'close',
  'rename',
  'unlink',
  'unlinkat',
  'rmdir',
];

const CHILD = `
const { checkout } = await import(process.env.PCHECKOUT_TEST_DIST);
const { repo, opts } = JSON.parse(process.env.PCHECKOUT_TEST_ARGS);
const summary = await checkout(repo, opts);
process.stdout.write('@@RESULT@@' + JSON.stringify(summary) + '\\n');
`;

/** checkout() in a child under strace: the summary and the system calls, in completion order. */
function traced(repo, opts) {
  const out = tmpPath('strace');
  const r = spawnSync(
    'strace',
    ['-f', '-qq', '-o', out, '-e', `trace=${CALLS.join(',')}`, process.execPath].concat([
      '--input-type=module',
      '-e',
      CHILD,
    ]),
    {
      env: {
        ...gitEnv,
        PCHECKOUT_TEST_DIST: DIST_INDEX,
        PCHECKOUT_TEST_ARGS: JSON.stringify({ repo, opts }),
      },
      encoding: 'utf8',
      maxBuffer: 1 << 26,
      timeout: 120_000,
    },
  );
  assert.equal(r.status, 0, `child failed: ${r.stderr}`);
  const line = r.stdout.split('\n').find((l) => l.startsWith('@@RESULT@@'));
  const summary = JSON.parse(line.slice('@@RESULT@@'.length));
  return { summary, calls: parseTrace(fs.readFileSync(out, 'utf8')) };
}

/** strace -f lines to { pid, name, args, ret }; an interrupted call is joined with its resumption. */
function parseTrace(text) {
  const pending = new Map();
  const calls = [];
  for (const raw of text.split('\n')) {
    const m = /^(\d+) +(.*)$/.exec(raw);
    if (!m) continue;
    const pid = m[1];
    let rest = m[2];
    if (rest.endsWith('<unfinished ...>')) {
      rest = rest.slice(0, -'<unfinished ...>'.length);
      // A close frees its fd as it starts: another thread may get the number back before this
      // close is reported done, so a close counts where it began.
      const close = /^close\((\d+)/.exec(rest);
      if (close) calls.push({ pid, name: 'close', args: close[1], ret: 0 });
      pending.set(pid, close ? null : rest);
      continue;
    }
    const resumed = /^<\.\.\. \w+ resumed>(.*)$/.exec(rest);
    if (resumed) {
      const start = pending.get(pid);
      pending.delete(pid);
      if (start === null) continue; // a close, counted where it began
      rest = (start ?? '') + resumed[1];
    }
    const call = /^(\w+)\((.*)\) += (-?\d+)/.exec(rest);
    if (call) calls.push({ pid, name: call[1], args: call[2], ret: Number(call[3]) });
  }
  return calls;
}

const firstArg = (args) => Number(args.split(',')[0]);
const quoted = (args) => [...args.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);

/**
 * Reads a trace: the worktree files created (relative path, the calls on their fd between open
 * and close, when they were closed), the directories fsynced through the barrier, the removals,
 * the syncfs calls and the index's rename, each with its position in the trace.
 */
function analyse(calls, worktree) {
  const open = new Map();
  const files = [];
  const dirsSynced = new Set();
  const removals = [];
  const syncfs = [];
  let rename = -1;
  let lockFd = -1;
  let lockFsynced = -1;
  let gitDirFd = -1;
  let gitDirFsynced = -1;
  const rootFds = new Set(); // the worktree's root opened as a directory handle
  calls.forEach((c, seq) => {
    const fd = firstArg(c.args);
    if (c.name === 'openat2' && c.ret >= 0) {
      const rel = quoted(c.args)[0];
      const creates = c.args.includes('O_CREAT');
      open.set(c.ret, { rel, creates, calls: [], seq });
    } else if (c.name === 'dup' && c.ret >= 0) {
      open.set(c.ret, { rel: '.', creates: false, calls: [], seq });
    } else if (c.name === 'openat' && c.ret >= 0) {
      const p = quoted(c.args)[0];
      if (p === path.join(worktree, '.git', 'index.lock')) lockFd = c.ret;
      if (p === path.join(worktree, '.git')) gitDirFd = c.ret;
      if (p === worktree) rootFds.add(c.ret);
    } else if (c.name === 'fsync' && fd === lockFd) {
      lockFsynced = seq;
    } else if (c.name === 'fsync' && fd === gitDirFd) {
      gitDirFsynced = seq;
    } else if (c.name === 'close') {
      const f = open.get(fd);
      if (fd === lockFd) lockFd = -1;
      if (fd === gitDirFd) gitDirFd = -1;
      rootFds.delete(fd);
      if (!f) return;
      open.delete(fd);
      f.calls.push('close');
      if (f.creates) files.push({ ...f, closed: seq });
      else if (f.calls.includes('fsync')) dirsSynced.add(f.rel);
    } else if (c.name === 'syncfs') {
      syncfs.push(seq);
    } else if (c.name === 'rename') {
      const [from, to] = quoted(c.args);
      if (from.endsWith('/.git/index.lock') && to.endsWith('/.git/index')) rename = seq;
    } else if ((c.name === 'unlink' || c.name === 'rmdir') && c.ret === 0) {
      const p = quoted(c.args)[0];
      if (p.startsWith(`${worktree}/`)) removals.push({ rel: p.slice(worktree.length + 1), seq });
    } else if (c.name === 'unlinkat' && c.ret === 0) {
      // Removals go through directory handles: the root's, or a directory opened beneath it.
      const name = quoted(c.args)[0];
      if (rootFds.has(fd)) removals.push({ rel: name, seq });
      else if (open.has(fd)) removals.push({ rel: `${open.get(fd).rel}/${name}`, seq });
    }
    if (open.has(fd) && c.name !== 'openat2' && c.name !== 'dup') {
      open.get(fd).calls.push(c.name === 'newfstatat' ? 'fstat' : c.name);
    }
  });
  return {
    files,
    dirsSynced,
    removals,
    syncfs,
    rename,
    lockFsynced,
    gitDirFsynced,
  };
}

const parentOf = (rel) => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '.');

/** A: files in several directories, one directory only A has; B removes and adds. */
function buildRepo() {
  const repo = Repo.init('fsync');
  for (let i = 0; i < 150; i++) repo.write(`keep/${i % 5}/f${i}.txt`, `kept ${i}\n`);
  for (let i = 0; i < 20; i++) repo.write(`gone/sub/g${i}.txt`, `gone ${i}\n`);
  for (let i = 0; i < 10; i++) repo.write(`thin/t${i}.txt`, `thin ${i}\n`);
  repo.write('top.txt', 'top\n');
  repo.commit('A');
  repo.tag('A');
  repo.rm('gone');
  for (let i = 0; i < 5; i++) repo.rm(`thin/t${i}.txt`);
  repo.rm('top.txt');
  for (let i = 0; i < 40; i++) repo.write(`new/n${i % 4}/n${i}.txt`, `new ${i}\n`);
  repo.write('keep/0/f0.txt', 'changed\n');
  repo.commit('B');
  repo.tag('B');
  return repo;
}

describe('fsync modes, proved with strace', { skip }, () => {
  let src;
  before(() => {
    src = buildRepo();
  });

  for (const workers of [1, 2]) {
    test(`batch, fresh checkout, ${workers} worker(s): writeback started per file, syncfs before the index`, () => {
      const dir = freshClone(src, { prefix: 'fsync-batch' });
      const { summary, calls } = traced(dir, { fsync: 'batch', workers, threshold: 0 });
      assert.equal(summary.fsync.mode, 'batch');
      assert.equal(summary.fsync.barrier, 'syncfs');
      const t = analyse(calls, dir);
      assert.equal(t.files.length, summary.files, 'every file written is in the trace');
      for (const f of t.files) {
        assert.ok(f.calls.includes('sync_file_range'), `${f.rel}: no sync_file_range before close`);
      }
      assert.equal(t.syncfs.length, 1, 'one syncfs');
      const lastClose = Math.max(...t.files.map((f) => f.closed));
      assert.ok(t.syncfs[0] > lastClose, 'syncfs after the last file was closed');
      assert.ok(t.rename > t.syncfs[0], 'index renamed after the barrier');
      assert.ok(t.lockFsynced > 0 && t.lockFsynced < t.rename, 'index.lock fsynced before rename');
      assert.ok(t.gitDirFsynced > t.rename, '.git fsynced after the rename');
    });
  }

  test('batch, switch: removals and new files covered by the same syncfs', async () => {
    const dir = freshClone(src, { prefix: 'fsync-switch' });
    await checkout(dir, { ref: 'A', racyWait: false });
    const { summary, calls } = traced(dir, { ref: 'B', fsync: 'batch', threshold: 0 });
    assert.equal(summary.mode, 'switch');
    const t = analyse(calls, dir);
    assert.ok(t.removals.length >= 26, `removals traced: ${t.removals.length}`);
    assert.equal(t.files.length, summary.files);
    assert.equal(t.syncfs.length, 1);
    for (const r of t.removals) assert.ok(r.seq < t.syncfs[0], `${r.rel} removed after syncfs`);
    for (const f of t.files) assert.ok(f.closed < t.syncfs[0], `${f.rel} closed after syncfs`);
    assert.ok(t.rename > t.syncfs[0]);
  });

  test('file, switch: each file fsynced before close, every changed directory before the index', async () => {
    const dir = freshClone(src, { prefix: 'fsync-file' });
    await checkout(dir, { ref: 'A', racyWait: false });
    const { summary, calls } = traced(dir, { ref: 'B', fsync: 'file', workers: 2 });
    assert.equal(summary.fsync.barrier, 'fsync');
    const t = analyse(calls, dir);
    assert.equal(t.files.length, summary.files);
    const wanted = new Set();
    for (const f of t.files) {
      const i = f.calls.indexOf('fsync');
      assert.ok(i >= 0 && f.calls.indexOf('write') < i, `${f.rel}: not fsynced after its write`);
      wanted.add(parentOf(f.rel));
    }
    for (const r of t.removals) wanted.add(parentOf(r.rel));
    for (const d of ['new', 'new/n0', 'keep/0', 'thin', '.']) wanted.add(d);
    wanted.delete('gone/sub'); // removed itself; its parent chain up to the root is fsynced
    wanted.delete('gone');
    for (const d of wanted) assert.ok(t.dirsSynced.has(d), `directory ${d} not fsynced`);
    assert.equal(t.syncfs.length, 0);
    assert.ok(t.lockFsynced > 0 && t.lockFsynced < t.rename);
    assert.ok(t.gitDirFsynced > t.rename);
  });

  test('none: no sync calls, four calls per file (open, write, fstat, close)', () => {
    const dir = freshClone(src, { prefix: 'fsync-none' });
    const { summary, calls } = traced(dir, { workers: 2, threshold: 0 });
    const { barrierMs, ...rest } = summary.fsync;
    assert.deepEqual(rest, { mode: 'none', barrier: 'none', synced: 0 });
    assert.ok(barrierMs < 50, `barrierMs ${barrierMs} with nothing to do`);
    const t = analyse(calls, dir);
    assert.equal(t.files.length, summary.files);
    for (const f of t.files) assert.deepEqual(f.calls, ['write', 'fstat', 'close'], f.rel);
    assert.equal(t.syncfs.length, 0);
    assert.equal(t.lockFsynced, -1, 'the index is not fsynced');
  });
});

describe('fsync option and config', () => {
  test('the option is validated', async () => {
    await assert.rejects(checkout('/nonexistent', { fsync: 'always' }), {
      code: 'ERR_INVALID_OPTION',
      message: /^Expected 'none', 'file' or 'batch' for option fsync but received 'always'/,
    });
  });

  test('a bad pcheckout.fsync is refused before index.lock is taken', async () => {
    const src = Repo.init('fsync-bad-config');
    src.write('a.txt', 'a\n');
    src.commit('one');
    const dir = freshClone(src, { prefix: 'fsync-bad-config' });
    spawnSync('git', ['-C', dir, 'config', 'pcheckout.fsync', 'sometimes'], { env: gitEnv });
    await assert.rejects(checkout(dir, { racyWait: false }), {
      code: 'ERR_BAD_CONFIG',
      message: /bad pcheckout.fsync value 'sometimes'/,
    });
    assert.equal(fs.existsSync(path.join(dir, '.git', 'index.lock')), false, 'index.lock left');
    assert.equal(fs.existsSync(path.join(dir, 'a.txt')), false, 'nothing written');
  });

  test('pcheckout.fsync sets the default; the option wins', async () => {
    const src = Repo.init('fsync-config');
    src.write('a.txt', 'a\n');
    src.commit('one');
    const dir = freshClone(src, { prefix: 'fsync-config' });
    spawnSync('git', ['-C', dir, 'config', 'pcheckout.fsync', 'file'], { env: gitEnv });
    const s = await checkout(dir, { racyWait: false });
    assert.equal(s.fsync.mode, 'file');
    const dir2 = freshClone(src, { prefix: 'fsync-config' });
    spawnSync('git', ['-C', dir2, 'config', 'pcheckout.fsync', 'file'], { env: gitEnv });
    const s2 = await checkout(dir2, { racyWait: false, fsync: 'none' });
    assert.equal(s2.fsync.mode, 'none');
    assert.equal(s2.filesystem.network, false);
    assert.equal(typeof s2.filesystem.type, 'string');
  });
});
