#!/usr/bin/env node
// A network filesystem on this machine, with a chosen round-trip time, and checkouts on it by
// worker count: fresh checkouts, a 1% branch switch and a restore of deleted files.
//
//   node netfs.mjs [--rtt 0,1,2] [--repos batlike,small1k,small] [--modes fresh,switch,restore]
//                  [--gitdir mount|local|both] [--trials 3] [--workers 1,2,4,8,16,32,64]
//                  [--git-workers 1,4,8,16,32] [--tools pcheckout,git]
//                  [--verify pcheckout|all|none] [--json results/netfs-<timestamp>.json]
//                  [--hold (keep the rig up until Ctrl-C)]
//
// The rig: an sshd in its own network namespace, reached over a veth pair with two private
// addresses (10.213.<k>.1 here, 10.213.<k>.2 in the namespace — traffic stays inside the pair),
// and a directory of this machine exported by it, mounted with sshfs. Repositories are cloned on
// the server's side of the export (the files appear through the mount, nothing is copied over
// ssh), then checked out through the mount.
//
// Round-trip time (--rtt, ms; one mount per value, remounted in between): the kernel has no
// netem, so for an RTT above 0 sshfs's ssh connects to a delaying TCP relay on 127.0.0.1 that
// forwards to the sshd (10.213.<k>.2:22) and holds every chunk rtt/2 ms in each direction,
// bytes kept in order (a FIFO per direction, each chunk stamped with its release time when it
// is read; Nagle off on both sockets). Node's timers have 1 ms granularity, so the release times
// are kept by a worker thread that sleeps with Atomics.wait (sub-millisecond timeouts) until the
// first chunk is due and wakes the relay's event loop, which then sends everything due. The
// relay is its own process (`netfs.mjs --relay-child`): this script blocks its event loop in
// synchronous git calls on the mount (clones, the switch's preparation), which a relay here
// could not serve. The effective RTT is measured, not assumed: the relay reports how long it
// really held the chunks (per direction), and before the trials 200 `stat`s of new names on the
// mount (one sftp LSTAT round trip each) are timed; both are printed and kept in the JSON.
// At RTT 0 sshfs connects to the sshd directly, as before.
//
// sshfs options (fixed, so runs compare): sshfs 3's defaults for caching (dir_cache=yes,
// attributes cached 20 s) and one ssh connection (max_conns=1), no compression, an
// ed25519 key made for the run, no host key check, ServerAliveInterval unset.
//
// Repositories (--repos): `batlike`, a stand-in for sharkdp/bat (the issue's repository, which
// cannot be fetched here): 1,006 entries, one commit, built here (see buildBatlike); `small1k`,
// 1,000 files (1–12 KB, one commit), built here; `small`, the bench corpus of ~5,000 files with
// 3 commits (corpus.mjs).
//
// Where `.git` is (--gitdir): `mount`, the clone is made in the export, so `.git` is on the mount
// too; `local`, `git clone --separate-git-dir=<local disk>`: only the worktree is on the mount
// and its `.git` is a gitfile naming the local directory (an absolute path that is the same for
// both sides, as the export is on this machine).
//
// Modes (--modes), each tool timed as the wall time of its process:
//   fresh    each trial a new `clone --no-checkout`, then
//              pcheckout       node ../dist/cli.cjs --json [--workers N] <dir>
//              git-wN          git -c checkout.workers=N read-tree -u --reset HEAD
//   switch   a branch `bench-switch` on top of HEAD (made with plumbing on the server's side,
//            fixed dates, so the same commit id every time) that edits 1% of the regular files,
//            deletes 0.5% and adds as many new files (chosen by a hash of the path);
//              pcheckout       node ../dist/cli.cjs --json [--workers N] <dir> bench-switch
//              git-wN          git -c checkout.workers=N checkout -q bench-switch
//   restore  500 tracked regular files deleted (half the files if there are fewer than 1,000;
//            chosen by a hash of the path, the same ones for every trial), then
//              pcheckout       node ../dist/cli.cjs --json --restore [--workers N] <dir>
//              git-wN          git -c checkout.workers=N checkout -- .
// For switch and restore one clone per table is checked out untimed on the server's side
// (read-tree -u --reset HEAD), then its index is refreshed through the mount (the server's
// stat data — inode, nanoseconds — is not what the mount shows, and every tool would re-read
// every file otherwise). Before each timed switch the worktree is put back on the first branch
// (git through the mount, untimed) and settled: the clock leaves the second of the last write and
// `git update-index --refresh --force-write-index` runs, so no entry is racily clean. Before each
// timed restore the same files are deleted through the mount. Tools run interleaved, one round
// per trial; medians.
//
// Verification (--verify pcheckout: after every pcheckout run; all; none), untimed: on the
// server's side (local, fast; it compares every file's content, as the stat data differ)
// `git --no-optional-locks status --porcelain` must print nothing, and after a switch HEAD must
// be refs/heads/bench-switch. A failure is printed loudly, kept in the JSON and counted in the
// table; the worktree is repaired and the run goes on.
//
// Output: a markdown table per repository × mode × RTT × gitdir (medians per worker count,
// pcheckout's default, the ratios pcheckout default / git's best worker count and / git w1),
// then a summary table. --json (default results/netfs-<timestamp>.json) gets every raw trial
// (with pcheckout's whole --json summary: filesystem, workers, phase timings), the medians,
// the effective RTTs and the machine, rewritten after every trial ("state": running, done,
// interrupted or crashed); an SVG of the worker-count curves (one line per tool and RTT) is
// written next to it per repository, mode and gitdir. Needs root (ip netns, mount); apt-get
// installs openssh-server and sshfs when missing. Everything (mounts, relay, sshd, namespace)
// is torn down at the end, also on errors and Ctrl-C.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { ensureCorpus } from './corpus.mjs';
import { BENCH_GIT_ENV, machineLoad } from './common.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const CLI = path.resolve(HERE, '..', 'dist', 'cli.cjs');
const ENV = BENCH_GIT_ENV;

// =============================================================================================
// The delaying relay (its own process: node netfs.mjs --relay-child <host> <port> <one-way ms>)

// The timer thread: sleeps until the earliest release time (shared[0], ns of hrtime; 0 = none)
// or until the relay changes it (shared[2] counts changes), then posts one message.
const TIMER_THREAD = `
const { workerData, parentPort } = require('node:worker_threads');
const deadline = new BigInt64Array(workerData, 0, 1);
const gen = new Int32Array(workerData, 8, 1);
for (;;) {
  const g = Atomics.load(gen, 0);
  const due = Atomics.load(deadline, 0);
  if (due === 0n) { Atomics.wait(gen, 0, g); continue; }
  const ms = Number(due - process.hrtime.bigint()) / 1e6;
  if (ms > 0) { Atomics.wait(gen, 0, g, ms); continue; }
  parentPort.postMessage(0);
  Atomics.wait(gen, 0, g, 20); // until the relay has sent what was due and moved the deadline
}
`;

