#!/usr/bin/env node
// How host-friendly the engine is: pcheckout embedded in a build system or a dev server whose
// event loop must keep serving while a tree is written. Everything runs in this process, on the
// engine imported from a dist path (default ../dist/index.js), so a newer build can be compared.
//
//   node host.mjs [--dist ../dist/index.js] [--parts stall,no-slower,concurrency,abort,warm]
//                 [--trials 3] [--fs tmpfs|disk] [--json results/host-<time>.json]
//
// Parts (see README.md, "Host-friendliness"):
//   stall        event-loop stalls (monitorEventLoopDelay at 1 ms + a 1 ms setInterval probe's
//                longest gap) during: a fresh checkout() of Linux; a fresh engine.materialize of
//                Linux; a ~1% switch on Linux through checkout({ref}) and through an engine; a
//                midsize (PowerShell stand-in) switch and materialize refresh through an engine
//   no-slower    the Linux fresh checkout's wall time, in-process, against
//                git -c checkout.workers=N read-tree -u --reset HEAD (N = 1, 2, 0)
//   concurrency  Promise.all of two materializations (Linux, midsize) through ONE engine against
//                the same two one after the other
//   abort        abort() 50 ms into a fresh ${label(LARGE)} checkout({signal}): time to the rejection, its
//                code, what git status says then, and a checkout({force:true}) repairing it
//   warm         no-op engine.materialize refreshes of a midsize tree: median ms, RSS after the
//                1st call, after 40 warm calls and after engine.close() (own child process)
// racyWait: false everywhere (git never waits either; the wait would be an idle second).

import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  CLEAN_ENV,
  addCleanup,
  cleanupAll,
  firstLine,
  fmt,
  installSignalHandlers,
  machineLoad,
  median,
  mountScratch,
  say,
  table,
  tryRun,
} from './common.mjs';
import { cacheDir, ensureCorpus, run } from './corpus.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PARTS = ['stall', 'no-slower', 'concurrency', 'abort', 'warm'];
const LABELS = { linux: 'Linux', midsize: 'midsize (PowerShell stand-in)' };
const label = (name) => LABELS[name] ?? name;
// The same clean git configuration for git's children and for the engine in this process.
Object.assign(process.env, CLEAN_ENV);
const COMMIT_ENV = {
  GIT_AUTHOR_NAME: 'pcheckout bench',
  GIT_AUTHOR_EMAIL: 'bench@pcheckout.invalid',
  GIT_COMMITTER_NAME: 'pcheckout bench',
  GIT_COMMITTER_EMAIL: 'bench@pcheckout.invalid',
  GIT_AUTHOR_DATE: '1671148800 +0000',
  GIT_COMMITTER_DATE: '1671148800 +0000',
};

