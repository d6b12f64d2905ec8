#!/usr/bin/env node
// Durability modes on a fresh ext4 image: a fresh checkout of ~3,000 small files (4–16 KB) with
// `--fsync none`, `file` and `batch`, modes alternating, each trial on a new clone in its own
// process. The figure is the engine's own time: summary.timings.total minus timings.racyWait.
//
//   node fsync.mjs [--files 3000] [--trials 5] [--size 2G] [--workers <n>]
//
// Root is needed (loop mount). The image lives in a temp directory under /var/tmp and is unmounted
// and removed at the end, also on Ctrl-C.

import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BENCH_GIT_ENV } from './common.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(HERE, '..', 'dist', 'cli.cjs');
const ENV = BENCH_GIT_ENV;
const MODES = ['none', 'file', 'batch'];

const { values: opt } = parseArgs({
  options: {
    files: { type: 'string', default: '3000' },
    trials: { type: 'string', default: '5' },
    size: { type: 'string', default: '2G' },
    workers: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opt.help) {
  process.stdout.write(
    'usage: node fsync.mjs [--files 3000] [--trials 5] [--size 2G] [--workers <n>]\n',
  );
  process.exit(0);
}
if (process.getuid?.() !== 0) {
  process.stderr.write('fsync.mjs: needs root to loop-mount an ext4 image\n');
  process.exit(1);
}

const work = fs.mkdtempSync('/var/tmp/pcheckout-fsync-');
const img = path.join(work, 'img');
const mnt = path.join(work, 'mnt');
let mounted = false;

function teardown() {
  if (mounted) {
    try {
      execFileSync('umount', [mnt], { stdio: 'pipe' });
    } catch {
      execFileSync('umount', ['-l', mnt], { stdio: 'pipe' });
    }
    mounted = false;
  }
  fs.rmSync(work, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    process.stderr.write(`\n${sig}: tearing down\n`);
    teardown();
    process.exit(130);
  });
}

const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: ENV, stdio: 'pipe' });

/** A repository of `n` files of 4–16 KB in directories of 30, deterministic content. */
function buildSource(dir, n) {
  fs.mkdirSync(dir);
  git(dir, 'init', '-q', '-b', 'main');
  for (let i = 0; i < n; i++) {
    const sub = path.join(dir, `d${Math.floor(i / 300)}`, `s${Math.floor(i / 30) % 10}`);
    fs.mkdirSync(sub, { recursive: true });
    const size = 4096 + ((i * 2654435761) % 12289);
    const chunks = [];
    let have = 0;
    for (let k = 0; have < size; k++) {
      const h = createHash('sha256').update(`${i}:${k}`).digest('hex');
      chunks.push(`${h}\n`);
      have += h.length + 1;
    }
    fs.writeFileSync(path.join(sub, `f${i}.txt`), chunks.join('').slice(0, size));
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'files');
  git(dir, 'gc', '-q');
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

try {
  const n = Number(opt.files);
  const trials = Number(opt.trials);
  process.stderr.write(`building a ${n}-file repository...\n`);
  const src = path.join(work, 'src');
  buildSource(src, n);
  execFileSync('truncate', ['-s', opt.size, img]);
  execFileSync('mkfs.ext4', ['-q', '-F', img]);
  fs.mkdirSync(mnt);
  execFileSync('mount', ['-o', 'loop', img, mnt]);
  mounted = true;

  const results = Object.fromEntries(MODES.map((m) => [m, []]));
  for (let t = 0; t < trials; t++) {
    // Rotate the order so no mode always runs first (or right after the heaviest).
    const order = MODES.map((_, k) => MODES[(k + t) % MODES.length]);
    for (const mode of order) {
      const dir = path.join(mnt, `w-${mode}-${t}`);
      git(work, 'clone', '-q', '--no-checkout', src, dir);
      execFileSync('sync', ['-f', dir]); // the clone's own writes are not the checkout's
      const args = [CLI, '--json', '--fsync', mode];
      if (opt.workers) args.push('--workers', opt.workers);
      const r = spawnSync(process.execPath, [...args, dir], { env: ENV, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`pcheckout --fsync ${mode} failed: ${r.stderr}`);
      const s = JSON.parse(r.stdout);
      results[mode].push({
        engine: s.timings.total - s.timings.racyWait,
        barrier: s.fsync.barrierMs,
        barrierKind: s.fsync.barrier,
        files: s.files,
        workers: s.workers,
      });
      process.stderr.write(
        `trial ${t + 1} ${mode}: ${(s.timings.total - s.timings.racyWait).toFixed(0)} ms (barrier ${s.fsync.barrier} ${s.fsync.barrierMs} ms)\n`,
      );
      fs.rmSync(dir, { recursive: true, force: true });
      execFileSync('sync', ['-f', mnt]);
    }
  }

  const load = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');
  const files = results.none[0].files;
  const out = [
    `fresh checkout of ${files} files (4–16 KB) on a fresh ext4 image (${opt.size}, loop), ` +
      `${trials} trials, workers ${results.none[0].workers}; load average ${load}`,
    '',
    '| --fsync | engine ms (median) | min | max | barrier | barrier ms (median) | vs batch |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  const batch = median(results.batch.map((r) => r.engine));
  for (const mode of MODES) {
    const e = results[mode].map((r) => r.engine);
    out.push(
      `| ${mode} | ${median(e).toFixed(0)} | ${Math.min(...e).toFixed(0)} | ${Math.max(...e).toFixed(0)} | ` +
        `${results[mode][0].barrierKind} | ${median(results[mode].map((r) => r.barrier)).toFixed(1)} | ` +
        `${(median(e) / batch).toFixed(2)}x |`,
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  teardown();
}