function relayChild(host, port, oneWayMs) {
  const delay = BigInt(Math.round(oneWayMs * 1e6));
  const shared = new SharedArrayBuffer(16);
  const deadline = new BigInt64Array(shared, 0, 1);
  const gen = new Int32Array(shared, 8, 1);
  const timer = new Worker(TIMER_THREAD, { eval: true, workerData: shared });
  const pipes = new Set();
  // Hold times (ms, release − arrival) per direction; a bounded sample, reset on request.
  const holds = { up: [], down: [] };
  let counts = { up: 0, down: 0 };
  const record = (dir, ms) => {
    counts[dir]++;
    const h = holds[dir];
    if (h.length < 100000) h.push(ms);
    else h[Math.floor(Math.random() * counts[dir]) % 100000] = ms;
  };
  // The wake-up itself (the thread's futex timeout, its message, this loop's turn) takes
  // 0.1–0.2 ms here: releases are aimed that much early, `lead` adapted so that the median hold
  // is the delay asked for (the holds are reported, so this is checked, not assumed).
  let lead = 0;
  const target = Number(delay);
  const arm = () => {
    let due = 0n;
    for (const p of pipes) {
      const head = p.queue[p.head];
      if (head && (due === 0n || head.due < due)) due = head.due;
    }
    if (due !== 0n) due -= BigInt(Math.round(lead));
    if (Atomics.load(deadline, 0) !== due) {
      Atomics.store(deadline, 0, due);
      Atomics.add(gen, 0, 1);
      Atomics.notify(gen, 0);
    }
  };
  const flush = () => {
    const now = process.hrtime.bigint();
    const horizon = now + BigInt(Math.round(lead));
    for (const p of pipes) {
      while (p.head < p.queue.length && p.queue[p.head].due <= horizon) {
        const c = p.queue[p.head++];
        if (!p.dst.destroyed) p.dst.write(c.buf);
        const held = Number(now - c.at);
        record(p.dir, held / 1e6);
        // Steps of 2 µs towards the side of each hold: tracks the median, not the mean (tails).
        lead = Math.min(0.8 * target, Math.max(0, lead + (held > target ? 2000 : -2000)));
      }
      if (p.head === p.queue.length) {
        p.queue = [];
        p.head = 0;
        if (p.ended && !p.dst.destroyed) p.dst.end();
      } else if (p.head > 1024) {
        p.queue = p.queue.slice(p.head);
        p.head = 0;
      }
    }
    arm();
  };
  timer.on('message', flush);
  const pipe = (src, dst, dir) => {
    const p = { src, dst, dir, queue: [], head: 0, ended: false };
    pipes.add(p);
    src.on('data', (buf) => {
      const at = process.hrtime.bigint();
      p.queue.push({ buf, at, due: at + delay });
      if (p.queue.length - p.head === 1) arm();
    });
    src.on('end', () => {
      p.ended = true;
      if (p.head === p.queue.length) dst.end();
    });
    return p;
  };
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ host, port: Number(port), allowHalfOpen: true });
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const a = pipe(client, upstream, 'up');
    const b = pipe(upstream, client, 'down');
    let closed = 0;
    const onClose = () => {
      if (++closed < 2) return;
      pipes.delete(a);
      pipes.delete(b);
      arm();
    };
    const kill = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', kill);
    upstream.on('error', kill);
    client.on('close', onClose);
    upstream.on('close', onClose);
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  const stat = (xs) => {
    const s = [...xs].sort((x, y) => x - y);
    const q = (f) =>
      s.length ? +s[Math.min(s.length - 1, Math.floor(f * s.length))].toFixed(3) : null;
    const mean = s.length ? +(s.reduce((x, y) => x + y, 0) / s.length).toFixed(3) : null;
    return {
      chunks: null,
      sampled: s.length,
      mean,
      p10: q(0.1),
      median: q(0.5),
      p90: q(0.9),
      p99: q(0.99),
      max: s.length ? +s.at(-1).toFixed(3) : null,
    };
  };
  process.on('message', (m) => {
    if (m?.stats) {
      const out = { up: stat(holds.up), down: stat(holds.down) };
      out.up.chunks = counts.up;
      out.down.chunks = counts.down;
      out.leadMs = +(lead / 1e6).toFixed(3);
      if (m.reset) {
        holds.up = [];
        holds.down = [];
        counts = { up: 0, down: 0 };
      }
      process.send({ stats: out });
    }
  });
  process.on('disconnect', () => process.exit(0)); // the bench is gone
}

// =============================================================================================
// The bench

