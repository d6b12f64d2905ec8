#!/usr/bin/env node
// A synthetic monorepo at 100k, 300k and 1,000,000 files: how time and memory grow with files.
//
//   node monorepo.mjs [--sizes 100k,300k,1m (20k: try the harness)] [--tools pcheckout,git-w1,git-w2,git-auto]
//                     [--build-only] [--trials 1] [--tmpfs-size 20g] [--json reference/<date>-monorepo.json]
//                     [--engine [--engine-calls 10]] [--status-pairs 0]
//
// The repository (built once per size, cached as <cache>/monorepo-<size>/source.git) comes from
// one `git fast-import` stream made by a deterministic generator: files of 0.5-8 KiB
// (log-uniform; text lines drawn from a fixed pool, so they compress as source does), about 10
// files per directory at depth 4-7, three directories of 5,000 entries, an exec bit on one file
// in 200 and a symlink on one in 1,000. Branch `base` holds it all; branch `next` changes 1% of
// the files, adds 0.5% and deletes 0.5%.
//
// For each tool, on a tmpfs, in a fresh `git clone --no-checkout --local -b base` (untimed):
//   fresh   pcheckout <dir>                  | git -c checkout.workers=N read-tree -u --reset HEAD
//   status  git status --porcelain           (the first one after the checkout; must print nothing)
//   switch  pcheckout <dir> next             | git -c checkout.workers=N checkout -q next
//   status  git status --porcelain
// each under /usr/bin/time (wall, peak RSS, CPU). The index of every tool is compared with
// git-w1's (`git ls-files -s --debug` digest) after each step. Writes JSON and an SVG chart.
//
// --status-pairs N: the tools' clones side by side (each tree of 1M files takes ~5 GB of the
// tmpfs, the clones share the pack: on this 24 GB machine two at a time; three leave ~4 GB and
// slow the last tool's fresh checkout by a third): each step is run by every tool in turn (each
// round starting with the next), each followed by
// its first status as above, then N more rounds of `git status` over all the trees in turn (the
// order reversed every other round). A single status at 1M files spreads 6.4-8.9 s between
// runs here; taken in turn, a slow spell of the machine falls on every tree alike ("in turn").
//
// --engine: also a warm engine (createEngine, peers/engine-server.mjs, one process for all its
// calls) in its own clone: the fresh checkout, then --engine-calls forced checkouts with nothing
// changed (the first arms the watch of every directory; the rest are settled), then 1% switches
// to next and back (two each), then two forced checkouts. Per call: wall time in the process,
// peak RSS of the call (VmHWM, reset through /proc/<pid>/clear_refs before it) and RSS after.
// The watch needs an inotify watch per directory (208,000 at 1M): when
// fs.inotify.max_user_watches is lower and writable, it is raised for the run and put back
// after (as watchman's and VS Code's docs tell their users to raise it); else the engine's
// summary says the watch stopped.

import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import {
  CLEAN_ENV,
  ensureTime,
  fmt,
  installSignalHandlers,
  machineLoad,
  mountScratch,
  say,
  table,
  timedRun,
} from './common.mjs';
import { cacheDir, fastImport, hash32, octaveSize, prng, run, WORDS } from './corpus.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MAIN = path.resolve(HERE, '..');
const SIZES = { '20k': 20_000, '100k': 100_000, '300k': 300_000, '1m': 1_000_000 };