const { values: opt } = parseArgs({
  options: {
    dist: { type: 'string', default: path.join(HERE, '..', 'dist', 'index.js') },
    parts: { type: 'string', default: PARTS.join(',') },
    trials: { type: 'string', default: '3' },
    fs: { type: 'string', default: 'tmpfs' },
    'abort-after': { type: 'string', default: '50' },
    large: { type: 'string', default: 'linux' },
    mid: { type: 'string', default: 'midsize' },
    'warm-calls': { type: 'string', default: '40' },
    json: { type: 'string' },
    // Internal: the warm part's child process.
    'child-warm': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opt.help) {
  console.log(`usage: node host.mjs [options]
  --dist <path>        the engine's dist/index.js (default ../dist/index.js)
  --parts <list>       ${PARTS.join(',')} (default: all)
  --trials <n>         trials per case (default 3)
  --fs tmpfs|disk      where the trees are written: a tmpfs mounted for the run (root), or a
                       directory in the corpus cache on the disk (default tmpfs)
  --abort-after <ms>   when the abort part calls abort() (default 50)
  --warm-calls <n>     warm calls of the warm part (default 40)
  --large <corpus>     the large corpus (default linux); --mid <corpus>: the mid-size one
                       (default midsize); e.g. --large small --mid small1k to try it quickly
  --json <file>        results (default results/host-<time>.json)`);
  process.exit(0);
}
const DIST = path.resolve(opt.dist);
const TRIALS = Number(opt.trials);
const ABORT_AFTER = Number(opt['abort-after']);
const WARM_CALLS = Number(opt['warm-calls']);
const LARGE = opt.large;
const MID = opt.mid;
const parts = opt.parts
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const p of parts) if (!PARTS.includes(p)) usage(`unknown part ${p} (known: ${PARTS})`);
if (!(TRIALS >= 1) || !(ABORT_AFTER >= 0) || !(WARM_CALLS >= 2))
  usage('bad --trials, --abort-after or --warm-calls');
if (!['tmpfs', 'disk'].includes(opt.fs)) usage('--fs takes tmpfs or disk');

function usage(msg) {
  console.error(`host.mjs: ${msg}`);
  process.exit(2);
}

const pc = await import(pathToFileURL(DIST).href);
for (const name of ['checkout', 'materialize', 'createEngine']) {
  if (typeof pc[name] !== 'function') usage(`${DIST} exports no ${name}()`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.now();
const round = (x, d = 1) => (x === null || x === undefined ? null : +x.toFixed(d));
const git = (cwd, args, opts = {}) =>
  run('git', ['-C', cwd, ...args], { ...opts, env: { ...CLEAN_ENV, ...opts.env } }).then(
    (r) => r.stdout,
  );

// ---------------------------------------------------------------------------------------------
// The warm part's child: its own process, so that its RSS figures are its own.

if (opt['child-warm']) {
  const { repo, dir } = JSON.parse(opt['child-warm']);
  process.stdout.write(`${JSON.stringify(await warmChild(repo, dir))}\n`);
  process.exit(0);
}

async function warmChild(repo, dir) {
  const mb = () => round(process.memoryUsage().rss / 2 ** 20, 1);
  const res = { gcAvailable: typeof globalThis.gc === 'function', rssMB: { beforeFirst: mb() } };
  const engine = pc.createEngine();
  const call = async () => {
    const m = startMonitor();
    const t0 = now();
    const s = await engine.materialize(repo, dir, { racyWait: false });
    const ms = now() - t0;
    return { ms, stall: m.stop(), s };
  };
  const first = await call();
  res.first = { ms: round(first.ms), maxStallMs: first.stall.maxGapMs, files: first.s.files };
  res.rssMB.afterFirst = mb();
  const warm = [];
  for (let i = 0; i < WARM_CALLS; i++) {
    await sleep(5); // a host does other things between calls
    const c = await call();
    warm.push({
      ms: round(c.ms, 2),
      maxStallMs: c.stall.maxGapMs,
      written: c.s.files + c.s.symlinks,
      created: c.s.created,
      updated: c.s.updated,
      deleted: c.s.deleted,
      watchKnown: c.s.watch?.known ?? null,
      timings: c.s.timings,
    });
  }
  res.rssMB.afterWarm = mb();
  res.warm = warm;
  await engine.close();
  res.rssMB.afterClose = mb();
  if (res.gcAvailable) {
    globalThis.gc();
    await sleep(50);
    globalThis.gc();
    res.rssMB.afterCloseGc = mb();
  }
  return res;
}

// ---------------------------------------------------------------------------------------------
// The event-loop monitor

/**
 * Starts monitorEventLoopDelay({ resolution: 1 }) and a 1 ms setInterval probe. stop() returns
 * the probe's longest gap between ticks (also the gap from its last tick to stop(): a call that
 * blocks the loop until it resolves ends with such a gap), the histogram's p99, max and mean
 * (ms), the ticks seen, and the gaps of 50 ms or more with when they began (ms after start).
 */
function startMonitor() {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t0 = now();
  let last = t0;
  let maxGap = 0;
  let ticks = 0;
  const long = [];
  const note = (t) => {
    const gap = t - last;
    if (gap > maxGap) maxGap = gap;
    if (gap >= 50) long.push({ atMs: round(last - t0), ms: round(gap) });
    last = t;
  };
  const iv = setInterval(() => {
    ticks++;
    note(now());
  }, 1);
  return {
    stop() {
      note(now());
      clearInterval(iv);
      h.disable();
      const ns = (x) => round(x / 1e6, 2);
      return {
        maxGapMs: round(maxGap, 1),
        p99Ms: ns(h.percentile(99)),
        histMaxMs: ns(h.max),
        meanMs: ns(h.mean),
        ticks,
        longGaps: long.sort((a, b) => b.ms - a.ms).slice(0, 8),
      };
    },
  };
}

/** Times one call with the monitor running: { ok, wallMs, stall, summary | error, code }. */
async function measured(fn) {
  const load = machineLoad();
  const m = startMonitor();
  const t0 = now();
  try {
    const summary = await fn();
    const wallMs = now() - t0;
    return { ok: true, wallMs: round(wallMs), stall: m.stop(), load, summary: slim(summary) };
  } catch (e) {
    const wallMs = now() - t0;
    return {
      ok: false,
      wallMs: round(wallMs),
      stall: m.stop(),
      load,
      error: firstLine(e),
      code: e?.code,
    };
  }
}

/** The summary without what is long and not needed here. */
function slim(s) {
  if (!s || typeof s !== 'object') return s;
  const { collisions, warnings, ...rest } = s;
  return { ...rest, collisions: collisions?.length ?? 0, warnings: warnings?.slice(0, 5) ?? [] };
}

// ---------------------------------------------------------------------------------------------
// Results

const startedAt = new Date();
const jsonFile =
  opt.json ??
  path.join(HERE, 'results', `host-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
const results = {
  schema: 1,
  script: 'bench/host.mjs',
  state: 'running',
  startedAt: startedAt.toISOString(),
  command:
    `node ${path.relative(process.cwd(), fileURLToPath(import.meta.url)) || 'host.mjs'} ${process.argv.slice(2).join(' ')}`.trim(),
  options: {
    dist: DIST,
    parts,
    trials: TRIALS,
    fs: opt.fs,
    abortAfterMs: ABORT_AFTER,
    warmCalls: WARM_CALLS,
    racyWait: false,
  },
  dist: await distFacts(),
  machine: await machineFacts(),
  loadavg: { start: os.loadavg().map((x) => +x.toFixed(2)) },
  corpora: {},
  skipped: [],
  parts: {},
};

function save(state = results.state) {
  results.state = state;
  results.loadavg.now = os.loadavg().map((x) => +x.toFixed(2));
  fs.mkdirSync(path.dirname(jsonFile), { recursive: true });
  fs.writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
}

/** A bit of the future API missing: printed, recorded, never silent. */
function skip(part, what, reason) {
  say(`[${part}] skipped: ${what} — ${reason}`);
  results.skipped.push({ part, what, reason });
}

async function distFacts() {
  const dir = path.dirname(DIST);
  const st = fs.statSync(DIST);
  const top = await tryRun('git', ['-C', dir, 'rev-parse', '--show-toplevel']);
  return {
    path: DIST,
    mtime: st.mtime.toISOString(),
    commit: top ? await tryRun('git', ['-C', top, 'rev-parse', 'HEAD']) : null,
    dirty: top
      ? Boolean(await tryRun('git', ['-C', top, 'status', '--porcelain', '--untracked-files=no']))
      : null,
    exports: Object.keys(pc).sort(),
  };
}

async function machineFacts() {
  return {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memGB: round(os.totalmem() / 2 ** 30, 1),
    kernel: os.release(),
    node: process.version,
    git: await tryRun('git', ['--version']),
  };
}

// ---------------------------------------------------------------------------------------------
// Trees: corpora, a scratch filesystem, fresh clones, the ~1% commit

let scratch; // { root }
const bases = {}; // corpus name -> { repo (bare clone with bench-1pct), info, onePercent }

async function corpusWithWait(name) {
  for (let i = 0; ; i++) {
    try {
      return await ensureCorpus(name);
    } catch (e) {
      if (!/is being built by pid/.test(e.message) || i >= 120) throw e;
      if (i % 6 === 0) say(`${firstLine(e)} — waiting`);
      await sleep(10_000);
    }
  }
}

async function setupScratch() {
  if (opt.fs === 'tmpfs') {
    const m = mountScratch('tmpfs', path.join(cacheDir(), 'host-scratch'), { tmpfsSize: '10g' });
    scratch = { root: m.mnt, kind: 'tmpfs', teardown: m.teardown };
  } else {
    fs.mkdirSync(cacheDir(), { recursive: true });
    const root = fs.mkdtempSync(path.join(cacheDir(), 'host-disk-'));
    const teardown = addCleanup(() => fs.rmSync(root, { recursive: true, force: true }));
    scratch = { root, kind: 'disk', teardown };
  }
  results.fs = {
    kind: scratch.kind,
    root: scratch.root,
    type: await tryRun('stat', ['-f', '-c', '%T', scratch.root]),
  };
}

/**
 * The corpus as a bare clone on the scratch filesystem (objects copied once when the corpus
 * lives on another filesystem), with a branch bench-1pct: ~1% of master's files changed.
 */
async function base(name) {
  if (bases[name]) return bases[name];
  const corpus = await corpusWithWait(name);
  results.corpora[name] = corpus.info;
  // A repository with no checkout (materialize refuses a bare one), the objects hardlinked;
  // clones hardlink only within one filesystem, so elsewhere the corpus is copied here first.
  const repo = path.join(scratch.root, `base-${name}`);
  say(`${label(name)}: a clone on the scratch filesystem and the ~1% commit (untimed) ...`);
  let from = corpus.repo;
  if (fs.statSync(scratch.root).dev !== fs.statSync(corpus.repo).dev) {
    from = path.join(scratch.root, `source-${name}.git`);
    await run('cp', ['-a', corpus.repo, from]);
  }
  await run('git', ['clone', '--no-checkout', '--local', '-q', from, repo], { env: CLEAN_ENV });
  const onePercent = await makeOnePercent(repo);
  // The new objects packed, as a fetch would bring them.
  await git(repo, ['repack', '-d', '-q']);
  say(
    `${label(name)}: bench-1pct = ${onePercent.commit.slice(0, 12)}: ${JSON.stringify(onePercent.diff)}`,
  );
  bases[name] = { repo, info: corpus.info, onePercent };
  results.corpora[name].onePercent = onePercent;
  return bases[name];
}

function hash32(...p) {
  return createHash('sha1').update(p.join('\0')).digest().readUInt32BE(0);
}

/**
 * refs/heads/bench-1pct on top of master: of the regular files whose path hash is 0 modulo 100,
 * 3 in 4 edited (a comment line at the top; binary ones deleted instead), 1 in 8 deleted, 1 in 8
 * left and a new file added next to it. Fixed identity and dates: always the same commit.
 */
async function makeOnePercent(repo) {
  const entries = (await git(repo, ['ls-tree', '-r', '-z', 'refs/heads/master']))
    .split('\0')
    .filter(Boolean)
    .map((rec) => {
      const tab = rec.indexOf('\t');
      const [mode, type, sha] = rec.slice(0, tab).split(' ');
      return { mode, type, sha, path: rec.slice(tab + 1) };
    });
  const chosen = entries.filter(
    (e) => (e.mode === '100644' || e.mode === '100755') && hash32('host-1pct', e.path) % 100 === 0,
  );
  const blobs = await catBlobs(
    repo,
    chosen.map((e) => e.sha),
  );
  const tmp = fs.mkdtempSync(path.join(scratch.root, 'edits-'));
  const writes = []; // { mode, path, file }
  const deletes = [];
  chosen.forEach((e, k) => {
    const buf = blobs.get(e.sha);
    const binary = buf.subarray(0, 8000).includes(0);
    if (k % 8 === 6 || (binary && k % 8 !== 7)) deletes.push(e.path);
    else if (k % 8 === 7) {
      const file = path.join(tmp, `a${k}`);
      const dir = path.posix.dirname(e.path);
      const rel = `${dir === '.' ? '' : `${dir}/`}host-bench-new-${k}.txt`;
      fs.writeFileSync(
        file,
        `pcheckout host bench: a new file next to ${e.path}\n`.repeat(20 + (k % 50)),
      );
      writes.push({ mode: '100644', path: rel, file });
    } else {
      const file = path.join(tmp, `m${k}`);
      fs.writeFileSync(
        file,
        Buffer.concat([Buffer.from(`/* pcheckout host bench: edit of ${e.path} */\n`), buf]),
      );
      writes.push({ mode: e.mode, path: e.path, file });
    }
  });
  const shas = (
    await git(repo, ['hash-object', '-w', '--no-filters', '--stdin-paths'], {
      input: writes.map((w) => w.file).join('\n') + '\n',
    })
  )
    .trim()
    .split('\n');
  fs.rmSync(tmp, { recursive: true, force: true });
  const idx = path.join(scratch.root, `index-1pct-${process.pid}`);
  const env = { GIT_INDEX_FILE: idx };
  await git(repo, ['read-tree', 'master'], { env });
  const zero = '0'.repeat(40);
  const info = [
    ...deletes.map((p) => `0 ${zero}\t${p}`),
    ...writes.map((w, i) => `${w.mode} ${shas[i]}\t${w.path}`),
  ];
  await git(repo, ['update-index', '--index-info'], { env, input: info.join('\n') + '\n' });
  const tree = (await git(repo, ['write-tree'], { env })).trim();
  fs.rmSync(idx, { force: true });
  const master = (await git(repo, ['rev-parse', 'master'])).trim();
  const commit = (
    await git(
      repo,
      ['commit-tree', tree, '-p', master, '-m', 'pcheckout host bench: ~1% changed'],
      {
        env: COMMIT_ENV,
      },
    )
  ).trim();
  await git(repo, ['update-ref', 'refs/heads/bench-1pct', commit]);
  const diff = { changed: 0 };
  const parts = (await git(repo, ['diff', '--no-renames', '--name-status', '-z', master, commit]))
    .split('\0')
    .filter(Boolean);
  for (let i = 0; i + 1 < parts.length; i += 2) {
    diff[parts[i]] = (diff[parts[i]] || 0) + 1;
    diff.changed++;
  }
  return { branch: 'bench-1pct', commit, master, entries: entries.length, diff };
}

/** Blob contents by id, through one `git cat-file --batch`. */
async function catBlobs(repo, shas) {
  const uniq = [...new Set(shas)];
  const out = await new Promise((resolve, reject) => {
    const child = spawn('git', ['-C', repo, 'cat-file', '--batch'], {
      env: { ...process.env, ...CLEAN_ENV },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const chunks = [];
    child.stdout.on('data', (d) => chunks.push(d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(chunks))
        : reject(new Error(`git cat-file --batch: exit ${code}`)),
    );
    child.stdin.end(uniq.join('\n') + '\n');
  });
  const map = new Map();
  let at = 0;
  for (const sha of uniq) {
    const nl = out.indexOf(10, at);
    const [id, type, size] = out.subarray(at, nl).toString().split(' ');
    if (id !== sha || type !== 'blob')
      throw new Error(`cat-file: unexpected ${out.subarray(at, nl)}`);
    map.set(sha, out.subarray(nl + 1, nl + 1 + Number(size)));
    at = nl + 1 + Number(size) + 1;
  }
  return map;
}

let serial = 0;
const target = (what) => path.join(scratch.root, `${what}-${++serial}`);

/** A worktree holding only .git and no index, as after `git clone --no-checkout`. */
async function freshClone(name, what = `fresh-${name}`) {
  const b = await base(name);
  const dir = target(what);
  await run('git', ['clone', '--no-checkout', '--local', '-q', b.repo, dir], { env: CLEAN_ENV });
  if (fs.existsSync(path.join(dir, '.git', 'index'))) throw new Error('clone wrote an index');
  // Local branches for the switches (a clone has only master).
  await git(dir, ['branch', '-q', 'bench-1pct', 'origin/bench-1pct']);
  return dir;
}

/** A clone checked out at master by git, settled (no racy entries), for the switches. */
async function checkedOutClone(name, what) {
  const dir = await freshClone(name, what);
  await git(dir, ['-c', 'checkout.workers=2', 'read-tree', '-u', '--reset', 'HEAD']);
  await settle(dir);
  return dir;
}

/** Waits for the clock to leave this second, then rewrites the index: no racily clean entries. */
async function settle(dir) {
  await nextSecond();
  await git(dir, ['update-index', '-q', '--refresh', '--force-write-index']);
}

async function nextSecond() {
  const wait = (Math.floor(Date.now() / 1000) + 1) * 1000 + 20 - Date.now();
  await sleep(wait);
}

const rmTree = (dir) => fsp.rm(dir, { recursive: true, force: true });

async function statusLines(dir) {
  const out = await git(dir, ['status', '--porcelain']);
  return out.split('\n').filter(Boolean);
}

/** git status is clean and HEAD is where it should be; returns null or what is wrong. */
async function checkClean(dir, branch) {
  try {
    const st = await statusLines(dir);
    if (st.length) return `git status shows ${st.length} lines: ${st.slice(0, 3).join(' | ')}`;
    if (branch) {
      const head = (await git(dir, ['symbolic-ref', '-q', 'HEAD']).catch(() => '')).trim();
      if (head !== `refs/heads/${branch}`)
        return `HEAD is ${head || 'detached'}, expected ${branch}`;
    }
    return null;
  } catch (e) {
    return firstLine(e);
  }
}

/** Regular files and symlinks under dir, .git excluded. */
async function countFiles(dir) {
  let n = 0;
  const walk = async (d) => {
    for (const e of await fsp.readdir(d, { withFileTypes: true })) {
      if (e.name === '.git' && d === dir) continue;
      if (e.isDirectory()) await walk(path.join(d, e.name));
      else n++;
    }
  };
  await walk(dir);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Part 1: event-loop stalls

const stallCases = []; // { id, corpus, what, runs: [measured + verify] }

function stallCase(id, corpus, what) {
  let c = stallCases.find((x) => x.id === id);
  if (!c) {
    c = { id, corpus, what, runs: [] };
    stallCases.push(c);
    results.parts.stall = { cases: stallCases };
  }
  return c;
}

function logRun(tag, r) {
  say(
    `${tag.padEnd(44)} ${r.ok ? `${fmt(r.wallMs / 1000, 3)} s` : `FAILED (${r.code ?? ''} ${r.error})`}` +
      `  max stall ${fmt(r.stall.maxGapMs, 1)} ms, p99 ${fmt(r.stall.p99Ms, 1)} ms` +
      (r.verify ? `  [${r.verify}]` : ''),
  );
}

async function record(c, extra, fn, check) {
  const r = await measured(fn);
  Object.assign(r, extra);
  if (r.ok && check) {
    const bad = await check(r);
    if (bad) {
      r.ok = false;
      r.verify = `verification failed: ${bad}`;
    }
  }
  c.runs.push(r);
  logRun(`${c.id}${extra.direction ? ` ${extra.direction}` : ''}`, r);
  save();
  return r;
}

/** Whether the API takes dryRun: probed on a midsize clone (unknown options are refused). */
async function probeDryRun() {
  const dir = await freshClone(MID, 'probe-dryrun');
  try {
    await pc.checkout(dir, { dryRun: true, racyWait: false });
    const written = (await fsp.readdir(dir)).filter((n) => n !== '.git').length;
    if (written) return { ok: false, reason: 'dryRun accepted but the checkout wrote files' };
    return { ok: true };
  } catch (e) {
    return { ok: false, reason: `${e.code ?? 'error'}: ${firstLine(e)}` };
  } finally {
    await rmTree(dir);
  }
}

async function partStall() {
  const mid = await base(MID);
  const lin = await base(LARGE);
  const dry = await probeDryRun();
  if (!dry.ok)
    skip(
      'stall',
      `a dryRun of the ${label(LARGE)} fresh checkout`,
      `the API takes no dryRun (${dry.reason})`,
    );
  let phaseNoted = false;
  for (let t = 0; t < TRIALS; t++) {
    say(`\n-- stall, trial ${t + 1}/${TRIALS}`);
    // (a) fresh checkout() of Linux, with onProgress recorded.
    {
      const dir = await freshClone(LARGE);
      const prog = {
        events: 0,
        firstAtMs: null,
        lastAtMs: null,
        keys: new Set(),
        phases: new Map(),
      };
      const t0 = now();
      const onProgress = (p) => {
        const at = now() - t0;
        prog.events++;
        prog.firstAtMs ??= round(at);
        prog.lastAtMs = round(at);
        for (const k of Object.keys(p ?? {})) prog.keys.add(k);
        if (p?.phase !== undefined && !prog.phases.has(p.phase))
          prog.phases.set(p.phase, round(at));
      };
      const c = stallCase(
        `${LARGE}-fresh-checkout`,
        LARGE,
        'checkout() of a fresh clone (only .git, no index)',
      );
      const r = await record(
        c,
        { trial: t },
        () => pc.checkout(dir, { racyWait: false, onProgress }),
        () => checkClean(dir, 'master'),
      );
      r.progress = { ...prog, keys: [...prog.keys], phases: Object.fromEntries(prog.phases) };
      if (!phaseNoted) {
        phaseNoted = true;
        if (!prog.phases.size) {
          skip(
            'stall',
            'the progress phase timeline',
            `onProgress events carry no phase (keys: ${[...prog.keys].join(', ') || 'none: no event'})`,
          );
        }
      }
      await rmTree(dir);
    }
    // (a') a dryRun of the same, where the API has it.
    if (dry.ok) {
      const dir = await freshClone(LARGE);
      const c = stallCase(
        `${LARGE}-fresh-dryrun`,
        LARGE,
        'checkout({dryRun:true}) of a fresh clone',
      );
      await record(c, { trial: t }, () => pc.checkout(dir, { racyWait: false, dryRun: true }));
      await rmTree(dir);
    }
    // (b) fresh engine.materialize of Linux into a new directory, a new engine.
    {
      const dir = target('mat-linux');
      const engine = pc.createEngine();
      const c = stallCase(
        `${LARGE}-fresh-materialize`,
        LARGE,
        'engine.materialize (new engine) into a new directory',
      );
      await record(
        c,
        { trial: t },
        () => engine.materialize(lin.repo, dir, { racyWait: false }),
        async (r) =>
          r.summary.files + r.summary.symlinks === lin.onePercent.entries
            ? null
            : `${r.summary.files + r.summary.symlinks} written of ${lin.onePercent.entries}`,
      );
      await engine.close();
      await rmTree(dir);
    }
    // (c) a ~1% switch on Linux: checkout({ref}) there and back, then an engine there and back.
    await switches(LARGE, t, { plain: true });
    // (d) midsize: a switch through an engine, and a materialize refresh.
    await switches(MID, t, { plain: false });
    {
      const dir = target('mat-midsize');
      const engine = pc.createEngine();
      const first = await measured(() =>
        engine.materialize(mid.repo, dir, { racyWait: false, ref: 'master' }),
      );
      if (!first.ok) throw new Error(`${MID} materialize failed: ${first.error}`);
      const c = stallCase(
        `${MID}-materialize-refresh`,
        MID,
        'engine.materialize of a materialized dir at the ~1% commit (and back)',
      );
      for (const [direction, ref] of [
        ['master→bench-1pct', 'bench-1pct'],
        ['bench-1pct→master', 'master'],
      ]) {
        await nextSecond();
        await record(
          c,
          { trial: t, direction, firstCallMs: first.wallMs },
          () => engine.materialize(mid.repo, dir, { racyWait: false, ref }),
          (r) =>
            r.summary.created + r.summary.updated + r.summary.deleted > 0
              ? null
              : 'the refresh changed nothing',
        );
      }
      await engine.close();
      await rmTree(dir);
    }
  }
}

/** Switches master → bench-1pct → master on a checked-out clone: plainly, then with an engine. */
async function switches(name, t, { plain }) {
  const dir = await checkedOutClone(name, `switch-${name}`);
  const legs = [
    ['master→bench-1pct', 'bench-1pct'],
    ['bench-1pct→master', 'master'],
  ];
  if (plain) {
    const c = stallCase(
      `${name}-1pct-switch-checkout`,
      name,
      'checkout({ref}) master ↔ bench-1pct',
    );
    for (const [direction, ref] of legs) {
      await record(
        c,
        { trial: t, direction },
        () => pc.checkout(dir, { ref, racyWait: false }),
        () => checkClean(dir, ref),
      );
      await nextSecond();
    }
  }
  const engine = pc.createEngine();
  // The engine's first call in this worktree (a no-op checkout of HEAD): what a host pays once.
  const c0 = stallCase(
    `${name}-engine-first-call`,
    name,
    "an engine's first call in the worktree (no-op checkout of HEAD)",
  );
  await record(
    c0,
    { trial: t },
    () => engine.checkout(dir, { racyWait: false }),
    () => checkClean(dir, 'master'),
  );
  await nextSecond();
  const c = stallCase(
    `${name}-1pct-switch-engine`,
    name,
    'engine.checkout({ref}) master ↔ bench-1pct (warm engine)',
  );
  for (const [direction, ref] of legs) {
    await record(
      c,
      { trial: t, direction },
      () => engine.checkout(dir, { ref, racyWait: false }),
      () => checkClean(dir, ref),
    );
    await nextSecond();
  }
  await engine.close();
  await rmTree(dir);
}

function stallRows() {
  const rows = [
    [
      'case',
      'corpus',
      'runs',
      'wall s (median)',
      'max stall ms (max)',
      'max stall ms (median)',
      'p99 ms (median)',
      'ok',
    ],
  ];
  for (const c of stallCases) {
    const ok = c.runs.filter((r) => r.ok);
    const all = c.runs;
    rows.push([
      c.id,
      label(c.corpus),
      all.length,
      fmt(ok.length ? median(ok.map((r) => r.wallMs)) / 1000 : null, 3),
      fmt(Math.max(...all.map((r) => r.stall.maxGapMs)), 0),
      fmt(median(all.map((r) => r.stall.maxGapMs)), 0),
      fmt(median(all.map((r) => r.stall.p99Ms)), 1),
      `${ok.length}/${all.length}`,
    ]);
    c.summary = {
      wallMsMedian: ok.length ? round(median(ok.map((r) => r.wallMs))) : null,
      maxStallMsMax: round(Math.max(...all.map((r) => r.stall.maxGapMs))),
      maxStallMsMedian: round(median(all.map((r) => r.stall.maxGapMs))),
      p99MsMedian: round(median(all.map((r) => r.stall.p99Ms)), 2),
      histMaxMsMax: round(Math.max(...all.map((r) => r.stall.histMaxMs)), 1),
      ok: ok.length,
      runs: all.length,
    };
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Part 2: no call slower than git

async function partNoSlower() {
  await base(LARGE);
  const engine = pc.createEngine();
  const inProcess = (fn) => async (dir) => {
    const r = await measured(() => fn(dir));
    if (!r.ok) throw new Error(`${r.code ?? ''} ${r.error}`);
    return { ms: r.wallMs, maxStallMs: r.stall.maxGapMs, timings: r.summary.timings };
  };
  const gitTool = (n) => async (dir) => {
    const t0 = now();
    await git(dir, ['-c', `checkout.workers=${n}`, 'read-tree', '-u', '--reset', 'HEAD']);
    return { ms: round(now() - t0) };
  };
  const tools = [
    { id: 'checkout()', fn: inProcess((dir) => pc.checkout(dir, { racyWait: false })) },
    { id: 'engine.checkout()', fn: inProcess((dir) => engine.checkout(dir, { racyWait: false })) },
    { id: 'git-w1', fn: gitTool(1), git: true },
    { id: 'git-w2', fn: gitTool(2), git: true },
    { id: 'git-auto', fn: gitTool(0), git: true },
  ];
  const out = { warmupRounds: 1, trials: [], tools: tools.map((x) => x.id) };
  results.parts['no-slower'] = out;
  for (let t = -1; t < TRIALS; t++) {
    say(`\n-- no-slower, ${t < 0 ? 'warm-up round (untimed)' : `trial ${t + 1}/${TRIALS}`}`);
    // Tools rotate their order from round to round.
    const order = tools.map((_, i) => tools[(i + Math.max(t, 0)) % tools.length]);
    for (const tool of order) {
      const dir = await freshClone(LARGE);
      let rec;
      try {
        rec = { tool: tool.id, trial: t, ok: true, load: machineLoad(), ...(await tool.fn(dir)) };
        const bad = await checkClean(dir, 'master');
        if (bad) Object.assign(rec, { ok: false, error: `verification failed: ${bad}` });
      } catch (e) {
        rec = { tool: tool.id, trial: t, ok: false, error: firstLine(e) };
      }
      if (t >= 0) out.trials.push(rec);
      say(
        `${tool.id.padEnd(20)} ${rec.ok ? `${fmt(rec.ms / 1000, 3)} s` : `FAILED: ${rec.error}`}${rec.maxStallMs !== undefined ? `  (max stall ${fmt(rec.maxStallMs, 0)} ms)` : ''}`,
      );
      await rmTree(dir);
      save();
    }
  }
  await engine.close();
  const med = {};
  for (const tool of tools) {
    const ok = out.trials.filter((r) => r.tool === tool.id && r.ok).map((r) => r.ms);
    med[tool.id] = ok.length
      ? {
          medianMs: round(median(ok)),
          minMs: Math.min(...ok),
          maxMs: Math.max(...ok),
          n: ok.length,
        }
      : null;
  }
  const gitBest = Math.min(
    ...tools.filter((x) => x.git && med[x.id]).map((x) => med[x.id].medianMs),
  );
  for (const tool of tools)
    if (med[tool.id]) med[tool.id].ratioToGitBest = round(med[tool.id].medianMs / gitBest, 3);
  out.summary = { perTool: med, gitBestMs: gitBest };
}

function noSlowerRows() {
  const s = results.parts['no-slower']?.summary;
  if (!s) return null;
  const rows = [['tool', 'median s', 'min s', 'max s', 'n', 'ratio to git best']];
  for (const [id, m] of Object.entries(s.perTool)) {
    rows.push(
      m
        ? [
            id,
            fmt(m.medianMs / 1000),
            fmt(m.minMs / 1000),
            fmt(m.maxMs / 1000),
            m.n,
            fmt(m.ratioToGitBest, 2),
          ]
        : [id, '—', '—', '—', 0, '—'],
    );
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Part 3: two materializations through one engine, together and one after the other

async function partConcurrency() {
  const lin = await base(LARGE);
  const mid = await base(MID);
  const engine = pc.createEngine();
  const out = {
    order: `${label(LARGE)} first, then ${label(MID)} (the small tree asked for while the large one is written)`,
    trials: [],
  };
  results.parts.concurrency = out;
  // Untimed warm-up: the engine has both repositories' packs open before the first trial.
  for (const [b, name] of [
    [lin, LARGE],
    [mid, MID],
  ]) {
    const dir = target(`warm-${name}`);
    await engine.materialize(b.repo, dir, { racyWait: false });
    await rmTree(dir);
  }
  const one = async (b, dir, t0) => {
    const s = await engine.materialize(b.repo, dir, { racyWait: false });
    return { doneAtMs: round(now() - t0), files: s.files, totalMs: round(s.timings.total) };
  };
  for (let t = 0; t < TRIALS; t++) {
    say(`\n-- concurrency, trial ${t + 1}/${TRIALS}`);
    const rec = { trial: t, load: machineLoad() };
    // Alternate which comes first, sequential or concurrent.
    const modes = t % 2 ? ['concurrent', 'sequential'] : ['sequential', 'concurrent'];
    for (const mode of modes) {
      const dl = target('conc-linux');
      const dm = target('conc-midsize');
      const m = startMonitor();
      const t0 = now();
      try {
        let linux;
        let midsize;
        if (mode === 'concurrent')
          [linux, midsize] = await Promise.all([one(lin, dl, t0), one(mid, dm, t0)]);
        else {
          linux = await one(lin, dl, t0);
          midsize = await one(mid, dm, t0);
        }
        rec[mode] = { ok: true, ms: round(now() - t0), linux, midsize, stall: m.stop() };
      } catch (e) {
        rec[mode] = { ok: false, error: firstLine(e), stall: m.stop() };
      }
      const r = rec[mode];
      say(
        `${mode.padEnd(11)} ${r.ok ? `${fmt(r.ms / 1000)} s (${LARGE} done at ${fmt(r.linux.doneAtMs / 1000)} s, ${MID} at ${fmt(r.midsize.doneAtMs / 1000)} s)` : `FAILED: ${r.error}`}  max stall ${fmt(r.stall.maxGapMs, 0)} ms`,
      );
      await rmTree(dl);
      await rmTree(dm);
    }
    out.trials.push(rec);
    save();
  }
  await engine.close();
  const ok = out.trials.filter((r) => r.sequential?.ok && r.concurrent?.ok);
  if (ok.length) {
    const seq = median(ok.map((r) => r.sequential.ms));
    const con = median(ok.map((r) => r.concurrent.ms));
    out.summary = {
      sequentialMsMedian: round(seq),
      concurrentMsMedian: round(con),
      ratioConcurrentToSequential: round(con / seq, 3),
      midsizeDoneAtMsMedian: {
        sequential: round(median(ok.map((r) => r.sequential.midsize.doneAtMs))),
        concurrent: round(median(ok.map((r) => r.concurrent.midsize.doneAtMs))),
      },
      linuxDoneAtMsMedian: {
        sequential: round(median(ok.map((r) => r.sequential.linux.doneAtMs))),
        concurrent: round(median(ok.map((r) => r.concurrent.linux.doneAtMs))),
      },
      maxStallMs: {
        sequential: round(Math.max(...ok.map((r) => r.sequential.stall.maxGapMs))),
        concurrent: round(Math.max(...ok.map((r) => r.concurrent.stall.maxGapMs))),
      },
      n: ok.length,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Part 4: abort

async function partAbort() {
  await base(LARGE);
  const out = { abortAfterMs: ABORT_AFTER, trials: [] };
  results.parts.abort = out;
  for (let t = 0; t < TRIALS; t++) {
    say(`\n-- abort, trial ${t + 1}/${TRIALS}`);
    const dir = await freshClone(LARGE);
    const ac = new AbortController();
    const m = startMonitor();
    const t0 = now();
    let abortedAt = null;
    const timer = setTimeout(() => {
      abortedAt = now();
      ac.abort(new Error('host bench: abort'));
    }, ABORT_AFTER);
    const rec = { trial: t, load: machineLoad() };
    try {
      const s = await pc.checkout(dir, { signal: ac.signal, racyWait: false });
      rec.outcome = 'resolved';
      rec.note =
        abortedAt === null ? 'the checkout ended before abort() ran' : 'resolved although aborted';
      rec.summary = slim(s);
    } catch (e) {
      rec.outcome = 'rejected';
      rec.code = e?.code ?? null;
      rec.error = firstLine(e);
    }
    const settledAt = now();
    clearTimeout(timer);
    rec.stall = m.stop();
    rec.abortCalledAtMs = abortedAt === null ? null : round(abortedAt - t0);
    rec.abortToSettleMs = abortedAt === null ? null : round(settledAt - abortedAt);
    rec.callMs = round(settledAt - t0);
    rec.filesOnDisk = await countFiles(dir);
    rec.indexWritten = fs.existsSync(path.join(dir, '.git', 'index'));
    const st = await statusLines(dir);
    rec.statusLines = st.length;
    rec.statusByCode = {};
    for (const l of st)
      rec.statusByCode[l.slice(0, 2)] = (rec.statusByCode[l.slice(0, 2)] || 0) + 1;
    const force = await measured(() => pc.checkout(dir, { force: true, racyWait: false }));
    rec.force = {
      ok: force.ok,
      ms: force.wallMs,
      maxStallMs: force.stall.maxGapMs,
      error: force.error,
      code: force.code,
    };
    rec.afterForceStatusLines = force.ok ? (await statusLines(dir)).length : null;
    rec.afterForceClean = rec.afterForceStatusLines === 0;
    say(
      `abort() called at ${fmt(rec.abortCalledAtMs, 0)} ms (asked: ${ABORT_AFTER}); ${rec.outcome}` +
        `${rec.code ? ` ${rec.code}` : ''} ${fmt(rec.abortToSettleMs, 0)} ms after abort(); ` +
        `${rec.filesOnDisk} files on disk, index ${rec.indexWritten ? 'written' : 'not written'}, ` +
        `git status: ${rec.statusLines} lines; checkout({force}) ${force.ok ? `${fmt(force.wallMs / 1000)} s` : `FAILED ${force.error}`}, ` +
        `then git status ${rec.afterForceClean ? 'clean' : `${rec.afterForceStatusLines} lines`}`,
    );
    out.trials.push(rec);
    await rmTree(dir);
    save();
  }
  const rej = out.trials.filter((r) => r.outcome === 'rejected' && r.abortToSettleMs !== null);
  out.summary = {
    rejected: rej.length,
    trials: out.trials.length,
    codes: [...new Set(out.trials.map((r) => r.code ?? r.outcome))],
    abortCalledAtMsMedian: round(
      median(out.trials.filter((r) => r.abortCalledAtMs !== null).map((r) => r.abortCalledAtMs)),
    ),
    abortToRejectMsMedian: rej.length ? round(median(rej.map((r) => r.abortToSettleMs))) : null,
    abortToRejectMsMax: rej.length ? round(Math.max(...rej.map((r) => r.abortToSettleMs))) : null,
    statusLinesMedian: median(out.trials.map((r) => r.statusLines)),
    filesOnDiskMedian: median(out.trials.map((r) => r.filesOnDisk)),
    forceRepairedAll: out.trials.every((r) => r.afterForceClean),
    forceMsMedian: round(median(out.trials.filter((r) => r.force.ok).map((r) => r.force.ms))),
  };
}

// ---------------------------------------------------------------------------------------------
// Part 5: warm calls (own child process, --expose-gc)

async function partWarm() {
  const mid = await base(MID);
  const out = { calls: WARM_CALLS, trials: [] };
  results.parts.warm = out;
  for (let t = 0; t < TRIALS; t++) {
    say(`\n-- warm, trial ${t + 1}/${TRIALS} (a child node --expose-gc)`);
    const dir = target('warm-midsize');
    const arg = JSON.stringify({ repo: mid.repo, dir });
    const self = fileURLToPath(import.meta.url);
    let rec;
    try {
      const r = await run(process.execPath, [
        '--expose-gc',
        self,
        '--dist',
        DIST,
        '--warm-calls',
        String(WARM_CALLS),
        '--child-warm',
        arg,
      ]);
      rec = JSON.parse(r.stdout.trim().split('\n').at(-1));
      // The first refresh is apart: the engine's watch vouches for nothing yet, and the
      // entries the first call wrote (racyWait: false) are racily clean, so it looks at all.
      const [firstRefresh, ...rest] = rec.warm;
      rec.firstRefresh = { ms: firstRefresh.ms, maxStallMs: firstRefresh.maxStallMs };
      const ms = rest.map((w) => w.ms);
      rec.medianMsFirst10 = round(median(ms.slice(0, 10)), 2);
      rec.medianMsAll = round(median(ms), 2);
      rec.maxStallMsWarm = Math.max(...rest.map((w) => w.maxStallMs));
      rec.medianStallMsWarm = round(median(rest.map((w) => w.maxStallMs)), 1);
      rec.wroteAnything = rec.warm.some((w) => w.written || w.created || w.updated || w.deleted);
      const r1 = rec.rssMB.afterFirst;
      rec.rssRatio = {
        afterWarmToFirst: round(rec.rssMB.afterWarm / r1, 3),
        afterCloseToFirst: round(rec.rssMB.afterClose / r1, 3),
        ...(rec.rssMB.afterCloseGc
          ? { afterCloseGcToFirst: round(rec.rssMB.afterCloseGc / r1, 3) }
          : {}),
      };
      rec.ok = true;
      say(
        `first call ${fmt(rec.first.ms / 1000)} s; first refresh ${fmt(firstRefresh.ms, 0)} ms; then no-op: median ${fmt(rec.medianMsFirst10, 1)} ms (next 10), ${fmt(rec.medianMsAll, 1)} ms (all ${WARM_CALLS - 1}), ` +
          `max stall ${fmt(rec.maxStallMsWarm, 0)} ms; RSS MB ${JSON.stringify(rec.rssMB)}`,
      );
    } catch (e) {
      const tail = String(e?.stderr ?? '')
        .trim()
        .split('\n')
        .filter((l) => !/^\s+at /.test(l));
      rec = { ok: false, error: tail.slice(-3).join(' | ').slice(-600) || firstLine(e) };
      say(`FAILED: ${rec.error}`);
    }
    rec.trial = t;
    out.trials.push(rec);
    await rmTree(dir);
    save();
  }
  const ok = out.trials.filter((r) => r.ok);
  if (ok.length) {
    const m = (f) => round(median(ok.map(f)), 2);
    out.summary = {
      firstCallMsMedian: m((r) => r.first.ms),
      firstRefreshMsMedian: m((r) => r.firstRefresh.ms),
      firstRefreshStallMsMax: Math.max(...ok.map((r) => r.firstRefresh.maxStallMs)),
      warmMsMedianFirst10: m((r) => r.medianMsFirst10),
      warmMsMedianAll: m((r) => r.medianMsAll),
      maxStallMsWarm: Math.max(...ok.map((r) => r.maxStallMsWarm)),
      medianStallMsWarm: m((r) => r.medianStallMsWarm),
      wroteAnything: ok.some((r) => r.wroteAnything),
      rssMB: {
        beforeFirst: m((r) => r.rssMB.beforeFirst),
        afterFirst: m((r) => r.rssMB.afterFirst),
        afterWarm: m((r) => r.rssMB.afterWarm),
        afterClose: m((r) => r.rssMB.afterClose),
        afterCloseGc:
          ok[0].rssMB.afterCloseGc === undefined ? null : m((r) => r.rssMB.afterCloseGc),
      },
      rssRatio: {
        afterWarmToFirst: m((r) => r.rssRatio.afterWarmToFirst),
        afterCloseToFirst: m((r) => r.rssRatio.afterCloseToFirst),
        afterCloseGcToFirst:
          ok[0].rssRatio.afterCloseGcToFirst === undefined
            ? null
            : m((r) => r.rssRatio.afterCloseGcToFirst),
      },
      n: ok.length,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Main

function printAll() {
  const lines = [];
  const p = results.parts;
  lines.push(
    `\npcheckout host-friendliness — dist ${DIST}${results.dist.commit ? ` (commit ${results.dist.commit.slice(0, 12)}${results.dist.dirty ? ', dirty' : ''})` : ''}`,
    `${results.fs?.kind ?? '?'} (${results.fs?.type ?? '?'}), ${results.machine.cores} cores, node ${results.machine.node}, load average at start ${results.loadavg.start.join(' ')}, now ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; racyWait: false`,
  );
  if (p.stall) {
    lines.push(
      '\n1. Event-loop stalls (probe: longest gap between 1 ms interval ticks; p99: monitorEventLoopDelay)',
    );
    lines.push(table(stallRows(), ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r']));
  }
  const ns = noSlowerRows();
  if (ns) {
    lines.push(
      `\n2. ${label(LARGE)} fresh checkout: in-process against git read-tree -u --reset HEAD (median of ${TRIALS}; git's best ${fmt(p['no-slower'].summary.gitBestMs / 1000)} s)`,
    );
    lines.push(table(ns, ['l', 'r', 'r', 'r', 'r', 'r']));
  }
  const cs = p.concurrency?.summary;
  if (cs) {
    lines.push(
      `\n3. Two materializations through one engine (${p.concurrency.order}), median of ${cs.n}`,
    );
    lines.push(
      table(
        [
          ['', 'total s', `${LARGE} done at s`, `${MID} done at s`, 'max stall ms'],
          [
            'one after the other',
            fmt(cs.sequentialMsMedian / 1000),
            fmt(cs.linuxDoneAtMsMedian.sequential / 1000),
            fmt(cs.midsizeDoneAtMsMedian.sequential / 1000),
            fmt(cs.maxStallMs.sequential, 0),
          ],
          [
            'Promise.all',
            fmt(cs.concurrentMsMedian / 1000),
            fmt(cs.linuxDoneAtMsMedian.concurrent / 1000),
            fmt(cs.midsizeDoneAtMsMedian.concurrent / 1000),
            fmt(cs.maxStallMs.concurrent, 0),
          ],
        ],
        ['l', 'r', 'r', 'r', 'r'],
      ),
      `ratio Promise.all / one after the other: ${fmt(cs.ratioConcurrentToSequential, 2)}`,
    );
  }
  const as = p.abort?.summary;
  if (as) {
    lines.push(
      `\n4. Abort ${ABORT_AFTER} ms into a fresh ${label(LARGE)} checkout({signal}) (${as.trials} trials)`,
    );
    const rows = [
      [
        'trial',
        'abort() at ms',
        'outcome',
        'abort→settle ms',
        'files on disk',
        'index',
        'status lines',
        'by code',
        'force s',
        'then clean',
      ],
    ];
    for (const r of p.abort.trials) {
      rows.push([
        r.trial + 1,
        fmt(r.abortCalledAtMs, 0),
        `${r.outcome}${r.code ? ` ${r.code}` : ''}`,
        fmt(r.abortToSettleMs, 0),
        r.filesOnDisk,
        r.indexWritten ? 'yes' : 'no',
        r.statusLines,
        Object.entries(r.statusByCode ?? {})
          .map(([k, v]) => `${k.replace(/ /g, '_')}:${v}`)
          .join(' '),
        r.force.ok ? fmt(r.force.ms / 1000) : 'FAILED',
        r.afterForceClean ? 'yes' : 'NO',
      ]);
    }
    lines.push(table(rows, ['r', 'r', 'l', 'r', 'r', 'l', 'r', 'l', 'r', 'l']));
  }
  const ws = p.warm?.summary;
  if (ws) {
    lines.push(
      `\n5. Warm no-op engine.materialize of a materialized ${label(MID)} tree (${WARM_CALLS} calls, child node --expose-gc, median of ${ws.n})`,
    );
    lines.push(
      table(
        [
          [
            'first call ms',
            '1st refresh ms',
            '1st refresh stall ms',
            'then ms (next 10)',
            `then ms (all ${WARM_CALLS - 1})`,
            'stall ms (median, max)',
            'wrote anything',
          ],
          [
            fmt(ws.firstCallMsMedian, 0),
            fmt(ws.firstRefreshMsMedian, 0),
            fmt(ws.firstRefreshStallMsMax, 0),
            fmt(ws.warmMsMedianFirst10, 1),
            fmt(ws.warmMsMedianAll, 1),
            `${fmt(ws.medianStallMsWarm, 0)}, ${fmt(ws.maxStallMsWarm, 0)}`,
            ws.wroteAnything ? 'YES' : 'no',
          ],
        ],
        ['r', 'r', 'r', 'r', 'r', 'r', 'l'],
      ),
      table(
        [
          [
            'RSS MB',
            'before 1st',
            'after 1st',
            `after ${WARM_CALLS} warm`,
            'after close',
            'after close + gc',
          ],
          [
            '',
            fmt(ws.rssMB.beforeFirst, 0),
            fmt(ws.rssMB.afterFirst, 0),
            fmt(ws.rssMB.afterWarm, 0),
            fmt(ws.rssMB.afterClose, 0),
            fmt(ws.rssMB.afterCloseGc, 0),
          ],
          [
            'ratio to after 1st',
            '',
            '1.00',
            fmt(ws.rssRatio.afterWarmToFirst, 2),
            fmt(ws.rssRatio.afterCloseToFirst, 2),
            fmt(ws.rssRatio.afterCloseGcToFirst, 2),
          ],
        ],
        ['l', 'r', 'r', 'r', 'r', 'r'],
      ),
    );
  }
  if (results.skipped.length) {
    lines.push('\nSkipped:');
    for (const s of results.skipped) lines.push(`- [${s.part}] ${s.what}: ${s.reason}`);
  }
  return lines.join('\n');
}

installSignalHandlers((state) => save(state));
try {
  await setupScratch();
  say(
    `dist: ${DIST}; scratch: ${scratch.root} (${results.fs.type}); parts: ${parts.join(', ')}; trials: ${TRIALS}`,
  );
  say(
    `load average: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} (${os.cpus().length} cores)`,
  );
  const fns = {
    stall: partStall,
    'no-slower': partNoSlower,
    concurrency: partConcurrency,
    abort: partAbort,
    warm: partWarm,
  };
  for (const part of PARTS.filter((x) => parts.includes(x))) {
    try {
      await fns[part]();
    } catch (e) {
      say(`[${part}] FAILED: ${e?.stack ?? e}`);
      results.parts[part] = { ...(results.parts[part] ?? {}), failed: firstLine(e) };
    }
    save();
  }
  const text = printAll();
  results.chart = 'none: bench/common.mjs has no SVG chart helper';
  save('done');
  console.log(text);
  console.log(`\nresults: ${jsonFile}\n(no chart: bench/common.mjs has no SVG chart helper)`);
} catch (e) {
  say(`host.mjs: ${e?.stack ?? e}`);
  save('crashed');
  process.exitCode = 1;
} finally {
  cleanupAll();
}