async function main() {
  const { values: opt } = parseArgs({
    options: {
      trials: { type: 'string', default: '3' },
      workers: { type: 'string', default: '1,2,4,8,16,32,64' },
      'git-workers': { type: 'string', default: '1,4,8,16,32' },
      repos: { type: 'string', default: 'batlike,small1k,small' },
      modes: { type: 'string', default: 'fresh,switch,restore' },
      rtt: { type: 'string', default: '0' },
      gitdir: { type: 'string', default: 'mount' },
      tools: { type: 'string', default: 'pcheckout,git' },
      verify: { type: 'string', default: 'pcheckout' },
      json: { type: 'string' },
      hold: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (opt.help) {
    process.stdout.write(
      'usage: node netfs.mjs [--rtt 0,1,2] [--repos batlike,small1k,small] ' +
        '[--modes fresh,switch,restore]\n' +
        '                      [--gitdir mount|local|both] [--trials 3] ' +
        '[--workers 1,2,4,8,16,32,64]\n' +
        '                      [--git-workers 1,4,8,16,32] [--tools pcheckout,git] ' +
        '[--verify pcheckout|all|none]\n' +
        '                      [--json results/netfs-<timestamp>.json] [--hold]\n',
    );
    return;
  }
  if (process.getuid?.() !== 0) {
    process.stderr.write('netfs.mjs: needs root (ip netns, mount)\n');
    process.exit(1);
  }
  const list = (s) => s.split(',').filter(Boolean);
  const rtts = list(opt.rtt).map(Number);
  const modes = list(opt.modes);
  const gitdirs = opt.gitdir === 'both' ? ['mount', 'local'] : [opt.gitdir];
  const pcCounts = list(opt.workers).map(Number);
  const gitCounts = list(opt['git-workers']).map(Number);
  const kinds = list(opt.tools);
  const trials = Number(opt.trials);
  for (const m of modes)
    if (!['fresh', 'switch', 'restore'].includes(m)) throw new Error(`unknown mode ${m}`);
  for (const g of gitdirs) if (!['mount', 'local'].includes(g)) throw new Error(`--gitdir ${g}?`);
  if (!['pcheckout', 'all', 'none'].includes(opt.verify))
    throw new Error(`--verify ${opt.verify}?`);
  if (rtts.some((r) => !(r >= 0))) throw new Error(`--rtt ${opt.rtt}?`);

  // Tools, in the order of a round: pcheckout's default, then by worker count, the two alternating.
  const tools = [];
  if (kinds.includes('pcheckout')) tools.push({ id: 'pcheckout', kind: 'pcheckout' });
  for (const w of [...new Set([...pcCounts, ...gitCounts])].sort((a, b) => a - b)) {
    if (kinds.includes('pcheckout') && pcCounts.includes(w))
      tools.push({ id: `pcheckout-w${w}`, kind: 'pcheckout', workers: w });
    if (kinds.includes('git') && gitCounts.includes(w))
      tools.push({ id: `git-w${w}`, kind: 'git', workers: w });
  }

  const startedAt = new Date();
  const jsonFile = path.resolve(
    opt.json ||
      path.join(HERE, 'results', `netfs-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`),
  );
  fs.mkdirSync(path.dirname(jsonFile), { recursive: true });

  const rig = makeRig();
  const result = {
    schema: 1,
    state: 'running',
    startedAt: startedAt.toISOString(),
    finishedAt: null,
    argv: process.argv.slice(2),
    options: {
      rtts,
      repos: list(opt.repos),
      modes,
      gitdirs,
      trials,
      pcheckoutWorkers: pcCounts,
      gitWorkers: gitCounts,
      tools: tools.map((t) => t.id),
      verify: opt.verify,
      sshfs: 'defaults (dir_cache=yes, attributes 20 s, max_conns=1) + ' + rig.sshOpts.join(','),
      relay:
        'RTT > 0: TCP relay on 127.0.0.1 (own process), rtt/2 ms per direction, FIFO, ' +
        'release times kept by an Atomics.wait timer thread',
      order: 'one round of all tools per trial, tools in the order of options.tools',
      commands: {
        fresh: {
          pcheckout: 'node dist/cli.cjs --json [--workers N] <dir>',
          git: 'git -c checkout.workers=N read-tree -u --reset HEAD',
        },
        switch: {
          pcheckout: 'node dist/cli.cjs --json [--workers N] <dir> bench-switch',
          git: 'git -c checkout.workers=N checkout -q bench-switch',
        },
        restore: {
          pcheckout: 'node dist/cli.cjs --json --restore [--workers N] <dir>',
          git: 'git -c checkout.workers=N checkout -- .',
        },
      },
    },
    machine: machineFacts(),
    corpora: {},
    rtt: {},
    trials: [],
    cells: [],
  };
  const save = (state) => {
    result.state = state;
    result.finishedAt = new Date().toISOString();
    fs.writeFileSync(jsonFile, JSON.stringify(result, null, 2) + '\n');
    writeCharts(result, jsonFile);
  };

  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(sig, () => {
      log(`${sig}: tearing down`);
      rig.teardown();
      try {
        save('interrupted');
      } catch (e) {
        log(`could not save ${jsonFile}: ${e.message}`);
      }
      process.exit(130);
    });
  }

  let state = 'crashed';
  try {
    const repos = await sources(list(opt.repos));
    for (const [name, r] of Object.entries(repos)) result.corpora[name] = r.info;
    rig.setUp();
    const lines = [];
    for (const rtt of rtts) {
      await rig.mount(rtt);
      const probe = rig.probeRtt();
      result.rtt[rtt] = { probe, relayAtMount: rtt > 0 ? await rig.relayStats(true) : null };
      const base = result.rtt[0]?.probe.median;
      log(
        `rtt ${rtt} ms: stat round trip on the mount median ${probe.median} ms ` +
          `(p10 ${probe.p10}, p90 ${probe.p90}, n ${probe.n})` +
          (rtt > 0 && base !== undefined
            ? `, ${(probe.median - base).toFixed(2)} ms over rtt 0's`
            : ''),
      );
      if (opt.hold) {
        process.stdout.write(`export ${rig.exportDir}\nmount ${rig.mnt}\n`);
        for (const [n, r] of Object.entries(repos)) process.stdout.write(`${n} ${r.source}\n`);
        await new Promise(() => {}); // until SIGINT/SIGTERM, which tear down
      }
      for (const gitdir of gitdirs) {
        for (const [repo, { source }] of Object.entries(repos)) {
          for (const mode of modes) {
            const cell = { repo, mode, rtt, gitdir };
            const out = await runCell(rig, cell, source, tools, trials, opt.verify, result, save);
            lines.push(out);
            process.stdout.write(`${out}\n`);
            save('running');
          }
        }
      }
      await rig.unmount();
    }
    process.stdout.write(`\n${summaryTable(result)}\n`);
    state = 'done';
  } catch (e) {
    log(`error: ${e.stack ?? e}`);
    process.exitCode = 1;
  } finally {
    rig.teardown();
    save(state);
    log(`results: ${jsonFile}`);
  }
}

const log = (msg) => process.stderr.write(`[netfs] ${msg}\n`);
const sh = (cmd, args, opts = {}) =>
  execFileSync(cmd, args, { stdio: 'pipe', maxBuffer: 1 << 28, ...opts });
const git = (cwd, ...args) => sh('git', args, { cwd, env: ENV });
const sleepMs = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function machineFacts() {
  const v = (cmd, args) => {
    try {
      return String(sh(cmd, args)).trim().split('\n')[0];
    } catch {
      return null;
    }
  };
  return {
    cores: os.cpus().length,
    kernel: `${os.type()} ${os.release()}`,
    node: process.versions.node,
    git: v('git', ['--version']),
    sshfs: v('sshfs', ['--version']),
    ssh: String(spawnSync('ssh', ['-V'], { encoding: 'utf8' }).stderr ?? '').trim() || null,
    pcheckoutCommit: v('git', ['-C', HERE, 'rev-parse', 'HEAD']),
    loadAtStart: machineLoad(),
  };
}

function ensurePackages() {
  const need = [];
  if (!fs.existsSync('/usr/sbin/sshd')) need.push('openssh-server');
  if (!fs.existsSync('/usr/bin/sshfs')) need.push('sshfs');
  if (need.length === 0) return;
  log(`apt-get install ${need.join(' ')}`);
  sh('apt-get', ['update', '-qq']);
  sh('apt-get', ['install', '-y', '-qq', ...need], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

// ---------------------------------------------------------------------------------------------
// The rig, and its teardown (in reverse order of what was set up)

function makeRig() {
  const k = 1 + (process.pid % 250);
  const NS = `pcnetfs${process.pid}`;
  const HOST_IF = `pcn${process.pid}a`.slice(0, 15);
  const NS_IF = `pcn${process.pid}b`.slice(0, 15);
  const HOST_ADDR = `10.213.${k}.1`;
  const SERVER_ADDR = `10.213.${k}.2`;
  const work = fs.mkdtempSync('/var/tmp/pcheckout-netfs-');
  const exportDir = path.join(work, 'export');
  const localDir = path.join(work, 'local'); // git dirs for --gitdir local
  const mnt = path.join(work, 'mnt');
  const keys = path.join(work, 'keys');
  const undo = []; // [name, fn]
  let relay = null;
  const rig = {
    exportDir,
    localDir,
    mnt,
    current: null, // the timed child process while one runs
    rtt: 0,
    sshOpts: [
      `IdentityFile=${path.join(keys, 'client')}`,
      'StrictHostKeyChecking=no',
      'UserKnownHostsFile=/dev/null',
      'BatchMode=yes',
      'Compression=no',
      'LogLevel=ERROR',
    ],
  };
  const runUndo = (name) => {
    for (let i = undo.length - 1; i >= 0; i--) {
      if (name && undo[i][0] !== name) continue;
      const [, step] = undo.splice(i, 1)[0];
      try {
        step();
      } catch (err) {
        log(`teardown: ${String(err.message ?? err).split('\n')[0]}`);
      }
    }
  };

  rig.teardown = () => {
    try {
      rig.current?.kill('SIGKILL'); // a trial still running would keep the mount busy
    } catch {}
    if (rig.current) sleepMs(300);
    runUndo();
    try {
      fs.rmSync(work, { recursive: true, force: true, maxRetries: 3 });
    } catch (err) {
      log(`teardown: could not remove ${work}: ${err.message}`);
    }
  };

  rig.setUp = () => {
    ensurePackages();
    fs.mkdirSync(exportDir);
    fs.mkdirSync(localDir);
    fs.mkdirSync(mnt);
    sh('ip', ['netns', 'add', NS]);
    undo.push(['netns', () => sh('ip', ['netns', 'del', NS])]); // takes the veth pair with it
    undo.push([
      'netns',
      () => {
        // sshd's session processes outlive the listener: end whatever still runs in the namespace.
        const pids = String(sh('ip', ['netns', 'pids', NS]))
          .split('\n')
          .filter(Boolean);
        for (const pid of pids) spawnSync('kill', [pid], { stdio: 'ignore' });
      },
    ]);
    sh('ip', ['link', 'add', HOST_IF, 'type', 'veth', 'peer', 'name', NS_IF]);
    undo.push(['netns', () => spawnSync('ip', ['link', 'del', HOST_IF], { stdio: 'ignore' })]);
    sh('ip', ['link', 'set', NS_IF, 'netns', NS]);
    sh('ip', ['addr', 'add', `${HOST_ADDR}/30`, 'dev', HOST_IF]);
    sh('ip', ['link', 'set', HOST_IF, 'up']);
    const inNs = (...args) => sh('ip', ['netns', 'exec', NS, ...args]);
    inNs('ip', 'addr', 'add', `${SERVER_ADDR}/30`, 'dev', NS_IF);
    inNs('ip', 'link', 'set', NS_IF, 'up');
    inNs('ip', 'link', 'set', 'lo', 'up');

    fs.mkdirSync(keys, { mode: 0o700 });
    sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(keys, 'host')]);
    sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(keys, 'client')]);
    fs.copyFileSync(path.join(keys, 'client.pub'), path.join(keys, 'authorized_keys'));
    const config = path.join(work, 'sshd_config');
    fs.writeFileSync(
      config,
      [
        `ListenAddress ${SERVER_ADDR}`,
        'Port 22',
        `HostKey ${path.join(keys, 'host')}`,
        `AuthorizedKeysFile ${path.join(keys, 'authorized_keys')}`,
        `PidFile ${path.join(work, 'sshd.pid')}`,
        'PermitRootLogin prohibit-password',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'StrictModes no',
        'Subsystem sftp internal-sftp',
        'LogLevel ERROR',
        '',
      ].join('\n'),
    );
    fs.mkdirSync('/run/sshd', { recursive: true }); // sshd's privilege separation directory
    const sshd = spawn('ip', ['netns', 'exec', NS, '/usr/sbin/sshd', '-D', '-e', '-f', config], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    sshd.stderr.on('data', (d) => log(`sshd: ${String(d).trim()}`));
    undo.push(['sshd', () => sshd.kill('SIGTERM')]);
  };

  rig.mount = async (rtt) => {
    rig.rtt = rtt;
    let target = `root@${SERVER_ADDR}:${exportDir}`;
    const extra = [];
    if (rtt > 0) {
      relay = spawn(process.execPath, [SELF, '--relay-child', SERVER_ADDR, '22', String(rtt / 2)], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const r = relay;
      undo.push(['relay', () => r.kill('SIGKILL')]);
      const { port } = await new Promise((resolve, reject) => {
        r.once('message', resolve);
        r.once('exit', (c) => reject(new Error(`relay exited (${c})`)));
      });
      target = `root@127.0.0.1:${exportDir}`;
      extra.push(`port=${port}`);
      log(`relay on 127.0.0.1:${port} → ${SERVER_ADDR}:22, ${rtt / 2} ms each way (pid ${r.pid})`);
    }
    // sshd may take a moment to listen: retry the mount a few times.
    for (let attempt = 1; ; attempt++) {
      const r = spawnSync('sshfs', [target, mnt, '-o', [...rig.sshOpts, ...extra].join(',')], {
        encoding: 'utf8',
      });
      if (r.status === 0) break;
      if (attempt === 20) throw new Error(`sshfs failed: ${r.stderr}`);
      sleepMs(250);
    }
    undo.push([
      'mount',
      () => {
        if (spawnSync('fusermount', ['-u', mnt], { stdio: 'ignore' }).status !== 0)
          sh('umount', ['-l', mnt]);
        // sshfs's ssh can outlive the unmount (its peer's side is gone with the namespace, so its
        // connection never ends): end this run's ssh processes, found by the run's key path.
        killOurs(path.join(keys, 'client'));
      },
    ]);
    const line = fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .find((l) => l.split(' ')[4] === mnt);
    log(`mounted (rtt ${rtt} ms): ${line}`);
  };

  /** Ends the processes whose command line names `marker` (a path unique to this run). */
  const killOurs = (marker) => {
    for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker))
          process.kill(Number(pid), 'SIGTERM');
      } catch {}
    }
  };

  rig.unmount = async () => {
    runUndo('mount');
    runUndo('relay');
    relay = null;
  };

  /** Relay's hold times since the last reset (null at RTT 0). */
  rig.relayStats = (reset) =>
    relay
      ? new Promise((resolve) => {
          const onMsg = (m) => {
            if (!m.stats) return;
            relay.off('message', onMsg);
            resolve(m.stats);
          };
          relay.on('message', onMsg);
          relay.send({ stats: true, reset });
        })
      : Promise.resolve(null);

  /** n stats of new names on the mount: each is one sftp round trip (ENOENT, nothing cached). */
  rig.probeRtt = (n = 200) => {
    const tag = `${process.pid}-${Date.now()}`;
    const times = [];
    for (let i = 0; i < n; i++) {
      const p = path.join(mnt, `.rtt-probe-${tag}-${i}`);
      const t0 = process.hrtime.bigint();
      try {
        fs.statSync(p);
      } catch {}
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const s = [...times].sort((a, b) => a - b);
    const q = (f) => +s[Math.min(s.length - 1, Math.floor(f * s.length))].toFixed(3);
    return {
      n,
      what: 'stat of a new name on the mount (ms)',
      median: +median(s).toFixed(3),
      p10: q(0.1),
      p90: q(0.9),
      min: +s[0].toFixed(3),
      max: +s.at(-1).toFixed(3),
    };
  };
  return rig;
}

