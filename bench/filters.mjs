#!/usr/bin/env node
// A fresh checkout where a long-running process filter handles part of the files: ~2,000 files,
// 20% of them `filter=bench` (a trivial node driver speaking git's filter protocol, content
// passed through). pcheckout writes the filtered ones on the main thread through the one
// driver process and the rest on the pool; git with checkout.workers 1 and 2 does the same
// work (its filtered entries sequential, the rest in its parallel queue). Each run is its own
// process in a fresh `clone --no-checkout`, medians of --trials; results are checked against
// git's (untimed). The `-nofilter` rows check out the same tree without the driver configured
// (so without filtering): what the filter costs each tool.
//
//   node filters.mjs [--files 2000] [--filtered 0.2] [--trials 5] [--json out.json]

import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    files: { type: 'string', default: '2000' },
    filtered: { type: 'string', default: '0.2' },
    trials: { type: 'string', default: '5' },
    json: { type: 'string' },
  },
});
const FILES = Number(opt.files);
const FILTERED = Number(opt.filtered);
const TRIALS = Number(opt.trials);
const CLI = new URL('../dist/cli.cjs', import.meta.url).pathname;

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-filter-bench-'));
process.on('exit', () => fs.rmSync(root, { recursive: true, force: true }));
const env = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  HOME: root,
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@example.com',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@example.com',
};
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();

// The driver: handshake, then every clean/smudge request answered with its content unchanged.
const driver = path.join(root, 'driver.cjs');
fs.writeFileSync(
  driver,
  `let buf = Buffer.alloc(0), wake = null;
process.stdin.on('data', (d) => { buf = Buffer.concat([buf, d]); wake?.(); });
process.stdin.on('end', () => process.exit(0));
async function pkt() {
  for (;;) {
    if (buf.length >= 4) {
      const n = parseInt(buf.subarray(0, 4).toString(), 16);
      if (n === 0) { buf = buf.subarray(4); return null; }
      if (buf.length >= n) { const p = buf.subarray(4, n); buf = buf.subarray(n); return p; }
    }
    await new Promise((r) => (wake = r));
  }
}
const enc = (p) => p === null ? Buffer.from('0000') : Buffer.concat([Buffer.from((p.length + 4).toString(16).padStart(4, '0')), Buffer.from(p)]);
const send = (...ps) => process.stdout.write(Buffer.concat(ps.map(enc)));
(async () => {
  while (await pkt());
  send('git-filter-server\\n', 'version=2\\n', null);
  while (await pkt());
  send('capability=clean\\n', 'capability=smudge\\n', null);
  for (;;) {
    while (await pkt());
    const parts = [];
    for (let p; (p = await pkt()); ) parts.push(p);
    send('status=success\\n', null, ...parts, null, null);
  }
})();
`,
);

// A deterministic tree: FILES text files (1–8 KiB) in 40 directories; every 1/FILTERED-th is
// a .bin file the filter handles.
const repo = path.join(root, 'repo');
fs.mkdirSync(repo);
git(repo, 'init', '-q', '-b', 'main');
let seed = 4242;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const every = Math.round(1 / FILTERED);
for (let i = 0; i < FILES; i++) {
  const rel = `d${i % 40}/sub${i % 7}/file${i}.${i % every === 0 ? 'bin' : 'txt'}`;
  fs.mkdirSync(path.join(repo, path.dirname(rel)), { recursive: true });
  fs.writeFileSync(
    path.join(repo, rel),
    `line of file ${i}\n`.repeat(Math.floor(60 + rand() * 420)),
  );
}
fs.writeFileSync(path.join(repo, '.gitattributes'), '*.bin filter=bench\n');
git(repo, 'add', '-A');
git(repo, 'commit', '-qm', 'tree');
git(repo, 'gc', '-q');

let clones = 0;
function freshClone(filter) {
  const dir = path.join(root, `c${++clones}`);
  git(root, 'clone', '-q', '--no-checkout', repo, dir);
  if (filter) {
    git(dir, 'config', 'filter.bench.process', `${process.execPath} ${driver}`);
    git(dir, 'config', 'filter.bench.required', 'true');
  }
  return dir;
}

const pc = (dir) => [process.execPath, [CLI, '--json', '--workers', '2', '--no-racy-wait', dir]];
const gitW = (n) => () => [
  'git',
  ['-c', `checkout.workers=${n}`, 'read-tree', '-u', '--reset', 'HEAD'],
];
const TOOLS = {
  pcheckout: { command: pc, filter: true },
  'git-w1': { command: gitW(1), filter: true },
  'git-w2': { command: gitW(2), filter: true },
  'pcheckout-nofilter': { command: pc, filter: false },
  'git-w1-nofilter': { command: gitW(1), filter: false },
};

/** Every path with its mode and the sha1 of its bytes (what must be the same as git's). */
function contents(dir) {
  const out = [];
  const walk = (rel) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      if (!rel && name === '.git') continue;
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(path.join(dir, r));
      if (st.isDirectory()) walk(r);
      else {
        const sha = createHash('sha1')
          .update(fs.readFileSync(path.join(dir, r)))
          .digest('hex');
        out.push(`${(st.mode & 0o777).toString(8)} ${sha} ${r}`);
      }
    }
  };
  walk('');
  return out.join('\n');
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const times = Object.fromEntries(Object.keys(TOOLS).map((t) => [t, []]));
let summary;
let reference;
for (let t = 0; t < TRIALS; t++) {
  for (const [tool, { command, filter }] of Object.entries(TOOLS)) {
    const dir = freshClone(filter);
    const [cmd, args] = command(dir);
    const t0 = performance.now();
    const r = spawnSync(cmd, args, { cwd: dir, env, encoding: 'utf8' });
    times[tool].push((performance.now() - t0) / 1000);
    if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr}`);
    if (tool === 'pcheckout') summary = JSON.parse(r.stdout);
    // Untimed: the same bytes as git's (the driver passes content through: with or without
    // it, the files are the blobs), and git sees nothing modified.
    const got = contents(dir);
    reference ??= got;
    if (got !== reference) throw new Error(`${tool}: the worktree differs from the first run's`);
    const status = git(dir, 'status', '--porcelain');
    if (status !== '') throw new Error(`${tool}: git status is not clean:\n${status}`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const rows = Object.entries(times).map(([tool, xs]) => ({
  tool,
  median: +median(xs).toFixed(3),
  min: +Math.min(...xs).toFixed(3),
  max: +Math.max(...xs).toFixed(3),
}));
const facts = {
  files: summary.files,
  filtered: summary.filters.files,
  pool: summary.pool,
  timings: summary.timings,
  cores: os.availableParallelism(),
  trials: TRIALS,
};
console.log(
  `${FILES} files, ${summary.filters.files} through the process filter; pcheckout's pool: ${JSON.stringify(summary.pool)}`,
);
console.log('tool         median s   min s   max s');
for (const r of rows) {
  console.log(
    `${r.tool.padEnd(12)} ${String(r.median).padStart(8)} ${String(r.min).padStart(7)} ${String(r.max).padStart(7)}`,
  );
}
const best = Math.min(...rows.filter((r) => /^git-w\d$/.test(r.tool)).map((r) => r.median));
console.log(`pcheckout / best git median: ${(rows[0].median / best).toFixed(2)}`);
if (opt.json) fs.writeFileSync(opt.json, `${JSON.stringify({ rows, facts }, null, 2)}\n`);