const { values: opt } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100k,300k,1m' },
    tools: { type: 'string', default: 'pcheckout,git-w1,git-w2,git-auto' },
    trials: { type: 'string', default: '1' },
    'tmpfs-size': { type: 'string', default: '20g' },
    json: { type: 'string' },
    pcheckout: { type: 'string', default: process.env.PCHECKOUT_CLI || '' },
    timeout: { type: 'string', default: '1800' },
    'build-only': { type: 'boolean', default: false },
    engine: { type: 'boolean', default: false },
    'engine-calls': { type: 'string', default: '10' },
    'status-pairs': { type: 'string', default: '0' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opt.help) {
  process.stdout.write(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n\n')[0]);
  process.stdout.write('\n');
  process.exit(0);
}
const fail = (m) => {
  say(`monorepo: ${m}`);
  process.exit(2);
};
const list = (s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const sizes = list(opt.sizes);
for (const s of sizes) if (!SIZES[s]) fail(`unknown size ${s}: one of ${Object.keys(SIZES)}`);
const trials = Number(opt.trials);
if (!Number.isInteger(trials) || trials < 1) fail('--trials must be a positive integer');
const timeoutMs = Number(opt.timeout) * 1000;
const engineCalls = Number(opt['engine-calls']);
if (!Number.isInteger(engineCalls) || engineCalls < 2) fail('--engine-calls must be 2 or more');
const statusPairs = Number(opt['status-pairs']);
if (!Number.isInteger(statusPairs) || statusPairs < 0) fail('--status-pairs must be 0 or more');
const PCHECKOUT_CLI = path.resolve(opt.pcheckout || path.join(MAIN, 'dist', 'cli.cjs'));

// ---------------------------------------------------------------------------------------------
// The generator

const BIG_DIRS = 3;
const BIG_ENTRIES = 5000;
const LINE_POOL = (() => {
  const rnd = prng(0x6d6f6e6f);
  const lines = [];
  for (let i = 0; i < 1 << 16; i++) {
    const n = 2 + (rnd() % 10);
    let s = '\t'.repeat(rnd() % 4);
    for (let k = 0; k < n; k++) s += (k ? ' ' : '') + WORDS[rnd() % WORDS.length];
    lines.push(s + (rnd() % 5 === 0 ? ' {\n' : ';\n'));
  }
  return lines;
})();
const EXTS = ['c', 'h', 'ts', 'js', 'py', 'go', 'rs', 'md', 'json', 'txt'];

/** A file's content: whole lines from the pool up to a size of 0.5-8 KiB, seeded by (id, rev). */
function content(id, rev) {
  const rnd = prng(hash32('content', id, rev));
  const size = octaveSize(rnd, 512, 4);
  const parts = [`// file ${id} revision ${rev}\n`];
  let len = parts[0].length;
  while (len < size) {
    const line = LINE_POOL[rnd() & 0xffff];
    parts.push(line);
    len += line.length;
  }
  return Buffer.from(parts.join(''), 'latin1');
}

/**
 * The path of file `id` (0 <= id < n): ids below the big directories' share go 10 to a leaf
 * directory, the leaf named by the decimal digits of its number (one component per digit, at
 * least 4), with 0-2 more components below it picked by its hash: depth 4-7. Injective: the
 * digit components give the number back.
 */
function filePath(id, n) {
  const big = BIG_DIRS * BIG_ENTRIES;
  if (id >= n - big) {
    const k = id - (n - big);
    const d = Math.floor(k / BIG_ENTRIES);
    return `generated/locale${d}/msg_${String(k % BIG_ENTRIES).padStart(5, '0')}.json`;
  }
  return `${leafDir(Math.floor(id / 10), n)}/${WORDS[hash32('f', id) % WORDS.length]}_${id % 10}.${EXTS[id % EXTS.length]}`;
}

function leafDir(leaf, n) {
  const digits = Math.max(4, String(Math.ceil(n / 10) - 1).length);
  const ds = String(leaf).padStart(digits, '0');
  const parts = [];
  for (let i = 0; i < ds.length; i++)
    parts.push(`${WORDS[(i * 11 + Number(ds[i])) % WORDS.length]}${ds[i]}`);
  const extra = hash32('d', leaf) % 3;
  if (extra >= 1) parts.push('src');
  if (extra >= 2) parts.push('impl');
  return parts.join('/');
}

/** The mode of file `id`: 1 in 1,000 a symlink (to its neighbour), 1 in 200 executable. */
const kindOf = (id) => (id % 1000 === 999 ? 'link' : id % 200 === 7 ? 'exec' : 'file');

async function writeFile(w, id, n, rev, at = filePath(id, n)) {
  const kind = kindOf(id);
  const data =
    kind === 'link' ? Buffer.from(path.posix.basename(filePath(id - 1, n))) : content(id, rev);
  const mode = kind === 'link' ? '120000' : kind === 'exec' ? '100755' : '100644';
  await w.write(`M ${mode} inline ${at}\ndata ${data.length}\n`);
  await w.write(data);
  await w.write('\n');
}

/** The second commit: every 100th file (from 3) changed, every 200th (from 11) deleted, n/200 added. */
const changed = (id) => id % 100 === 3;
const deleted = (id) => id % 200 === 11;

async function buildRepo(size, dir) {
  const n = SIZES[size];
  const tmp = `${dir}.tmp`;
  await fsp.rm(tmp, { recursive: true, force: true });
  await fsp.mkdir(tmp, { recursive: true });
  const gitDir = path.join(tmp, 'source.git');
  await run('git', ['init', '-q', '--bare', gitDir]);
  const t0 = Date.now();
  say(`monorepo ${size}: generating ${n} files (git fast-import) ...`);
  await fastImport(gitDir, async (w) => {
    const ident = 'pcheckout bench <bench@pcheckout.invalid>';
    await w.write(`commit refs/heads/base\nmark :1\ncommitter ${ident} 1600000000 +0000\n`);
    await w.write(`data 22\nmonorepo: first state\n`);
    for (let id = 0; id < n; id++) await writeFile(w, id, n, 0);
    await w.write(`\ncommit refs/heads/next\nmark :2\ncommitter ${ident} 1600003600 +0000\n`);
    await w.write(`data 23\nmonorepo: second state\nfrom :1\n`);
    for (let id = 0; id < n; id++) {
      if (deleted(id)) await w.write(`D ${filePath(id, n)}\n`);
      else if (changed(id) && kindOf(id) !== 'link') await writeFile(w, id, n, 1);
    }
    // Added: new files beside existing ones (every 200th leaf gets one more).
    for (let k = 0; k < n / 200; k++) {
      const id = (k * 200 + 5) % (n - BIG_DIRS * BIG_ENTRIES);
      const at = `${leafDir(Math.floor(id / 10), n)}/added_${k}.${EXTS[k % EXTS.length]}`;
      await writeFile(w, id, n, 2, at);
    }
    await w.write('\n');
  });
  await run('git', ['--git-dir', gitDir, 'symbolic-ref', 'HEAD', 'refs/heads/base']);
  const packs = fs.readdirSync(path.join(gitDir, 'objects', 'pack'));
  const packBytes = packs
    .filter((f) => f.endsWith('.pack'))
    .reduce((a, f) => a + fs.statSync(path.join(gitDir, 'objects', 'pack', f)).size, 0);
  const diff = await run('git', [
    '--git-dir',
    gitDir,
    'diff',
    '--name-status',
    '--no-renames',
    'base',
    'next',
  ]);
  const status = { A: 0, M: 0, D: 0, T: 0 };
  for (const line of diff.stdout.split('\n'))
    if (line) status[line[0]] = (status[line[0]] ?? 0) + 1;
  const info = {
    size,
    files: n,
    packBytes,
    baseEntries: n,
    switchChanges: status,
    buildSeconds: +((Date.now() - t0) / 1000).toFixed(1),
  };
  fs.writeFileSync(path.join(tmp, 'corpus.json'), JSON.stringify(info, null, 2) + '\n');
  await fsp.rm(dir, { recursive: true, force: true });
  await fsp.rename(tmp, dir);
  say(
    `monorepo ${size}: ${n} files, pack ${(packBytes / 2 ** 20).toFixed(0)} MiB, switch ` +
      `A ${status.A} M ${status.M} D ${status.D} T ${status.T} (${info.buildSeconds} s)`,
  );
  return info;
}

async function ensureRepo(size) {
  const dir = path.join(cacheDir(), `monorepo-${size}`);
  const marker = path.join(dir, 'corpus.json');
  const info = fs.existsSync(marker)
    ? JSON.parse(fs.readFileSync(marker, 'utf8'))
    : await buildRepo(size, dir);
  return { repo: path.join(dir, 'source.git'), info };
}

// ---------------------------------------------------------------------------------------------
// The tools

const gitTool = (id, workers) => ({
  id,
  fresh: (dir) => [
    'git',
    ['-C', dir, '-c', `checkout.workers=${workers}`, 'read-tree', '-u', '--reset', 'HEAD'],
  ],
  switch: (dir) => [
    'git',
    ['-C', dir, '-c', `checkout.workers=${workers}`, 'checkout', '-q', 'next'],
  ],
});
const TOOLS = {
  pcheckout: {
    id: 'pcheckout',
    fresh: (dir) => ['node', [PCHECKOUT_CLI, '--json', dir]],
    switch: (dir) => ['node', [PCHECKOUT_CLI, '--json', dir, 'next']],
  },
  'git-w1': gitTool('git-w1', 1),
  'git-w2': gitTool('git-w2', 2),
  'git-auto': gitTool('git-auto', 0),
};
const tools = list(opt.tools);
for (const t of tools) if (!TOOLS[t]) fail(`unknown tool ${t}: one of ${Object.keys(TOOLS)}`);

const indexDigest = (dir) =>
  createHash('sha1')
    .update(
      execFileSync('git', ['-C', dir, 'ls-files', '-s'], {
        env: { ...process.env, ...CLEAN_ENV },
        maxBuffer: 1 << 30,
      }),
    )
    .digest('hex');

async function step(cmd, args, dir) {
  const r = await timedRun(cmd, args, { env: {}, timeoutMs, cwd: dir });
  return {
    ok: r.ok,
    seconds: +r.seconds.toFixed(3),
    rssMB: r.rssMB,
    cpuSeconds: r.cpuSeconds,
    ...(r.ok ? {} : { error: r.error }),
    out: r.stdout,
  };
}

/** A new `clone --no-checkout` of `base` at `dir`, with `next` as a branch (untimed). */
async function freshClone(source, dir) {
  await fsp.rm(dir, { recursive: true, force: true });
  await run('git', ['clone', '--no-checkout', '--local', '-q', '-b', 'base', source, dir], {
    env: CLEAN_ENV,
  });
  await run('git', ['-C', dir, 'branch', '-q', 'next', 'origin/next'], { env: CLEAN_ENV });
  execFileSync('sync');
}

/** One tool's step (fresh or switch) in `dir`, then the first `git status` and the index's digest. */
async function stepAndStatus(tool, dir, res, name) {
  const cmd = tool[name](dir);
  const s = await step(cmd[0], cmd[1], dir);
  delete s.out;
  res[name] = s;
  if (!s.ok) {
    say(`  ${res.size} ${tool.id} ${name}: FAILED: ${s.error}`);
    return false;
  }
  const st = await step('git', ['status', '--porcelain'], dir);
  res[`${name}Status`] = { ...st, out: undefined, clean: st.ok && st.out === '' };
  if (st.out) res[`${name}Status`].sample = st.out.split('\n').slice(0, 5);
  res[`${name}Index`] = indexDigest(dir);
  say(
    `  ${res.size} ${tool.id} ${name}: ${fmt(s.seconds)} s, ${s.rssMB} MB; status ${fmt(st.seconds)} s ` +
      `${res[`${name}Status`].clean ? 'clean' : 'NOT CLEAN'}`,
  );
  return true;
}

async function trial(tool, source, root, size, round) {
  const dir = path.join(root, `t-${size}-${tool.id}-${round}`);
  await freshClone(source, dir);
  const res = { tool: tool.id, size, round, load: machineLoad() };
  try {
    for (const name of ['fresh', 'switch']) if (!(await stepAndStatus(tool, dir, res, name))) break;
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
  return res;
}

/**
 * --status-pairs: every tool's clone kept side by side; after each step of all of them, `pairs`
 * more rounds of `git status` over all the trees in turn (the order reversed every other round),
 * so that what the machine does meanwhile falls on every tree alike.
 */
async function lockstepRound(ts, source, root, size, round, pairs) {
  // Each round starts with the next tool, so none always runs with the others' trees in memory.
  const order = ts.map((_, j) => ts[(j + round) % ts.length]);
  const runs = order.map((tool) => ({
    tool,
    dir: path.join(root, `t-${size}-${tool.id}-${round}`),
    res: { tool: tool.id, size, round, load: machineLoad() },
    ok: true,
  }));
  try {
    for (const r of runs) await freshClone(source, r.dir);
    for (const name of ['fresh', 'switch']) {
      for (const r of runs) if (r.ok) r.ok = await stepAndStatus(r.tool, r.dir, r.res, name);
      const live = runs.filter((r) => r.ok);
      for (const r of live) r.res[`${name}StatusRounds`] = [];
      for (let k = 0; k < pairs; k++) {
        for (const r of k % 2 === 0 ? live : [...live].reverse()) {
          const st = await step('git', ['status', '--porcelain'], r.dir);
          r.res[`${name}StatusRounds`].push(st.ok && st.out === '' ? st.seconds : null);
        }
      }
      if (live.length > 0 && pairs > 0) {
        say(
          `  ${size} ${name}, git status in turn: ` +
            live
              .map(
                (r) => `${r.tool.id} ${r.res[`${name}StatusRounds`].map((x) => fmt(x)).join('/')}`,
              )
              .join('; '),
        );
      }
    }
  } finally {
    for (const r of runs) await fsp.rm(r.dir, { recursive: true, force: true });
  }
  return runs.map((r) => r.res);
}

// ---------------------------------------------------------------------------------------------
// The warm engine

const WATCHES = '/proc/sys/fs/inotify/max_user_watches';
const WANTED_WATCHES = 1_048_576;

/** Raises max_user_watches for the run where it is lower and writable; gives back a restore. */
function enoughWatches() {
  const old = Number(fs.readFileSync(WATCHES, 'utf8').trim());
  if (old >= WANTED_WATCHES) return () => {};
  try {
    fs.writeFileSync(WATCHES, String(WANTED_WATCHES));
  } catch {
    say(`  engine: ${WATCHES} is ${old} and not writable: the watch stops where it runs out`);
    return () => {};
  }
  say(`  engine: ${WATCHES} ${old} -> ${WANTED_WATCHES} for the run (put back after)`);
  return () => fs.writeFileSync(WATCHES, String(old));
}

const procStatus = (pid, key) => {
  const m = fs
    .readFileSync(`/proc/${pid}/status`, 'utf8')
    .match(new RegExp(`^${key}:\\s+(\\d+)`, 'm'));
  return m ? Math.round(Number(m[1]) / 1024) : null;
};

/** A warm engine in its own process: one call at a time, its time and memory. */
function engineServer() {
  const child = spawn(process.execPath, [path.join(HERE, 'peers', 'engine-server.mjs')], {
    env: { ...process.env, ...CLEAN_ENV, PCHECKOUT_DIST: path.join(MAIN, 'dist', 'index.js') },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const answers = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  let id = 0;
  return {
    async call(repo, options) {
      fs.writeFileSync(`/proc/${child.pid}/clear_refs`, '5'); // VmHWM from here
      child.stdin.write(`${JSON.stringify({ id: ++id, call: 'checkout', repo, options })}\n`);
      const { value, done } = await answers.next();
      if (done) throw new Error('the engine process ended');
      const a = JSON.parse(value);
      if (!a.ok) throw new Error(a.error);
      return {
        seconds: +(a.ms / 1000).toFixed(4),
        peakMB: procStatus(child.pid, 'VmHWM'),
        rssMB: procStatus(child.pid, 'VmRSS'),
        settled: a.summary.watch.settled,
        known: a.summary.watch.known,
        stopped: a.summary.watch.stopped,
        changed: a.summary.created + a.summary.updated + a.summary.deleted,
      };
    },
    async close() {
      child.stdin.end();
      await new Promise((r) => child.on('close', r));
    },
  };
}

async function engineTrial(source, root, size, round) {
  const dir = path.join(root, `t-${size}-engine-${round}`);
  await freshClone(source, dir);
  const res = { tool: 'engine', size, round, load: machineLoad(), calls: [] };
  const server = engineServer();
  const call = async (label, options) => {
    const r = { label, ...(await server.call(dir, options)) };
    res.calls.push(r);
    say(
      `  ${size} engine ${label}: ${fmt(r.seconds, 3)} s, peak ${r.peakMB} MB, after ${r.rssMB} MB` +
        `${r.settled ? ', settled' : ''}, known ${r.known}${r.stopped ? ` (watch stopped: ${r.stopped})` : ''}`,
    );
    return r;
  };
  try {
    await call('fresh', {});
    for (let i = 0; i < engineCalls; i++)
      await call(i === 0 ? 'force (arms)' : 'force', { force: true });
    for (let i = 0; i < 2; i++) {
      await call('switch next', { ref: 'next' });
      if (i === 0) res.switchIndex = indexDigest(dir);
      await call('switch base', { ref: 'base' });
    }
    for (let i = 0; i < 2; i++) await call('force after', { force: true });
  } finally {
    await server.close();
    await fsp.rm(dir, { recursive: true, force: true });
  }
  return res;
}

/** The engine's figures of a size: medians over its trials. */
function engineSummary(results, size, gitBestSwitch) {
  const rs = results.filter((r) => r.size === size && r.tool === 'engine');
  if (!rs.length) return null;
  const pick = (f) => median(rs.map(f));
  const calls = (r, label) => r.calls.filter((c) => c.label === label);
  const settledForce = pick((r) => median(calls(r, 'force').map((c) => c.seconds)));
  const warmSwitch = pick((r) =>
    median([...calls(r, 'switch next'), ...calls(r, 'switch base')].map((c) => c.seconds)),
  );
  const first = pick((r) => r.calls[0].rssMB);
  const last = pick((r) => Math.max(...r.calls.slice(1, engineCalls + 1).map((c) => c.rssMB)));
  const git = results.filter((g) => g.size === size && g.tool === 'git-w1');
  return {
    fresh: pick((r) => r.calls[0].seconds),
    arm: pick((r) => calls(r, 'force (arms)')[0].seconds),
    settledForce,
    settledAll: rs.every((r) => calls(r, 'force').every((c) => c.settled)),
    warmSwitch,
    warmSwitchPeakMB: pick((r) =>
      Math.max(...[...calls(r, 'switch next'), ...calls(r, 'switch base')].map((c) => c.peakMB)),
    ),
    warmSwitchVsGitBest:
      gitBestSwitch && warmSwitch !== null ? +(warmSwitch / gitBestSwitch).toFixed(3) : null,
    rssAfterFirstMB: first,
    rssAfterCallsMaxMB: last,
    rssGrowth: first ? +(last / first).toFixed(3) : null,
    sameIndex: !git.length || rs.every((r) => git.every((g) => g.switchIndex === r.switchIndex)),
  };
}

// ---------------------------------------------------------------------------------------------
// Report

const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function summarize(results) {
  const out = {};
  for (const size of sizes) {
    const n = SIZES[size];
    const per = {};
    for (const t of tools) {
      const rs = results.filter((r) => r.size === size && r.tool === t);
      const m = (k, f) => median(rs.map((r) => (r[k]?.ok ? r[k][f] : NaN)));
      // Every alternated status of every trial (null where one was not clean or failed).
      const alt = (k) =>
        rs.some((r) => r[k]) ? median(rs.flatMap((r) => (r[k] ?? []).map((x) => x ?? NaN))) : null;
      per[t] = {
        fresh: m('fresh', 'seconds'),
        freshRssMB: m('fresh', 'rssMB'),
        freshStatus: m('freshStatus', 'seconds'),
        switch: m('switch', 'seconds'),
        switchRssMB: m('switch', 'rssMB'),
        switchStatus: m('switchStatus', 'seconds'),
        freshStatusInTurn: alt('freshStatusRounds'),
        switchStatusInTurn: alt('switchStatusRounds'),
        clean: rs.every(
          (r) =>
            r.freshStatus?.clean &&
            r.switchStatus?.clean &&
            [...(r.freshStatusRounds ?? []), ...(r.switchStatusRounds ?? [])].every(
              (x) => x !== null,
            ),
        ),
        sameIndex: rs.every(
          (r) =>
            !results.find((g) => g.size === size && g.tool === 'git-w1') ||
            results
              .filter((g) => g.size === size && g.tool === 'git-w1')
              .every((g) => g.freshIndex === r.freshIndex && g.switchIndex === r.switchIndex),
        ),
      };
      per[t].msPer1kFiles = per[t].fresh === null ? null : +((per[t].fresh * 1e6) / n).toFixed(2);
      per[t].bytesPerFile =
        per[t].freshRssMB === null ? null : Math.round((per[t].freshRssMB * 2 ** 20) / n);
    }
    const gits = tools.filter((t) => t.startsWith('git-'));
    const best = (k) => {
      const v = gits.map((t) => per[t][k]).filter((x) => x !== null);
      return v.length ? Math.min(...v) : null;
    };
    const ratio = (k) =>
      per.pcheckout?.[k] != null && best(k) ? +(per.pcheckout[k] / best(k)).toFixed(3) : null;
    out[size] = {
      files: n,
      tools: per,
      engine: engineSummary(results, size, best('switch')),
      vsGitBest: {
        fresh: ratio('fresh'),
        switch: ratio('switch'),
        freshRss: ratio('freshRssMB'),
        switchRss: ratio('switchRssMB'),
        freshStatus: ratio('freshStatus'),
        switchStatus: ratio('switchStatus'),
        freshStatusInTurn: ratio('freshStatusInTurn'),
        switchStatusInTurn: ratio('switchStatusInTurn'),
      },
    };
  }
  return out;
}

function esc(s) {
  return String(s).replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]);
}

/** Two panels: ms per 1,000 files (fresh) and bytes of peak RSS per file, per size and tool. */
function chart(summary, title) {
  const colors = {
    pcheckout: '#4e79a7',
    'git-w1': '#f28e2b',
    'git-w2': '#e15759',
    'git-auto': '#76b7b2',
  };
  const panels = [
    ['fresh: ms per 1,000 files', (s, t) => s.tools[t].msPer1kFiles],
    ['fresh: peak RSS bytes per file', (s, t) => s.tools[t].bytesPerFile],
    ['1% switch: seconds', (s, t) => s.tools[t].switch],
  ];
  const barW = 16;
  const groupW = tools.length * barW + 24;
  const panelW = 60 + sizes.length * groupW;
  const plotH = 220;
  const top = 60;
  const width = panels.length * (panelW + 20) + 20;
  const height = top + plotH + 90;
  const el = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="20" y="22" font-size="15" font-weight="bold">${esc(title)}</text>`,
  ];
  panels.forEach(([label, get], p) => {
    const x0 = 20 + p * (panelW + 20) + 40;
    let max = 0;
    for (const s of sizes) for (const t of tools) max = Math.max(max, get(summary[s], t) ?? 0);
    max = max || 1;
    const y = (v) => top + plotH - (v / max) * plotH;
    el.push(`<text x="${x0}" y="${top - 12}" font-weight="bold">${esc(label)}</text>`);
    el.push(
      `<line x1="${x0}" x2="${x0 + sizes.length * groupW}" y1="${y(0)}" y2="${y(0)}" stroke="#333"/>`,
    );
    sizes.forEach((s, i) => {
      const gx = x0 + 8 + i * groupW;
      tools.forEach((t, j) => {
        const v = get(summary[s], t);
        if (v === null || v === undefined) return;
        const bx = gx + j * barW;
        el.push(
          `<rect x="${bx}" y="${y(v)}" width="${barW - 2}" height="${y(0) - y(v)}" fill="${colors[t] ?? '#888'}"><title>${esc(`${t} ${s}: ${v}`)}</title></rect>`,
          `<text x="${bx + barW / 2}" y="${y(v) - 3}" text-anchor="middle" font-size="8">${esc(fmt(v, v < 10 ? 2 : 0))}</text>`,
        );
      });
      el.push(
        `<text x="${gx + (tools.length * barW) / 2}" y="${y(0) + 14}" text-anchor="middle">${esc(s)}</text>`,
      );
    });
  });
  tools.forEach((t, j) => {
    const lx = 20 + j * 110;
    el.push(
      `<rect x="${lx}" y="${height - 22}" width="12" height="12" fill="${colors[t] ?? '#888'}"/>`,
      `<text x="${lx + 16}" y="${height - 12}">${esc(t)}</text>`,
    );
  });
  el.push('</svg>');
  return el.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------

async function main() {
  ensureTime();
  if (tools.includes('pcheckout') && !fs.existsSync(PCHECKOUT_CLI)) {
    fail(`${PCHECKOUT_CLI} not found: build the engine first (cd .. && npm install)`);
  }
  installSignalHandlers(() => {});
  const repos = {};
  for (const s of sizes) repos[s] = await ensureRepo(s);
  if (opt['build-only']) return;
  const { mnt, teardown } = mountScratch('tmpfs', cacheDir(), {
    tmpfsSize: opt['tmpfs-size'],
    // Each 1M tree is ~1.1 million inodes; --status-pairs keeps every tool's side by side.
    tmpfsInodes: '8m',
  });
  const results = [];
  try {
    for (const s of sizes) {
      const source = path.join(mnt, `source-${s}.git`);
      say(`monorepo ${s}: copying the source into the tmpfs (untimed)`);
      await run('cp', ['-a', repos[s].repo, source]);
      for (let round = 0; round < trials; round++) {
        if (statusPairs > 0) {
          const ts = tools.map((t) => TOOLS[t]);
          results.push(...(await lockstepRound(ts, source, mnt, s, round, statusPairs)));
        } else {
          for (const t of tools) results.push(await trial(TOOLS[t], source, mnt, s, round));
        }
        if (opt.engine) {
          const restore = enoughWatches();
          try {
            results.push(await engineTrial(source, mnt, s, round));
          } finally {
            restore();
          }
        }
      }
      await fsp.rm(source, { recursive: true, force: true });
    }
  } finally {
    teardown();
  }
  const summary = summarize(results);
  const rows = [
    [
      'size',
      'tool',
      'fresh s',
      'ms/1k files',
      'RSS MB',
      'B/file',
      'status s',
      'in turn s',
      'switch s',
      'RSS MB',
      'status s',
      'in turn s',
      'clean',
      'index = git',
    ],
  ];
  for (const s of sizes)
    for (const t of tools) {
      const r = summary[s].tools[t];
      rows.push([
        s,
        t,
        fmt(r.fresh),
        fmt(r.msPer1kFiles, 2),
        fmt(r.freshRssMB, 0),
        fmt(r.bytesPerFile, 0),
        fmt(r.freshStatus),
        fmt(r.freshStatusInTurn),
        fmt(r.switch),
        fmt(r.switchRssMB, 0),
        fmt(r.switchStatus),
        fmt(r.switchStatusInTurn),
        r.clean ? 'yes' : 'NO',
        r.sameIndex ? 'yes' : 'NO',
      ]);
    }
  process.stdout.write(table(rows, 'llrrrrrrrrrrll') + '\n');
  for (const s of sizes) {
    say(`${s} pcheckout / git's best: ${JSON.stringify(summary[s].vsGitBest)}`);
    if (summary[s].engine) say(`${s} warm engine: ${JSON.stringify(summary[s].engine)}`);
  }
  if (opt.json) {
    const doc = {
      schema: 1,
      bench: 'monorepo',
      date: new Date().toISOString(),
      command: `node monorepo.mjs ${process.argv.slice(2).join(' ')}`,
      machine: {
        cpus: os.cpus().length,
        memGB: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        git: execFileSync('git', ['--version']).toString().trim(),
      },
      corpora: Object.fromEntries(sizes.map((s) => [s, repos[s].info])),
      summary,
      results,
    };
    fs.mkdirSync(path.dirname(path.resolve(opt.json)), { recursive: true });
    fs.writeFileSync(opt.json, JSON.stringify(doc, null, 2) + '\n');
    const svg = opt.json.replace(/\.json$/, '') + '.svg';
    fs.writeFileSync(
      svg,
      chart(
        summary,
        `pcheckout and git on a synthetic monorepo (${sizes.join(', ')} files, tmpfs, ${os.cpus().length} cores)`,
      ),
    );
    say(`wrote ${opt.json} and ${svg}`);
  }
}

main().catch((e) => {
  say(`monorepo: ${e.stack || e.message}`);
  process.exit(1);
});