// ---------------------------------------------------------------------------------------------
// Repositories (bare sources on the local disk; clones made inside the export)

const cacheRoot = () => process.env.PCHECKOUT_BENCH_CACHE || '/var/tmp/pcheckout-bench';

function buildSmall1k(dir) {
  if (fs.existsSync(path.join(dir, 'done'))) return path.join(dir, 'source.git');
  fs.rmSync(dir, { recursive: true, force: true });
  const tree = path.join(dir, 'tree');
  fs.mkdirSync(tree, { recursive: true });
  git(tree, 'init', '-q', '-b', 'main');
  for (let i = 0; i < 1000; i++) {
    const sub = path.join(tree, `m${i % 7}`, `p${Math.floor(i / 40)}`);
    fs.mkdirSync(sub, { recursive: true });
    const size = 1024 + ((i * 2654435761) % 11264);
    let text = '';
    for (let n = 0; text.length < size; n++) {
      text += `${createHash('sha1').update(`${i}/${n}`).digest('hex')} line ${n}\n`;
    }
    fs.writeFileSync(path.join(sub, `file${i}.c`), text.slice(0, size));
  }
  git(tree, 'add', '-A');
  git(tree, 'commit', '-qm', 'small1k');
  git(dir, 'clone', '-q', '--bare', tree, 'source.git');
  git(path.join(dir, 'source.git'), 'gc', '-q');
  fs.rmSync(tree, { recursive: true, force: true });
  fs.writeFileSync(path.join(dir, 'done'), '');
  return path.join(dir, 'source.git');
}

/** xorshift32 in [0, 1). */
function prng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

const WORDS = (
  'fn let mut impl struct enum pub use self match Some None Ok Err return if else for in while ' +
  'loop String Vec Option Result syntax theme highlight style color line number pager printer ' +
  'input output config assets cache file path error bat terminal width wrap tab ansi escape ' +
  'scope meta keyword string comment punctuation entity name function storage type constant ' +
  'variable support source text markup heading list quote raw diff inserted deleted changed'
).split(' ');

/**
 * The `batlike` corpus: a deterministic stand-in for sharkdp/bat's tree (1,006 entries), which
 * cannot be downloaded here. Shape, not content: one directory of 200 files
 * (assets/syntaxes/02_Extra, like bat's syntax definitions), two of 60–100 (tests/examples 84,
 * tests/snapshots/output 68), 136 language directories of 1–4 files each under
 * tests/syntax-tests/source and .../highlighted (some one or two levels deeper: depth up to 6),
 * many small directories (src/…, .github/…, assets/themes/<name>, doc), text files mostly
 * 0.3–20 KB (log-uniform) with a few of 100 KB–1 MB (Cargo.lock, CHANGELOG.md and the
 * incompressible assets/*.bin), 7 binary files, 1 symlink, 15 executable scripts. One commit
 * with fixed dates, `git gc`.
 */
