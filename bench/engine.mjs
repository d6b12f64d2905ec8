#!/usr/bin/env node
// Many fresh checkouts of a small tree, the way a build system makes them: through one warm
// engine (createEngine(), one process for all calls), one `pcheckout` process per call, and one
// `git read-tree -u --reset HEAD` per call; `node -e ''` alternately as Node's own start-up.
//
//   node engine.mjs [--calls 100] [--sizes 10,1000] [--json results/engine-<time>.json]
//
// Each call gets its own `clone --no-checkout` (made untimed, in a tmpdir on the same
// filesystem), so every checkout is fresh. The engine's calls are timed in its process (from
// the call to its answer); the others are wall time around the child process.

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { BENCH_GIT_ENV, median, say, table } from './common.mjs';
import { engineTreeFiles } from './corpus.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MAIN = path.resolve(HERE, '..');
const CLI = path.join(MAIN, 'dist', 'cli.cjs');
const ENV = {
  ...BENCH_GIT_ENV,
  GIT_AUTHOR_DATE: '1671148800 +0000',
  GIT_COMMITTER_DATE: '1671148800 +0000',
};

const { values: opt } = parseArgs({
  options: {
    calls: { type: 'string', default: '100' },
    sizes: { type: 'string', default: '10,1000' },
    json: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opt.help) {
  console.log('usage: node engine.mjs [--calls 100] [--sizes 10,1000] [--json <file>]');
  process.exit(0);
}
const calls = Number(opt.calls);
const sizes = opt.sizes.split(',').map(Number);
if (!(calls >= 1) || sizes.some((n) => !(n >= 1))) {
  console.error('engine.mjs: --calls and --sizes take positive integers');
  process.exit(2);
}

const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: ENV, stdio: 'pipe' });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-engine-bench-'));
process.on('exit', () => fs.rmSync(work, { recursive: true, force: true }));

/** A repository of n files of 1–12 KB in a few directories, one commit, packed. */
function buildRepo(n) {
  const dir = path.join(work, `src-${n}`);
  fs.mkdirSync(dir);
  git(dir, 'init', '-q', '-b', 'main');
  // The same files as corpus.mjs's tiny (10) and small1k (1,000) corpora.
  for (const f of engineTreeFiles(n)) {
    fs.mkdirSync(path.join(dir, path.dirname(f.path)), { recursive: true });
    fs.writeFileSync(path.join(dir, f.path), f.data);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', `${n} files`);
  git(dir, 'gc', '-q');
  return dir;
}

let serial = 0;
function freshClone(src) {
  const dir = path.join(work, `c${++serial}`);
  git(work, 'clone', '-q', '--no-checkout', src, dir);
  return dir;
}

function wall(cmd, args, cwd) {
  const started = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd, env: ENV, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return ms;
}

function assertClean(dir) {
  const st = String(git(dir, 'status', '--porcelain'));
  if (st !== '') throw new Error(`${dir} is not clean after the checkout: ${st.slice(0, 200)}`);
}

const { createEngine } = await import(pathToFileURL(path.join(MAIN, 'dist', 'index.js')).href);
const results = { calls, machine: { cores: os.cpus().length, node: process.version }, sizes: {} };
for (const n of sizes) {
  say(`${n} files: building the repository and ${calls * 3} clones ...`);
  const src = buildRepo(n);
  const clones = Array.from({ length: calls * 3 }, () => freshClone(src));
  const engine = createEngine();
  const t = { engine: [], process: [], git: [], node: [] };
  for (let i = 0; i < calls; i++) {
    // Alternating: engine, process, git, node.
    const started = performance.now();
    await engine.checkout(clones[3 * i], {});
    t.engine.push(performance.now() - started);
    t.process.push(wall(process.execPath, [CLI, '--quiet', clones[3 * i + 1]]));
    t.git.push(wall('git', ['read-tree', '-u', '--reset', 'HEAD'], clones[3 * i + 2]));
    t.node.push(wall(process.execPath, ['-e', '']));
  }
  await engine.close();
  for (const i of [0, calls - 1]) for (const k of [0, 1, 2]) assertClean(clones[3 * i + k]);
  const m = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, +median(v).toFixed(2)]));
  results.sizes[n] = { medianMs: m, firstEngineMs: +t.engine[0].toFixed(2), raw: t };
  for (const c of clones) fs.rmSync(c, { recursive: true, force: true });
}

const rows = [
  ['files', 'engine ms/call', 'process ms', "node -e '' ms", 'process - node', 'git ms'],
];
for (const [n, r] of Object.entries(results.sizes)) {
  const m = r.medianMs;
  rows.push([n, m.engine, m.process, m.node, +(m.process - m.node).toFixed(1), m.git]);
}
console.log(`\n${calls} fresh checkouts per size, medians (engine's first call not excluded):`);
console.log(table(rows, ['r', 'r', 'r', 'r', 'r', 'r']));
const out =
  opt.json ??
  path.join(HERE, 'results', `engine-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`raw: ${out}`);