function buildBatlike(dir) {
  const done = path.join(dir, 'done');
  if (fs.existsSync(done))
    return { source: path.join(dir, 'source.git'), info: JSON.parse(fs.readFileSync(done)) };
  fs.rmSync(dir, { recursive: true, force: true });
  const tree = path.join(dir, 'tree');
  fs.mkdirSync(tree, { recursive: true });
  const rand = prng(0xba7);
  const files = []; // [path, size, kind: text|hl|bin|exec, or link target]
  const logSize = (lo, hi) => Math.round(lo * Math.exp(rand() * Math.log(hi / lo)));
  const add = (p, size, kind = 'text') => files.push([p, size, kind]);
  // Top level and meta files.
  for (const [p, s] of [
    ['Cargo.toml', 3100],
    ['Cargo.lock', 124000],
    ['README.md', 31000],
    ['CHANGELOG.md', 96000],
    ['LICENSE-APACHE', 10800],
    ['LICENSE-MIT', 1080],
    ['NOTICE', 520],
    ['build.rs', 1400],
    ['.gitignore', 320],
    ['.gitmodules', 4200],
    ['rustfmt.toml', 310],
    ['CONTRIBUTING.md', 3300],
  ])
    add(p, s);
  for (const n of [
    'CICD.yml',
    'require-changelog-for-PRs.yml',
    'auto-close-stale.yml',
    'lint.yml',
    'release.yml',
  ])
    add(`.github/workflows/${n}`, logSize(600, 14000));
  for (const n of [
    'bug_report.md',
    'feature_request.md',
    'question.md',
    'syntax_request.md',
    'config.yml',
  ])
    add(`.github/ISSUE_TEMPLATE/${n}`, logSize(300, 1500));
  for (const n of ['dependabot.yml', 'FUNDING.yml', 'PULL_REQUEST_TEMPLATE.md'])
    add(`.github/${n}`, logSize(300, 900));
  // Assets: the big serialized caches are binary (incompressible), as bat's are.
  add('assets/syntaxes.bin', 960000, 'bin');
  add('assets/themes.bin', 390000, 'bin');
  add('assets/acknowledgements.bin', 132000, 'bin');
  add('assets/icon.png', 14000, 'bin');
  add('assets/README.md', 2400);
  add('assets/create.sh', 1900, 'exec');
  for (let i = 0; i < 200; i++)
    add(
      `assets/syntaxes/02_Extra/Syntax${String(i).padStart(3, '0')}.sublime-syntax`,
      logSize(800, 30000),
    );
  const themes = [
    'ansi',
    'Coldark',
    'DarkNeon',
    'Dracula',
    'GitHub',
    'gruvbox',
    'Monokai Extended',
    'Nord',
    'OneHalf',
    'Solarized',
    'Sublime Snazzy',
    'TwoDark',
    'base16',
    'zenburn',
    'onedark',
    '1337',
    'Catppuccin',
    'visual-studio-dark',
  ];
  themes.forEach((t, i) => {
    add(`assets/themes/${t}/${t}.tmTheme`, logSize(3000, 20000));
    if (i % 3 !== 2) add(`assets/themes/${t}/LICENSE`, logSize(900, 1200));
    if (i % 4 === 0) add(`assets/themes/${t}/README.md`, logSize(300, 2000));
  });
  for (const n of ['bat.bash.in', 'bat.fish.in', 'bat.zsh.in', '_bat.ps1.in'])
    add(`assets/completions/${n}`, logSize(1500, 9000));
  add('assets/manual/bat.1.in', 14000);
  for (let i = 0; i < 8; i++)
    add(`assets/patches/Patch${i}.sublime-syntax.patch`, logSize(400, 4000));
  add('diagnostics/info.sh', 5200, 'exec');
  add('diagnostics/.gitignore', 300);
  for (const n of [
    'README-ja.md',
    'README-ko.md',
    'README-ru.md',
    'README-zh.md',
    'alternatives.md',
    'assets.md',
    'release-checklist.md',
    'sponsors.md',
  ])
    add(`doc/${n}`, logSize(1500, 30000));
  add('doc/logo-header.svg', 12000);
  add('doc/sponsors/workos-logo.png', 148000, 'bin');
  add('doc/screenshot.png', 42000, 'bin');
  for (let i = 0; i < 8; i++) add(`examples/example${i}.rs`, logSize(300, 2500));
  // Source: src/ and a few levels of src/syntax_mapping/builtins/<family>/.
  for (let i = 0; i < 28; i++) add(`src/module${i}.rs`, logSize(800, 30000));
  for (let i = 0; i < 10; i++) add(`src/bin/bat/part${i}.rs`, logSize(800, 25000));
  for (let i = 0; i < 3; i++) add(`src/syntax_mapping/map${i}.rs`, logSize(800, 12000));
  add('src/syntax_mapping/builtins/README.md', 3000);
  add('src/syntax_mapping/builtins/mod.rs', 2000);
  for (const [fam, n] of [
    ['common', 24],
    ['linux', 6],
    ['macos', 2],
    ['unix-family', 5],
    ['windows', 1],
    ['bsd-family', 1],
  ])
    for (let i = 0; i < n; i++)
      add(`src/syntax_mapping/builtins/${fam}/${50 + i}-map${i}.toml`, logSize(200, 900));
  // Tests.
  for (const n of [
    'integration_tests.rs',
    'no_duplicate_extensions.rs',
    'snapshot_tests.rs',
    'system_wide_config.rs',
    'test_pretty_printer.rs',
    'assets.rs',
  ])
    add(`tests/${n}`, logSize(1000, 60000));
  for (let i = 0; i < 4; i++) add(`tests/utils/util${i}.rs`, logSize(400, 3000));
  for (const n of ['echo.sh', 'cat.sh', 'less.sh', 'more.sh'])
    add(`tests/mocked-pagers/${n}`, logSize(300, 600), 'exec');
  for (const n of [
    'license-checks.sh',
    'find-slow-to-highlight-files.py',
    'test-syntax-mapping.sh',
  ])
    add(`tests/scripts/${n}`, logSize(500, 3000), 'exec');
  add('tests/benchmarks/run-benchmarks.sh', 4200, 'exec');
  for (let i = 0; i < 3; i++)
    add(`tests/benchmarks/startup-time-src/sample${i}.txt`, logSize(300, 8000));
  for (let i = 0; i < 82; i++)
    add(`tests/examples/example-${String(i).padStart(2, '0')}.txt`, logSize(300, 6000));
  add('tests/examples/test.binary', 1024, 'bin');
  files.push(['tests/examples/link-to-example-00.txt', 0, 'link:example-00.txt']);
  for (let i = 0; i < 3; i++) add(`tests/snapshots/sample${i}.rs`, logSize(300, 1500));
  for (let i = 0; i < 68; i++)
    add(
      `tests/snapshots/output/snap-${String(i).padStart(2, '0')}.snapshot.txt`,
      logSize(300, 2500),
    );
  for (const n of [
    'create_highlighted_versions.py',
    'compare_highlighted_versions.py',
    'update.sh',
  ])
    add(`tests/syntax-tests/${n}`, logSize(1500, 5000), 'exec');
  add('tests/syntax-tests/regression_test.sh', 800, 'exec');
  add('tests/syntax-tests/BatTestCustomAssets.sh', 700, 'exec');
  // Fill up to 1,006 entries with language directories, each file in source/ and highlighted/.
  const TARGET = 1006;
  const langs = [
    'ActionScript',
    'Ada',
    'Apache',
    'AppleScript',
    'ARM Assembly',
    'AsciiDoc',
    'ASP',
    'Assembly (x86_64)',
    'AWK',
    'Bash',
    'BatchFile',
    'BibTeX',
    'C',
    'C-Sharp',
    'CMake',
    'CoffeeScript',
    'Clojure',
    'Crystal',
    'CSS',
    'CSV',
    'Dart',
    'Diff',
    'Dockerfile',
    'Elixir',
    'Elm',
    'Erlang',
    'F#',
    'Fish',
    'Fortran (Modern)',
    'Git Attributes',
    'Go',
    'GraphQL',
    'Groovy',
    'Haskell',
    'HTML',
    'INI',
    'Java',
    'JavaScript',
    'JSON',
    'Julia',
    'Kotlin',
    'LaTeX',
    'Lisp',
    'Lua',
    'Makefile',
    'Markdown',
    'MATLAB',
    'Nim',
    'Nix',
    'OCaml',
    'Perl',
    'PHP',
    'PowerShell',
    'Python',
    'R',
    'Racket',
    'Ruby',
    'Rust',
    'Scala',
    'SCSS',
    'SQL',
    'Swift',
    'TOML',
    'TypeScript',
    'Verilog',
    'VimL',
    'Vue',
    'XML',
    'YAML',
    'Zig',
  ];
  let li = 0;
  while (TARGET - files.length >= 2) {
    const lang =
      li < langs.length
        ? langs[li]
        : `${langs[li % langs.length]} ${Math.floor(li / langs.length) + 1}`;
    li++;
    const n = Math.min(
      Math.floor((TARGET - files.length) / 2),
      1 + Math.floor(rand() * rand() * 4),
    );
    for (let j = 0; j < n; j++) {
      // Every 9th language keeps one file a level deeper, every 23rd two levels (depth 6).
      const sub =
        j === 1 && li % 9 === 0 ? 'nested/' : j === 1 && li % 23 === 0 ? 'nested/deeper/' : '';
      const name = `${sub}test${j}.${lang.toLowerCase().replace(/[^a-z0-9]+/g, '')}`;
      const size = logSize(300, 12000);
      add(`tests/syntax-tests/source/${lang}/${name}`, size);
      add(`tests/syntax-tests/highlighted/${lang}/${name}`, Math.round(size * 2.5), 'hl');
    }
  }
  if (files.length < TARGET) add('tests/syntax-tests/BAT_THEME', 40);

  // Write the tree.
  for (const [p, size, kind] of files) {
    const abs = path.join(tree, p);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    if (kind.startsWith('link:')) {
      fs.symlinkSync(kind.slice(5), abs);
      continue;
    }
    let buf;
    if (kind === 'bin') {
      buf = Buffer.alloc(size);
      for (let i = 0; i < size; i += 4)
        buf.writeUInt32LE(Math.floor(rand() * 4294967296), Math.min(i, size - 4));
      buf[0] = 0; // a NUL early: git and everyone else call it binary
    } else {
      const parts = [];
      let len = 0;
      if (kind === 'exec') {
        parts.push(p.endsWith('.py') ? '#!/usr/bin/env python3\n' : '#!/usr/bin/env bash\n');
        len = parts[0].length;
      }
      while (len < size) {
        let line = '    '.repeat(Math.floor(rand() * 4));
        const nw = 2 + Math.floor(rand() * 9);
        for (let w = 0; w < nw; w++) {
          const word = WORDS[Math.floor(rand() * WORDS.length)];
          line +=
            kind === 'hl'
              ? `\x1b[38;2;${Math.floor(rand() * 256)};${Math.floor(rand() * 256)};200m${word}\x1b[0m `
              : `${word} `;
        }
        line += '\n';
        parts.push(line);
        len += line.length;
      }
      buf = Buffer.from(parts.join('').slice(0, size));
    }
    fs.writeFileSync(abs, buf, { mode: kind === 'exec' ? 0o755 : 0o644 });
  }
  const env = {
    ...ENV,
    GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
    GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
  };
  sh('git', ['init', '-q', '-b', 'master'], { cwd: tree, env });
  sh('git', ['add', '-A'], { cwd: tree, env });
  sh('git', ['commit', '-qm', 'batlike: a stand-in for sharkdp/bat'], { cwd: tree, env });
  sh('git', ['clone', '-q', '--bare', tree, 'source.git'], { cwd: dir, env });
  sh('git', ['gc', '-q'], { cwd: path.join(dir, 'source.git'), env });
  // Describe it.
  const perDir = new Map();
  let maxDepth = 0;
  for (const [p] of files) {
    const d = path.dirname(p);
    perDir.set(d, (perDir.get(d) ?? 0) + 1);
    maxDepth = Math.max(maxDepth, p.split('/').length - 1);
  }
  const sizes = files.filter((f) => !f[2].startsWith('link:')).map((f) => f[1]);
  const info = {
    name: 'batlike',
    entries: Number(
      String(sh('git', ['ls-tree', '-r', 'HEAD'], { cwd: path.join(dir, 'source.git') }))
        .trim()
        .split('\n').length,
    ),
    head: String(sh('git', ['rev-parse', 'HEAD'], { cwd: path.join(dir, 'source.git') })).trim(),
    bytes: sizes.reduce((a, b) => a + b, 0),
    binary: files.filter((f) => f[2] === 'bin').length,
    symlinks: files.filter((f) => f[2].startsWith('link:')).length,
    executables: files.filter((f) => f[2] === 'exec').length,
    over100KB: sizes.filter((s) => s >= 100000).length,
    sizeMedian: median(sizes),
    within300Bto20KB: sizes.filter((s) => s >= 300 && s <= 20000).length,
    directories: perDir.size,
    dirsWith1to6: [...perDir.values()].filter((n) => n <= 6).length,
    largestDirs: [...perDir].sort((a, b) => b[1] - a[1]).slice(0, 4),
    maxDirDepth: maxDepth,
    languages: li,
  };
  fs.rmSync(tree, { recursive: true, force: true });
  fs.writeFileSync(done, JSON.stringify(info, null, 2));
  return { source: path.join(dir, 'source.git'), info };
}

async function sources(names) {
  const out = {};
  for (const name of names) {
    if (name === 'small1k') {
      // Not `small1k`: that is corpus.mjs's own (another tree), which this builder would delete.
      out[name] = {
        source: buildSmall1k(path.join(cacheRoot(), 'netfs-small1k')),
        info: { name, entries: 1000 },
      };
    } else if (name === 'batlike') {
      out[name] = buildBatlike(path.join(cacheRoot(), 'netfs-batlike'));
      log(`batlike: ${JSON.stringify(out[name].info)}`);
    } else {
      const c = await ensureCorpus(name);
      out[name] = { source: c.repo, info: c.info };
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Preparation of a worktree on the server's side

let serial = 0;

/** A `clone --no-checkout` in the export (and its git dir on the local disk for gitdir local). */
function cloneInExport(rig, source, gitdir) {
  const name = `t${++serial}`;
  const args = ['clone', '-q', '--no-checkout'];
  const localGit = path.join(rig.localDir, `${name}.git`);
  if (gitdir === 'local') args.push(`--separate-git-dir=${localGit}`);
  git(rig.exportDir, ...args, source, name);
  git(path.join(rig.exportDir, name), 'remote', 'remove', 'origin'); // no upstream reports
  return {
    name,
    server: path.join(rig.exportDir, name), // the worktree as the server sees it
    dir: path.join(rig.mnt, name), // ... and through the mount
    remove() {
      fs.rmSync(this.server, { recursive: true, force: true });
      fs.rmSync(localGit, { recursive: true, force: true });
    },
  };
}

const rank = (salt, p) => createHash('sha1').update(`${salt}:${p}`).digest('hex');

/** Regular files of HEAD ([mode, sha, path]), in a fixed order that depends on salt. */
function regularFiles(cwd, salt) {
  return String(git(cwd, 'ls-tree', '-r', '-z', 'HEAD'))
    .split('\0')
    .filter(Boolean)
    .map((l) => {
      const [meta, p] = l.split('\t');
      const [mode, , sha] = meta.split(' ');
      return { mode, sha, path: p, key: rank(salt, p) };
    })
    .filter((e) => e.mode === '100644' || e.mode === '100755')
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * Branch bench-switch on top of HEAD: 1% of the regular files edited (a line at the top), 0.5%
 * deleted, as many new files added next to others; made with a temporary index, so neither the
 * worktree nor the index is touched; fixed dates, so the commit id is always the same.
 */
function makeSwitchBranch(cwd, gitDirPath) {
  const all = String(git(cwd, 'ls-tree', '-r', '--name-only', '-z', 'HEAD'))
    .split('\0')
    .filter(Boolean).length;
  const files = regularFiles(cwd, 'switch');
  const nEdit = Math.max(1, Math.round(all * 0.01));
  const nDel = Math.max(1, Math.round(all * 0.005));
  const nAdd = nDel;
  const lines = [];
  for (const e of files.slice(0, nEdit)) {
    const blob = git(cwd, 'cat-file', 'blob', e.sha);
    const edited = Buffer.concat([Buffer.from(`bench-switch: edited ${e.path}\n`), blob]);
    const sha = String(gitIn(cwd, ['hash-object', '-w', '--stdin'], edited)).trim();
    lines.push(`${e.mode} ${sha}\t${e.path}`);
  }
  for (const e of files.slice(nEdit, nEdit + nDel)) lines.push(`0 ${'0'.repeat(40)}\t${e.path}`);
  for (let i = 0; i < nAdd; i++) {
    const next = files[nEdit + nDel + i];
    const p = path.posix.join(path.posix.dirname(next.path), `bench-added-${i}.txt`);
    let text = '';
    for (let n = 0; text.length < 2000 + ((i * 7919) % 6000); n++)
      text += `${rank(`added${i}`, n)} added line ${n}\n`;
    const sha = String(gitIn(cwd, ['hash-object', '-w', '--stdin'], text)).trim();
    lines.push(`100644 ${sha}\t${p}`);
  }
  const index = path.join(gitDirPath, 'bench-switch.index');
  const env = {
    ...ENV,
    GIT_INDEX_FILE: index,
    GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
    GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
  };
  sh('git', ['read-tree', 'HEAD'], { cwd, env });
  sh('git', ['update-index', '--index-info'], { cwd, env, input: lines.join('\n') + '\n' });
  const tree = String(sh('git', ['write-tree'], { cwd, env })).trim();
  const commit = String(
    sh(
      'git',
      [
        'commit-tree',
        tree,
        '-p',
        'HEAD',
        '-m',
        'bench-switch: 1% edited, 0.5% added, 0.5% deleted',
      ],
      { cwd, env },
    ),
  ).trim();
  fs.rmSync(index, { force: true });
  git(cwd, 'branch', '-f', 'bench-switch', commit);
  return { commit, edited: nEdit, deleted: nDel, added: nAdd, entries: all };
}

/** git with stdin. */
function gitIn(cwd, args, input) {
  return sh('git', args, { cwd, env: ENV, input });
}

// ---------------------------------------------------------------------------------------------
// Trials

/** A child run asynchronously, so a signal is handled (and the rig torn down) between trials. */
function runChild(rig, cmd, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    rig.current = child;
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', reject);
    child.on('close', (status) => {
      rig.current = null;
      resolve({
        status,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
      });
    });
  });
}

function toolCommand(tool, mode, dir) {
  if (tool.kind === 'pcheckout') {
    const w = tool.workers ? ['--workers', String(tool.workers)] : [];
    if (mode === 'fresh') return [process.execPath, [CLI, '--json', ...w, dir]];
    if (mode === 'switch') return [process.execPath, [CLI, '--json', ...w, dir, 'bench-switch']];
    return [process.execPath, [CLI, '--json', '--restore', ...w, dir]];
  }
  const c = ['-c', `checkout.workers=${tool.workers}`];
  if (mode === 'fresh') return ['git', [...c, 'read-tree', '-u', '--reset', 'HEAD']];
  if (mode === 'switch') return ['git', [...c, 'checkout', '-q', 'bench-switch']];
  return ['git', [...c, 'checkout', '--', '.']];
}

/** Untimed check on the server's side; returns null or what is wrong. */
function verify(wt, mode) {
  const status = String(
    sh('git', ['--no-optional-locks', 'status', '--porcelain'], { cwd: wt.server, env: ENV }),
  );
  const problems = [];
  if (status.trim()) {
    const l = status.trim().split('\n');
    problems.push(`git status: ${l.length} lines: ${l.slice(0, 3).join(' | ')}`);
  }
  if (mode === 'switch') {
    const head = String(git(wt.server, 'symbolic-ref', '-q', 'HEAD')).trim();
    if (head !== 'refs/heads/bench-switch') problems.push(`HEAD is ${head}`);
  }
  return problems.length ? problems.join('; ') : null;
}

/** Waits for the clock to leave the current second, then rewrites the index through the mount. */
function settle(wt) {
  const ms = 1000 - (Date.now() % 1000) + 20;
  sleepMs(ms);
  git(wt.dir, 'update-index', '-q', '--refresh', '--force-write-index');
}

async function runCell(rig, cell, source, tools, trials, verifyWhat, result, save) {
  const { repo, mode, rtt, gitdir } = cell;
  const label = `${repo} ${mode} rtt ${rtt} gitdir ${gitdir}`;
  const times = Object.fromEntries(tools.map((t) => [t.id, []]));
  const failures = Object.fromEntries(tools.map((t) => [t.id, 0]));
  const summaries = [];
  const cellInfo = { ...cell, loadAtStart: machineLoad() };
  await rig.relayStats(true);
  const t0 = Date.now();

  // switch/restore: one worktree for the whole table, checked out untimed.
  let wt = null;
  let mainBranch = null;
  let deleted = [];
  if (mode !== 'fresh') {
    const p0 = Date.now();
    wt = cloneInExport(rig, source, gitdir);
    mainBranch = String(git(wt.server, 'symbolic-ref', '--short', 'HEAD')).trim();
    git(wt.server, 'read-tree', '-u', '--reset', 'HEAD');
    const gitDirPath = String(git(wt.server, 'rev-parse', '--absolute-git-dir')).trim();
    if (mode === 'switch') cellInfo.branch = makeSwitchBranch(wt.server, gitDirPath);
    else {
      const files = regularFiles(wt.server, 'restore');
      const n = files.length >= 1000 ? 500 : Math.floor(files.length / 2);
      deleted = files.slice(0, n).map((e) => e.path);
      cellInfo.restore = { deleted: n, regularFiles: files.length };
    }
    // The server's stat data is not the mount's: refresh the index through the mount (untimed).
    const r0 = Date.now();
    git(wt.dir, 'update-index', '-q', '--refresh');
    cellInfo.prepSeconds = {
      total: (Date.now() - p0) / 1000,
      refreshThroughMount: (Date.now() - r0) / 1000,
    };
    log(
      `${label}: prepared in ${cellInfo.prepSeconds.total.toFixed(1)} s (index refresh through the mount ${cellInfo.prepSeconds.refreshThroughMount.toFixed(1)} s)`,
    );
    if (mode === 'switch') settle(wt);
  }

  try {
    for (let t = 0; t < trials; t++) {
      for (const tool of tools) {
        let target = wt;
        if (mode === 'fresh') target = cloneInExport(rig, source, gitdir);
        if (mode === 'restore') for (const p of deleted) fs.unlinkSync(path.join(wt.dir, p));
        const [cmd, args] = toolCommand(tool, mode, target.dir);
        const load = machineLoad();
        const started = process.hrtime.bigint();
        const r = await runChild(rig, cmd, args, target.dir);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const rec = {
          ...cell,
          trial: t + 1,
          tool: tool.id,
          workers: tool.workers ?? null,
          seconds,
          ok: r.status === 0,
          load,
        };
        if (r.status !== 0) {
          rec.error = r.stderr.trim().split('\n').slice(-3).join(' | ');
          log(`!!! ${label} trial ${t + 1} ${tool.id} FAILED (exit ${r.status}): ${rec.error}`);
        }
        if (tool.kind === 'pcheckout' && r.status === 0) {
          try {
            rec.summary = JSON.parse(r.stdout);
          } catch {
            rec.error = 'unparsable --json output';
          }
          if (!tool.workers && rec.summary) summaries.push(rec.summary);
        }
        if (verifyWhat === 'all' || (verifyWhat === 'pcheckout' && tool.kind === 'pcheckout')) {
          rec.verify = r.status === 0 ? verify(target, mode) : 'not checked (failed)';
          if (rec.verify) {
            rec.ok = false;
            log(`!!! ${label} trial ${t + 1} ${tool.id} VERIFY FAILED: ${rec.verify}`);
          } else rec.verified = true;
        }
        if (rec.ok) times[tool.id].push(seconds);
        else failures[tool.id]++;
        result.trials.push(rec);
        log(
          `${label} trial ${t + 1} ${tool.id}: ${seconds.toFixed(2)} s${rec.ok ? '' : ' (FAILED)'}`,
        );
        // Back to the starting state (untimed).
        if (mode === 'fresh') target.remove();
        else if (mode === 'switch') {
          git(wt.dir, '-c', 'checkout.workers=16', 'checkout', '-q', '-f', mainBranch);
          if (!rec.ok) git(wt.dir, 'clean', '-fdq');
          settle(wt);
        } else if (!rec.ok) git(wt.dir, 'checkout', '-f', '--', '.');
        save('running');
      }
    }
  } finally {
    wt?.remove();
  }

  // Summary of the table.
  const med = Object.fromEntries(tools.map((t) => [t.id, median(times[t.id])]));
  const gits = tools.filter((t) => t.kind === 'git' && med[t.id] !== null);
  const gitBest = gits.length ? gits.reduce((a, b) => (med[b.id] < med[a.id] ? b : a)) : null;
  const pcs = tools.filter((t) => t.id.startsWith('pcheckout-') && med[t.id] !== null);
  const pcBest = pcs.length ? pcs.reduce((a, b) => (med[b.id] < med[a.id] ? b : a)) : null;
  const dflt = med.pcheckout ?? null;
  const detected = summaries[0];
  const phaseKeys = ['plan', 'write', 'index', 'racyWait', 'total'];
  const phases = summaries.length
    ? Object.fromEntries(
        phaseKeys.map((k) => [k, median(summaries.map((s) => s.timings?.[k] ?? 0))]),
      )
    : null;
  const relay = await rig.relayStats(true);
  const summary = {
    ...cellInfo,
    entries: detected?.entries ?? result.corpora[repo]?.entries ?? null,
    trials,
    wallSeconds: (Date.now() - t0) / 1000,
    loadAtEnd: machineLoad(),
    effectiveRtt: {
      statProbeMs: result.rtt[rtt]?.probe.median ?? null,
      relayHoldMedianMs: relay
        ? {
            up: relay.up.median,
            down: relay.down.median,
            sum: +(relay.up.median + relay.down.median).toFixed(3),
          }
        : null,
    },
    relay,
    medians: med,
    failures,
    gitBest: gitBest ? { tool: gitBest.id, seconds: med[gitBest.id] } : null,
    pcheckoutBest: pcBest ? { tool: pcBest.id, seconds: med[pcBest.id] } : null,
    ratios: {
      defaultOverGitBest: dflt && gitBest ? dflt / med[gitBest.id] : null,
      defaultOverGitW1: dflt && med['git-w1'] ? dflt / med['git-w1'] : null,
      defaultOverPcheckoutBest: dflt && pcBest ? dflt / med[pcBest.id] : null,
    },
    pcheckoutDefault: detected
      ? {
          filesystem: detected.filesystem,
          workers: detected.workers,
          pool: detected.pool,
          racy: detected.racy,
        }
      : null,
    phases,
  };
  result.cells.push(summary);
  return cellTable(summary, tools);
}

// ---------------------------------------------------------------------------------------------
// Output

const f2 = (x) => (x === null || x === undefined ? '-' : x.toFixed(2));

function cellTable(c, tools) {
  const { relay } = c;
  const load = [c.loadAtStart.load1, c.loadAtEnd.load1].join(' → ');
  const rttText =
    c.rtt > 0
      ? `rtt ${c.rtt} ms (relay held chunks median ${relay?.up.median} + ${relay?.down.median} ms; ` +
        `stat on the mount ${c.effectiveRtt.statProbeMs} ms)`
      : `rtt 0 (no relay; stat on the mount ${c.effectiveRtt.statProbeMs} ms)`;
  const lines = [
    `\n### ${c.repo} ${c.mode}, ${rttText}, .git on ${c.gitdir === 'mount' ? 'the mount' : 'the local disk'}`,
    `${c.entries ?? '?'} entries, ${c.trials} trials (medians), load average (1 min) ${load}, ` +
      `${c.wallSeconds.toFixed(0)} s` +
      (c.branch
        ? `; bench-switch: ${c.branch.edited} edited, ${c.branch.added} added, ${c.branch.deleted} deleted`
        : '') +
      (c.restore ? `; ${c.restore.deleted} files deleted` : ''),
  ];
  const d = c.pcheckoutDefault;
  if (d) {
    lines.push(
      `pcheckout default: filesystem ${d.filesystem.type} (network ${d.filesystem.network}), ` +
        `workers ${d.workers}, pool ${d.pool.used ? d.pool.workers : 'unused'}; phases (median ms): ` +
        ['plan', 'write', 'index', 'racyWait', 'total']
          .map((k) => `${k} ${c.phases[k]?.toFixed(0)}`)
          .join(', '),
    );
  }
  const ids = new Set(tools.map((t) => t.id));
  const counts = [...new Set(tools.filter((t) => t.workers).map((t) => t.workers))].sort(
    (a, b) => a - b,
  );
  const cellOf = (id) =>
    ids.has(id) ? f2(c.medians[id]) + (c.failures[id] ? ` (${c.failures[id]} failed)` : '') : '';
  lines.push('', '| workers | pcheckout s | git s |', '| --- | --- | --- |');
  for (const w of counts)
    lines.push(`| ${w} | ${cellOf(`pcheckout-w${w}`)} | ${cellOf(`git-w${w}`)} |`);
  if (ids.has('pcheckout'))
    lines.push(`| **default** (${d?.workers ?? '?'}) | **${cellOf('pcheckout')}** | |`);
  const r = c.ratios;
  lines.push(
    '',
    `pcheckout default / git's best (${c.gitBest?.tool ?? '-'}, ${f2(c.gitBest?.seconds)} s): ` +
      `**${f2(r.defaultOverGitBest)}**; / git w1: ${f2(r.defaultOverGitW1)}; ` +
      `/ pcheckout's best (${c.pcheckoutBest?.tool ?? '-'}): ${f2(r.defaultOverPcheckoutBest)}`,
  );
  const failed = Object.entries(c.failures).filter(([, n]) => n);
  if (failed.length)
    lines.push(`**FAILURES**: ${failed.map(([id, n]) => `${id} ${n}`).join(', ')}`);
  return lines.join('\n');
}

function summaryTable(result) {
  const lines = [
    '## Summary',
    '',
    '| repo | mode | rtt ms (stat probe ms) | .git | pcheckout default s | git best s | git w1 s | default / git best | default / git w1 | write ms | plan ms |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const c of result.cells) {
    lines.push(
      `| ${c.repo} | ${c.mode} | ${c.rtt} (${c.effectiveRtt.statProbeMs}) | ${c.gitdir} | ${f2(c.medians.pcheckout)} | ` +
        `${f2(c.gitBest?.seconds)} (${c.gitBest?.tool.replace('git-', '') ?? '-'}) | ${f2(c.medians['git-w1'])} | ` +
        `${f2(c.ratios.defaultOverGitBest)} | ${f2(c.ratios.defaultOverGitW1)} | ` +
        `${c.phases?.write?.toFixed(0) ?? '-'} | ${c.phases?.plan?.toFixed(0) ?? '-'} |`,
    );
  }
  return lines.join('\n');
}

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** One SVG per repo × mode × gitdir: median seconds by worker count, a line per tool and RTT. */
function writeCharts(result, jsonFile) {
  const groups = new Map();
  for (const c of result.cells) {
    const key = `${c.repo}-${c.mode}-${c.gitdir}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(c);
  }
  const palette = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#b07aa1'];
  for (const [key, cells] of groups) {
    const series = [];
    cells.forEach((c, i) => {
      const color = palette[i % palette.length];
      for (const kind of ['pcheckout', 'git']) {
        const pts = Object.entries(c.medians)
          .filter(([id, v]) => id.startsWith(`${kind}-w`) && v !== null)
          .map(([id, v]) => [Number(id.split('-w')[1]), v])
          .sort((a, b) => a[0] - b[0]);
        if (pts.length)
          series.push({ label: `${kind}, rtt ${c.rtt} ms`, color, dash: kind === 'git', pts });
      }
      if (c.medians.pcheckout !== null && c.pcheckoutDefault)
        series.push({
          label: `pcheckout default, rtt ${c.rtt}`,
          color,
          marker: [c.pcheckoutDefault.workers, c.medians.pcheckout],
        });
    });
    const all = series.flatMap((s) => (s.pts ? s.pts : [s.marker]));
    if (!all.length) continue;
    const xs = all.map((p) => p[0]);
    const lx0 = Math.log2(Math.min(...xs));
    const lx1 = Math.max(lx0 + 1, Math.log2(Math.max(...xs)));
    const maxV = Math.max(...all.map((p) => p[1])) * 1.08;
    const left = 64,
      top = 60,
      plotW = 520,
      plotH = 300;
    const width = left + plotW + 230;
    const height = top + plotH + 60;
    const X = (w) => left + ((Math.log2(w) - lx0) / (lx1 - lx0)) * plotW;
    const Y = (v) => top + plotH - (v / maxV) * plotH;
    const el = [
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
      `<rect width="${width}" height="${height}" fill="#fff"/>`,
      `<text x="${left}" y="22" font-size="15" font-weight="bold">${esc(`${cells[0].repo} ${cells[0].mode} on sshfs (.git on ${cells[0].gitdir === 'mount' ? 'the mount' : 'the local disk'})`)}</text>`,
      `<text x="${left}" y="40" fill="#555">${esc(`median of ${cells[0].trials} trials; solid pcheckout, dashed git, diamond pcheckout's default; ${result.machine.cores} cores, ${result.machine.git}`)}</text>`,
    ];
    const mag = 10 ** Math.floor(Math.log10(maxV));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => maxV / s <= 6);
    for (let v = 0; v <= maxV; v += step)
      el.push(
        `<line x1="${left}" x2="${left + plotW}" y1="${Y(v)}" y2="${Y(v)}" stroke="#ddd"/><text x="${left - 6}" y="${Y(v) + 4}" text-anchor="end">${+v.toFixed(2)}</text>`,
      );
    for (const w of [...new Set(xs)].sort((a, b) => a - b))
      el.push(`<text x="${X(w)}" y="${top + plotH + 16}" text-anchor="middle">${w}</text>`);
    el.push(
      `<text x="${left + plotW / 2}" y="${top + plotH + 34}" text-anchor="middle">workers</text>`,
    );
    el.push(
      `<text transform="translate(16 ${top + plotH / 2}) rotate(-90)" text-anchor="middle">median seconds</text>`,
    );
    el.push(`<line x1="${left}" x2="${left + plotW}" y1="${Y(0)}" y2="${Y(0)}" stroke="#333"/>`);
    let ly = top;
    for (const s of series) {
      if (s.pts) {
        el.push(
          `<polyline fill="none" stroke="${s.color}" stroke-width="2"${s.dash ? ' stroke-dasharray="6 4"' : ''} points="${s.pts.map(([w, v]) => `${X(w).toFixed(1)},${Y(v).toFixed(1)}`).join(' ')}"/>`,
        );
        for (const [w, v] of s.pts)
          el.push(
            `<circle cx="${X(w).toFixed(1)}" cy="${Y(v).toFixed(1)}" r="3" fill="${s.color}"><title>${esc(`${s.label}, ${w} workers: ${v.toFixed(2)} s`)}</title></circle>`,
          );
      } else {
        const [w, v] = s.marker;
        const cx = X(w),
          cy = Y(v);
        el.push(
          `<path d="M${cx} ${cy - 7} L${cx + 7} ${cy} L${cx} ${cy + 7} L${cx - 7} ${cy} Z" fill="none" stroke="${s.color}" stroke-width="2"><title>${esc(`${s.label}: ${v.toFixed(2)} s (${w} workers)`)}</title></path>`,
        );
      }
      el.push(
        `<line x1="${left + plotW + 16}" x2="${left + plotW + 40}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"${s.dash ? ' stroke-dasharray="6 4"' : ''}/><text x="${left + plotW + 46}" y="${ly + 4}">${esc(s.label)}</text>`,
      );
      ly += 16;
    }
    el.push('</svg>');
    fs.writeFileSync(jsonFile.replace(/\.json$/, '') + `-${key}.svg`, el.join('\n') + '\n');
  }
}

// Dispatch last: main() uses the constants above.
if (process.argv[2] === '--relay-child') {
  relayChild(process.argv[3], process.argv[4], Number(process.argv[5]));
} else {
  await main();
}
