#!/usr/bin/env node
// Incremental checkouts on the Linux corpus, in a fresh ext4 image: git's threshold study
// (restore N deleted files) and branch switches, pcheckout against git.
//
//   node restore.mjs [--ns 10,20,50,100,200,500,1000,2000] [--samples 3] [--seed 1]
//                    [--parts restore,switch-small,switch-large] [--switch-reps 3] [--json x.json]
//
// restore: N random regular files deleted (seeded; the same files for every tool within a
// sample), then restored by one process per tool, timed end to end:
//   pcheckout      node ../dist/cli.cjs --restore --json <repo>           (default options)
//   pcheckout-nrw  the same with --no-racy-wait
//   pcheckout-engine  a warm engine (createEngine, peers/engine-server.mjs) in one process for
//                  all its runs: restore: true, default options; timed from the request to the
//                  answer. Before each timed run, after the other tools' runs have rewritten the
//                  index, one untimed restore with nothing deleted — as a build system's loop
//                  would have made — so the timed call follows a call of the same engine.
//   git-seq        git -c checkout.workers=2 -c checkout.thresholdForParallelism=<N+1> checkout -f
//   git-w2         git -c checkout.workers=2 -c checkout.thresholdForParallelism=0 checkout -f
// switch-small: master <-> bench-1pct (a commit on top of master editing ~1% of the files).
// switch-large: master <-> bench-prev (= master~1, the corpus's own parent commit; ~16,000
// files edited and drivers/staging/ added or removed).
// Every run is verified afterwards (untimed). See README.md, "Incremental checkouts".

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
  addCleanup,
  TIME,
  cleanupAll,
  ensureTime,
  firstLine,
  fmt,
  fsFacts,
  installSignalHandlers,
  machineLoad,
  median,
  mountScratch,
  say,
  table,
  timedRun,
  tryRun,
} from './common.mjs';
import { cacheDir, corpusNames, ensureCorpus, run } from './corpus.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MAIN = path.resolve(HERE, '..');
const PARTS = ['restore', 'switch-small', 'switch-large'];
// Fixed identity and dates for the ~1% commit: the same corpus always gives the same commit id.
const COMMIT_ENV = {
  GIT_AUTHOR_NAME: 'pcheckout bench',
  GIT_AUTHOR_EMAIL: 'bench@pcheckout.invalid',
  GIT_COMMITTER_NAME: 'pcheckout bench',
  GIT_COMMITTER_EMAIL: 'bench@pcheckout.invalid',
  GIT_AUTHOR_DATE: '1671148800 +0000',
  GIT_COMMITTER_DATE: '1671148800 +0000',
};

const USAGE = `usage: node restore.mjs [options]
  --corpus <name>      ${corpusNames.join('|')} (default linux)
  --parts <list>       comma-separated subset of ${PARTS.join(',')} (default all)
  --ns <list>          file counts for the restore study (default 10,20,50,100,200,500,1000,2000)
  --samples <n>        samples per N; different files per sample, the same for every tool (default 3)
  --seed <n>           seed of the file choice (default 1)
  --switch-reps <n>    timed switches per direction and tool (default 3)
  --warmup <n>         untimed rounds first, per part (default 1)
  --tools <list>       subset of: TOOLS (default all that can run)
  --pcheckout <path>   pcheckout CLI (default ../dist/cli.cjs, or env PCHECKOUT_CLI)
  --ext4-size <sz>     size of the ext4 image (default 8g; sparse)
  --timeout <s>        per-run timeout in seconds (default 600)
  --json <file>        raw runs + summary (default results/restore-<timestamp>.json)
  -h, --help`;

const { values: opt } = parseArgs({
  options: {
    corpus: { type: 'string', default: 'linux' },
    parts: { type: 'string', default: PARTS.join(',') },
    ns: { type: 'string', default: '10,20,50,100,200,500,1000,2000' },
    samples: { type: 'string', default: '3' },
    seed: { type: 'string', default: '1' },
    'switch-reps': { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    tools: { type: 'string' },
    pcheckout: { type: 'string', default: process.env.PCHECKOUT_CLI || '' },
    'ext4-size': { type: 'string', default: '8g' },
    timeout: { type: 'string', default: '600' },
    json: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

// ---------------------------------------------------------------------------------------------
// Tools. restore(repo, n) and switchTo(repo, branch) give [cmd, args] for one run.

const PCHECKOUT_CLI = path.resolve(opt.pcheckout || path.join(MAIN, 'dist', 'cli.cjs'));

async function pcheckoutAvailable() {
  if (!fs.existsSync(PCHECKOUT_CLI)) {
    return `${PCHECKOUT_CLI} not found: build the engine first (cd .. && npm run build)`;
  }
  const help = await tryRun('node', [PCHECKOUT_CLI, '--help']);
  if (!help?.includes('--restore')) return `${PCHECKOUT_CLI} has no --restore (see its --help)`;
  return null;
}

function pcheckoutTool(id, extra) {
  return {
    id,
    label: `pcheckout${extra.length ? ' ' + extra.join(' ') : ' (defaults)'}`,
    restore: (repo) => ['node', [PCHECKOUT_CLI, '--restore', '--json', ...extra, repo]],
    switchTo: (repo, branch) => ['node', [PCHECKOUT_CLI, '--json', ...extra, repo, branch]],
    parse: (stdout) => JSON.parse(stdout),
    available: pcheckoutAvailable,
  };
}

/**
 * The warm engine: a child process holding createEngine(), asked over a pipe. Restores only;
 * `call` replaces the per-process run, `prepare` is the untimed call before each timed one.
 */
function engineTool() {
  let child = null;
  let lines = null;
  let next = 0;
  const ask = (repo, options) => {
    if (child === null) {
      child = spawn(process.execPath, [path.join(HERE, 'peers', 'engine-server.mjs')], {
        env: { ...process.env, ...CLEAN_ENV, PCHECKOUT_DIST: path.join(MAIN, 'dist', 'index.js') },
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      addCleanup(() => child?.kill());
    }
    const id = ++next;
    child.stdin.write(`${JSON.stringify({ id, call: 'checkout', repo, options })}\n`);
    return lines.next().then(({ value, done }) => {
      if (done) throw new Error('the engine process ended');
      const msg = JSON.parse(value);
      if (msg.id !== id) throw new Error(`answer ${msg.id} to request ${id}`);
      return msg;
    });
  };
  return {
    id: 'pcheckout-engine',
    label: 'pcheckout warm engine (createEngine(); restore: true, default options)',
    prepare: async (repo) => {
      const r = await ask(repo, { restore: true });
      if (!r.ok) throw new Error(`engine warm-up call failed: ${r.error}`);
    },
    call: async (repo) => {
      const started = process.hrtime.bigint();
      const r = await ask(repo, { restore: true });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      return r.ok
        ? { ok: true, seconds, summary: r.summary }
        : { ok: false, seconds, error: r.error };
    },
    close: () => {
      child?.stdin.end();
      child = null;
    },
    available: pcheckoutAvailable,
  };
}

const TOOLS = [
  pcheckoutTool('pcheckout', []),
  pcheckoutTool('pcheckout-nrw', ['--no-racy-wait']),
  engineTool(),
  // Not in the default set: `pcheckout --force <repo>` resets index and worktree to HEAD, the
  // exact counterpart of `git checkout -f` (the same as --restore when the index is HEAD's).
  {
    ...pcheckoutTool('pcheckout-force', []),
    label: 'pcheckout --force (restore: reset to HEAD, like git checkout -f)',
    restore: (repo) => ['node', [PCHECKOUT_CLI, '--force', '--json', repo]],
    optional: true,
  },
  {
    id: 'git-seq',
    label: 'git checkout.workers=2, thresholdForParallelism=N+1 (sequential fallback)',
    // Above N, so parallel-checkout.c falls back to write_items_sequentially().
    restore: (repo, n) => [
      'git',
      ['-C', repo, '-c', 'checkout.workers=2', '-c', `checkout.thresholdForParallelism=${n + 1}`],
    ],
    // Switches: git's default, one process, no workers.
    switchId: 'git-w1',
    switchTo: (repo, branch) => [
      'git',
      ['-C', repo, '-c', 'checkout.workers=1', 'checkout', branch],
    ],
    available: async () => null,
  },
  {
    id: 'git-w2',
    label: 'git checkout.workers=2, thresholdForParallelism=0 (2 workers)',
    restore: (repo) => [
      'git',
      ['-C', repo, '-c', 'checkout.workers=2', '-c', 'checkout.thresholdForParallelism=0'],
    ],
    // Switches: 2 workers with git's default threshold (100 files).
    switchId: 'git-w2',
    switchTo: (repo, branch) => [
      'git',
      ['-C', repo, '-c', 'checkout.workers=2', 'checkout', branch],
    ],
    available: async () => null,
  },
];
// `git checkout -f` with no ref: reset index and worktree to HEAD, writing what is missing.
for (const t of TOOLS.filter((x) => x.id.startsWith('git-'))) {
  const make = t.restore;
  t.restore = (repo, n) => {
    const [cmd, args] = make(repo, n);
    return [cmd, [...args, 'checkout', '-f']];
  };
}

if (opt.help) {
  console.log(USAGE.replace('TOOLS', TOOLS.map((t) => t.id).join(',')));
  process.exit(0);
}

function fail(msg) {
  console.error(
    `restore.mjs: ${msg}\n\n${USAGE.replace('TOOLS', TOOLS.map((t) => t.id).join(','))}`,
  );
  process.exit(2);
}

const posInt = (name, v, min = 1) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) fail(`--${name} must be an integer ≥ ${min}`);
  return n;
};
const samples = posInt('samples', opt.samples);
const switchReps = posInt('switch-reps', opt['switch-reps']);
const warmup = posInt('warmup', opt.warmup, 0);
const seed = posInt('seed', opt.seed, 0);
const timeoutMs = Number(opt.timeout) * 1000;
if (!(timeoutMs > 0)) fail('--timeout must be a positive number of seconds');
const ns = opt.ns.split(',').map((x) => posInt('ns', x.trim()));
const parts = opt.parts.split(',').map((s) => s.trim());
for (const p of parts) if (!PARTS.includes(p)) fail(`unknown part ${p}`);
if (!corpusNames.includes(opt.corpus)) fail(`unknown corpus ${opt.corpus}`);
let tools = TOOLS.filter((t) => !t.optional);
if (opt.tools) {
  const want = opt.tools.split(',').map((s) => s.trim());
  for (const w of want) if (!TOOLS.some((t) => t.id === w)) fail(`unknown tool ${w}`);
  tools = TOOLS.filter((t) => want.includes(t.id));
}

// ---------------------------------------------------------------------------------------------
// Helpers

const switchId = (tool) => tool.switchId ?? tool.id;

function hash32(...parts) {
  return createHash('sha1').update(parts.join('\0')).digest().readUInt32BE(0);
}

// xorshift32, seeded per (seed, N, sample): the file choice is reproducible.
function prng(s) {
  let x = s >>> 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

/** n distinct items of list, chosen by a partial Fisher-Yates shuffle. */
function pick(list, n, rnd) {
  const a = list.slice();
  const k = Math.min(n, a.length);
  for (let i = 0; i < k; i++) {
    const j = i + (rnd() % (a.length - i));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a.slice(0, k).sort();
}

const git = (repo, args, opts = {}) =>
  run('git', ['-C', repo, ...args], { ...opts, env: { ...CLEAN_ENV, ...opts.env } }).then(
    (r) => r.stdout,
  );

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Untimed, after every run: the worktree and index match HEAD (`git status` prints nothing, not
 * even ignored or untracked files), HEAD is where it should be, and the given files exist.
 */
async function verify(repo, { files = [], branch, commit }) {
  try {
    const status = (
      await git(repo, ['status', '--porcelain', '--ignored', '--untracked-files=all'])
    ).trim();
    const missing = files.filter((f) => !fs.existsSync(path.join(repo, f)));
    const res = { ok: status === '' && missing.length === 0 };
    if (status) res.status = status.split('\n').slice(0, 5);
    if (missing.length) res.missing = missing.slice(0, 5);
    if (branch) {
      const head = (await git(repo, ['symbolic-ref', '-q', 'HEAD']).catch(() => '')).trim();
      const at = (await git(repo, ['rev-parse', 'HEAD'])).trim();
      if (head !== `refs/heads/${branch}` || at !== commit) {
        res.ok = false;
        res.head = `${head || '(detached)'} at ${at}, expected refs/heads/${branch} at ${commit}`;
      }
    }
    return res;
  } catch (e) {
    return { ok: false, error: firstLine(e) };
  }
}

/**
 * Untimed, before every run: a clean start. git trusts an index entry's stat data only if the
 * index file is from a later second than the file ("racy git"); a run that writes files and the
 * index in the same second leaves those entries racy, and the next command would re-hash them.
 * Wait for the second to pass and rewrite the index, so every run starts from the same state.
 * newestMs: a time no file was written after (the end of the run).
 */
async function settle(repo, newestMs) {
  const wait = (Math.floor(newestMs / 1000) + 1) * 1000 + 20 - Date.now();
  if (wait > 0) await sleep(wait);
  await git(repo, ['update-index', '-q', '--refresh', '--force-write-index']);
}

async function oneRun(tool, [cmd, args], meta, check, runs, onRun) {
  execFileSync('sync'); // the previous run's write-back is not charged to this one
  const load = machineLoad();
  const r = tool.call ? await tool.call(cmd) : await timedRun(cmd, args, { timeoutMs });
  const endedMs = Date.now();
  const rec = {
    ...meta,
    tool: meta.part === 'restore' ? tool.id : switchId(tool),
    ok: r.ok,
    seconds: r.seconds === undefined ? null : +r.seconds.toFixed(4),
    rssMB: r.rssMB ?? null,
    cpuSeconds: r.cpuSeconds ?? null,
    sysSeconds: r.sysSeconds ?? null,
    load,
  };
  if (!r.ok) rec.error = r.error;
  if (r.ok && r.summary) rec.summary = r.summary;
  if (r.ok && tool.parse) {
    try {
      rec.summary = tool.parse(r.stdout);
    } catch (e) {
      rec.ok = false;
      rec.error = `unparsable --json output (${firstLine(e)}): ${r.stdout.trim().slice(0, 200)}`;
    }
  }
  rec.verify = await check();
  if (!rec.verify.ok) {
    rec.ok = false;
    rec.error = `${rec.error ? rec.error + '; ' : ''}verification failed: ${JSON.stringify(rec.verify)}`;
  }
  runs.push(rec);
  onRun();
  const p = rec.summary;
  const extra = p
    ? ` [pool ${p.pool?.used ? `${p.pool.workers} workers` : 'off'}` +
      `${p.timings?.racyWait !== undefined ? `, racyWait ${Math.round(p.timings.racyWait)} ms` : ''}]`
    : '';
  const label = meta.part === 'restore' ? `N=${meta.n} sample ${meta.sample}` : meta.direction;
  say(
    `${meta.part}${meta.warmup ? ' (warm-up)' : ''} ${label} ${rec.tool.padEnd(14)} ` +
      (rec.ok ? `${rec.seconds.toFixed(3)} s${extra}` : `FAILED: ${rec.error}`),
  );
  return { rec, endedMs };
}

// ---------------------------------------------------------------------------------------------
// Setup on the image

async function setupRepo(mnt, corpus) {
  const source = path.join(mnt, 'source.git');
  const repo = path.join(mnt, 'repo');
  say(`copying the corpus into the image and checking it out (untimed) ...`);
  await run('cp', ['-a', corpus.repo, source]);
  await run('git', ['clone', '--no-checkout', '--local', '-q', source, repo], { env: CLEAN_ENV });
  // No remote: nothing but the checkout itself (no upstream ahead/behind report).
  await git(repo, ['remote', 'remove', 'origin']);
  await git(repo, ['-c', 'checkout.workers=2', 'read-tree', '-u', '--reset', 'HEAD']);
  const head = (await git(repo, ['rev-parse', 'HEAD'])).trim();
  const branch = (await git(repo, ['symbolic-ref', '--short', 'HEAD'])).trim();
  execFileSync('sync');
  await settle(repo, Date.now());
  const v = await verify(repo, { branch, commit: head });
  if (!v.ok) throw new Error(`initial checkout is not clean: ${JSON.stringify(v)}`);
  return { repo, head, branch };
}

async function regularFiles(repo) {
  const out = await git(repo, ['ls-files', '-s', '-z']);
  const files = [];
  for (const rec of out.split('\0')) {
    if (!rec) continue;
    const tab = rec.indexOf('\t');
    const mode = rec.slice(0, 6);
    if (mode === '100644' || mode === '100755') files.push(rec.slice(tab + 1));
  }
  return files;
}

async function diffStat(repo, a, b) {
  const out = await git(repo, ['diff', '--no-renames', '--name-status', '-z', a, b]);
  const parts = out.split('\0').filter(Boolean);
  const st = { changed: 0 };
  for (let i = 0; i + 1 < parts.length; i += 2) {
    st[parts[i]] = (st[parts[i]] || 0) + 1;
    st.changed++;
  }
  return st;
}

/**
 * A commit on top of HEAD that edits ~1% of the regular text files (path hash modulo 100 = 0): a
 * comment line inserted at the top. Deterministic: the same corpus gives the same commit.
 */
async function makeOnePercentBranch(repo, work, files, base) {
  const chosen = files.filter((f) => hash32('switch-1pct', f) % 100 === 0);
  const tmp = path.join(work, 'edits');
  await fsp.mkdir(tmp, { recursive: true });
  const list = [];
  const modes = new Map(
    (await git(repo, ['ls-files', '-s', '-z', '--', ...chosen]))
      .split('\0')
      .filter(Boolean)
      .map((r) => [r.slice(r.indexOf('\t') + 1), r.slice(0, 6)]),
  );
  let i = 0;
  for (const f of chosen) {
    const buf = fs.readFileSync(path.join(repo, f));
    if (buf.subarray(0, 8000).includes(0)) continue; // binary: left alone
    const out = path.join(tmp, String(i++));
    fs.writeFileSync(
      out,
      Buffer.concat([Buffer.from(`/* pcheckout-bench: switch edit of ${f} */\n`), buf]),
    );
    list.push({ f, out });
  }
  const shas = (
    await git(repo, ['hash-object', '-w', '--no-filters', '--stdin-paths'], {
      input: list.map((x) => x.out).join('\n') + '\n',
    })
  )
    .trim()
    .split('\n');
  await fsp.rm(tmp, { recursive: true, force: true });
  const idx = path.join(work, 'index.1pct');
  const env = { GIT_INDEX_FILE: idx };
  await git(repo, ['read-tree', base], { env });
  await git(repo, ['update-index', '--index-info'], {
    env,
    input: list.map((x, k) => `${modes.get(x.f)} ${shas[k]}\t${x.f}`).join('\n') + '\n',
  });
  const tree = (await git(repo, ['write-tree'], { env })).trim();
  await fsp.rm(idx, { force: true });
  const commit = (
    await git(
      repo,
      ['commit-tree', tree, '-p', base, '-m', 'pcheckout bench: ~1% of the files edited'],
      { env: COMMIT_ENV },
    )
  ).trim();
  await git(repo, ['update-ref', 'refs/heads/bench-1pct', commit]);
  return { branch: 'bench-1pct', commit, edited: list.length };
}

// ---------------------------------------------------------------------------------------------
// Parts

async function restorePart(ctx, ready, runs, onRun) {
  const { repo } = ctx;
  const files = await regularFiles(repo);
  say(`restore: ${files.length} regular files to choose from; N = ${ns.join(', ')}`);
  // Warm-up rounds (N = 100), then each N with `samples` samples; tools rotate within a sample.
  const plan = [];
  for (let w = 0; w < warmup; w++) plan.push({ n: 100, sample: w + 1, warmup: true });
  for (const n of ns) for (let s = 1; s <= samples; s++) plan.push({ n, sample: s });
  let rot = 0;
  for (const { n, sample, warmup: warm } of plan) {
    const chosen = pick(files, n, prng(hash32('restore', seed, n, sample, warm ? 'w' : '')));
    const order = ready.map((_, i) => ready[(i + rot) % ready.length]);
    rot++;
    for (const tool of order) {
      if (tool.prepare) await tool.prepare(repo);
      for (const f of chosen) fs.unlinkSync(path.join(repo, f));
      const meta = { part: 'restore', n, sample, ...(warm ? { warmup: true } : {}) };
      const check = () => verify(repo, { files: chosen });
      const how = tool.call ? [repo, []] : tool.restore(repo, n);
      const { rec, endedMs } = await oneRun(tool, how, meta, check, runs, onRun);
      // Repair whatever a failed tool left behind, then start the next run clean.
      if (!rec.ok) await git(repo, ['checkout', '-f']);
      await settle(repo, rec.ok ? endedMs : Date.now());
    }
  }
}

async function switchPart(part, ctx, target, tools, runs, onRun) {
  const { repo, branch: home, head } = ctx;
  const ready = tools.filter((t) => t.switchTo); // the engine tool restores only
  const dirs = [
    { direction: `${home}->${target.branch}`, to: target.branch, commit: target.commit },
    { direction: `${target.branch}->${home}`, to: home, commit: head },
  ];
  let rot = 0;
  for (let r = 1 - warmup; r <= switchReps; r++) {
    const order = ready.map((_, i) => ready[(i + rot) % ready.length]);
    rot++;
    for (const tool of order) {
      for (const d of dirs) {
        const meta = { part, rep: r, direction: d.direction, ...(r < 1 ? { warmup: true } : {}) };
        const { rec, endedMs } = await oneRun(
          tool,
          tool.switchTo(repo, d.to),
          meta,
          () => verify(repo, { branch: d.to, commit: d.commit }),
          runs,
          onRun,
        );
        if (!rec.ok) {
          // Leave a clean repository on the expected branch for the next run.
          await git(repo, ['checkout', '-f', d.to]);
          await git(repo, ['clean', '-fdxq']);
        }
        await settle(repo, rec.ok ? endedMs : Date.now());
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Summary

function summarize(runs, ready) {
  const good = (xs) => xs.filter((x) => x.ok && !x.warmup);
  const out = { restore: [], switch: {} };
  for (const n of ns) {
    const row = { n, tools: {} };
    for (const t of ready) {
      const rs = runs.filter((x) => x.part === 'restore' && x.n === n && x.tool === t.id);
      const ok = good(rs);
      const s = { runs: rs.filter((x) => !x.warmup).length, ok: ok.length };
      if (ok.length) {
        s.median = +median(ok.map((x) => x.seconds)).toFixed(4);
        s.min = Math.min(...ok.map((x) => x.seconds));
        s.max = Math.max(...ok.map((x) => x.seconds));
        s.cpuSecondsMedian = +median(ok.map((x) => x.cpuSeconds ?? NaN)).toFixed(2);
        const sums = ok.map((x) => x.summary).filter(Boolean);
        if (sums.length) s.pcheckout = pcheckoutFields(sums);
      }
      const bad = rs.filter((x) => !x.ok);
      if (bad.length) s.errors = [...new Set(bad.map((x) => x.error))];
      row.tools[t.id] = s;
    }
    const p = row.tools.pcheckout?.median;
    const g = row.tools['git-seq']?.median;
    row.pcheckoutVsGitSeq = p && g ? +(p / g).toFixed(3) : null;
    const pn = row.tools['pcheckout-nrw']?.median;
    row.pcheckoutNrwVsGitSeq = pn && g ? +(pn / g).toFixed(3) : null;
    const pe = row.tools['pcheckout-engine']?.median;
    row.engineVsGitSeq = pe && g ? +(pe / g).toFixed(3) : null;
    out.restore.push(row);
  }
  for (const part of ['switch-small', 'switch-large']) {
    const rs = runs.filter((x) => x.part === part);
    if (!rs.length) continue;
    const dirs = [...new Set(rs.map((x) => x.direction))];
    const per = {};
    for (const d of dirs) {
      per[d] = {};
      for (const t of ready.filter((x) => x.switchTo)) {
        const mine = rs.filter((x) => x.direction === d && x.tool === switchId(t));
        const ok = good(mine);
        const s = { runs: mine.filter((x) => !x.warmup).length, ok: ok.length };
        if (ok.length) {
          s.median = +median(ok.map((x) => x.seconds)).toFixed(4);
          s.min = Math.min(...ok.map((x) => x.seconds));
          s.max = Math.max(...ok.map((x) => x.seconds));
          s.cpuSecondsMedian = +median(ok.map((x) => x.cpuSeconds ?? NaN)).toFixed(2);
          const sums = ok.map((x) => x.summary).filter(Boolean);
          if (sums.length) s.pcheckout = pcheckoutFields(sums);
        }
        const bad = mine.filter((x) => !x.ok);
        if (bad.length) s.errors = [...new Set(bad.map((x) => x.error))];
        per[d][switchId(t)] = s;
      }
    }
    out.switch[part] = per;
  }
  const timed = runs.filter((x) => !x.warmup && x.load);
  if (timed.length) {
    out.load = {
      load1Median: +median(timed.map((x) => x.load.load1)).toFixed(2),
      load1Max: Math.max(...timed.map((x) => x.load.load1)),
    };
    const p = timed.map((x) => x.load.cpuPressure10).filter((x) => x !== undefined);
    if (p.length) out.load.cpuPressure10Median = +median(p).toFixed(1);
  }
  return out;
}

/** The fields of pcheckout's --json summary worth a table: pool use and phase medians. */
function pcheckoutFields(sums) {
  const last = sums.at(-1);
  const keys = Object.keys(last.timings || {});
  return {
    poolUsed: `${sums.filter((x) => x.pool?.used).length}/${sums.length}`,
    pool: last.pool,
    threshold: last.threshold,
    files: last.files,
    created: last.created,
    updated: last.updated,
    deleted: last.deleted,
    racyWaited: `${sums.filter((x) => x.racy?.waited).length}/${sums.length}`,
    racyPolicy: last.racy?.policy,
    inflater: last.inflater,
    timingsMedianMs: Object.fromEntries(
      keys.map((k) => [k, +median(sums.map((x) => x.timings?.[k] ?? NaN)).toFixed(1)]),
    ),
  };
}

function printSummary(summary, ready, info) {
  const lines = [];
  const has = (id) => ready.some((t) => t.id === id);
  if (summary.restore.some((r) => Object.values(r.tools).some((s) => s.ok))) {
    lines.push('');
    lines.push(
      `== restore N deleted files: ${info.corpus}, ${info.files.toLocaleString('en')} regular ` +
        `files, fresh ext4 image; median seconds of ${samples} sample(s) ==`,
    );
    const head = ['N', ...ready.map((t) => t.id)];
    if (has('pcheckout') && has('git-seq')) head.push('pcheckout/git-seq');
    if (has('pcheckout-nrw') && has('git-seq')) head.push('nrw/git-seq');
    if (has('pcheckout-engine') && has('git-seq')) head.push('engine/git-seq');
    if (has('pcheckout')) head.push('pool used', 'racyWait ms');
    const rows = [head];
    for (const r of summary.restore) {
      const row = [r.n, ...ready.map((t) => fmt(r.tools[t.id].median))];
      if (has('pcheckout') && has('git-seq')) row.push(fmt(r.pcheckoutVsGitSeq, 2));
      if (has('pcheckout-nrw') && has('git-seq')) row.push(fmt(r.pcheckoutNrwVsGitSeq, 2));
      if (has('pcheckout-engine') && has('git-seq')) row.push(fmt(r.engineVsGitSeq, 2));
      if (has('pcheckout')) {
        const p = r.tools.pcheckout.pcheckout;
        row.push(p?.poolUsed ?? '—', fmt(p?.timingsMedianMs?.racyWait, 0));
      }
      rows.push(row);
    }
    lines.push(table(rows, ['r', ...rows[0].slice(1).map(() => 'r')]));
    for (const r of summary.restore) {
      for (const t of ready) {
        const p = r.tools[t.id].pcheckout;
        if (p)
          lines.push(`N=${r.n} ${t.id}: phase medians ms ${JSON.stringify(p.timingsMedianMs)}`);
      }
    }
  }
  for (const [part, per] of Object.entries(summary.switch)) {
    const st = info.switches[part];
    lines.push('');
    lines.push(
      `== ${part}: ${st.what}; ${st.diff.changed.toLocaleString('en')} paths differ ` +
        `(${Object.entries(st.diff)
          .filter(([k]) => k !== 'changed')
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}); median seconds of ${switchReps} ==`,
    );
    const dirs = Object.keys(per);
    const rows = [['tool', ...dirs.flatMap((d) => [d, 'min', 'max', 'CPU s'])]];
    for (const t of ready.filter((x) => x.switchTo)) {
      rows.push([
        switchId(t),
        ...dirs.flatMap((d) => {
          const s = per[d][switchId(t)];
          return [fmt(s.median), fmt(s.min), fmt(s.max), fmt(s.cpuSecondsMedian, 2)];
        }),
      ]);
    }
    lines.push(table(rows, ['l', ...rows[0].slice(1).map(() => 'r')]));
    for (const d of dirs) {
      const g = Math.min(
        ...['git-w1', 'git-w2'].map((id) => per[d][id]?.median).filter((x) => x > 0),
      );
      for (const id of ['pcheckout', 'pcheckout-nrw']) {
        const s = per[d][id];
        if (!s?.median || !Number.isFinite(g)) continue;
        lines.push(
          `${d} ${id}: ${fmt(s.median / g, 2)} of git's best; ` +
            `pool ${s.pcheckout?.poolUsed ?? '—'}, phase medians ms ${JSON.stringify(s.pcheckout?.timingsMedianMs)}`,
        );
      }
    }
  }
  for (const r of summary.restore) {
    for (const t of ready)
      if (r.tools[t.id].errors)
        lines.push(`N=${r.n} ${t.id} FAILED: ${r.tools[t.id].errors.join(' ; ')}`);
  }
  for (const per of Object.values(summary.switch)) {
    for (const [d, x] of Object.entries(per)) {
      for (const t of ready.filter((x) => x.switchTo)) {
        const e = x[switchId(t)].errors;
        if (e) lines.push(`${d} ${switchId(t)} FAILED: ${e.join(' ; ')}`);
      }
    }
  }
  if (summary.load) {
    const l = summary.load;
    const busy = l.load1Median > os.cpus().length;
    lines.push('');
    lines.push(
      `machine load before the timed runs: 1-min load average median ${fmt(l.load1Median, 2)} ` +
        `(max ${fmt(l.load1Max, 2)}) on ${os.cpus().length} cores` +
        (l.cpuPressure10Median !== undefined
          ? `, CPU pressure (PSI some avg10) median ${fmt(l.cpuPressure10Median, 1)}%`
          : '') +
        (busy ? ' — BUSY: other work competed with the runs; figures are inflated and noisy' : ''),
    );
  }
  lines.push('');
  lines.push(
    'Wall time: parent hrtime around one child process (includes start-up: node ≈ 40 ms, git a few ' +
      'ms). Switch tables: git-w1 = checkout.workers=1 (git default), git-w2 = 2 workers with the ' +
      'default threshold of 100 files.',
  );
  console.log(lines.join('\n'));
}

// ---------------------------------------------------------------------------------------------
// Main

async function main() {
  const startedAt = new Date();
  if (!ensureTime()) fail(`${TIME} is required: apt-get install time`);
  const corpus = await ensureCorpus(opt.corpus);

  const toolInfo = [];
  const ready = [];
  for (const t of tools) {
    const reason = await t.available();
    toolInfo.push({ id: t.id, label: t.label, available: !reason, reason });
    if (reason) say(`${t.id}: not run — ${reason}`);
    else ready.push(t);
  }
  if (!ready.length) fail('no tool can run');

  const jsonFile = path.resolve(
    opt.json ||
      path.join(HERE, 'results', `restore-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`),
  );
  fs.mkdirSync(path.dirname(jsonFile), { recursive: true });
  const runs = [];
  const info = { corpus: opt.corpus, files: 0, switches: {} };
  const machine = {
    cores: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? null,
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    git: await tryRun('git', ['--version']),
    pcheckout: {
      cli: PCHECKOUT_CLI,
      commit: await tryRun('git', ['-C', MAIN, 'rev-parse', 'HEAD']),
      dirty:
        (await tryRun('git', ['-C', MAIN, 'status', '--porcelain', '--', 'src', 'native'])) !== '',
    },
  };
  let fsInfo = null;
  const save = (state) => {
    const summary = summarize(runs, ready);
    const result = {
      schema: 1,
      state,
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      argv: process.argv.slice(2),
      options: { parts, ns, samples, seed, switchReps, warmup, timeoutSeconds: timeoutMs / 1000 },
      machine,
      corpus: corpus.info,
      filesystem: fsInfo,
      setup: info,
      tools: toolInfo,
      runs,
      summary,
    };
    fs.writeFileSync(jsonFile, JSON.stringify(result, null, 2) + '\n');
    return summary;
  };
  installSignalHandlers((state) => save(state));
  saveOnCrash = save;

  const scratch = mountScratch('ext4img', cacheDir(), { ext4Size: opt['ext4-size'] });
  say(`ext4 image mounted at ${scratch.mnt}`);
  try {
    fsInfo = await fsFacts(scratch.mnt);
    const ctx = await setupRepo(scratch.mnt, corpus);
    const files = await regularFiles(ctx.repo);
    info.files = files.length;
    info.head = ctx.head;
    const onRun = () => save('running');
    if (parts.includes('restore')) await restorePart(ctx, ready, runs, onRun);
    if (parts.includes('switch-small')) {
      const t = await makeOnePercentBranch(ctx.repo, scratch.mnt, files, ctx.head);
      t.diff = await diffStat(ctx.repo, ctx.head, t.commit);
      t.what = `master <-> bench-1pct (commit ${t.commit.slice(0, 12)} on top of master, ~1% of the files edited)`;
      info.switches['switch-small'] = t;
      say(`switch-small: ${t.what}: ${JSON.stringify(t.diff)}`);
      await settle(ctx.repo, Date.now());
      await switchPart('switch-small', ctx, t, ready, runs, onRun);
    }
    if (parts.includes('switch-large')) {
      const commit = (await git(ctx.repo, ['rev-parse', `${ctx.head}~1`])).trim();
      await git(ctx.repo, ['update-ref', 'refs/heads/bench-prev', commit]);
      const t = {
        branch: 'bench-prev',
        commit,
        diff: await diffStat(ctx.repo, ctx.head, commit),
        what: `master <-> bench-prev (= master~1, the corpus's own parent commit: synthetic edits, not upstream history)`,
      };
      info.switches['switch-large'] = t;
      say(`switch-large: ${t.what}: ${JSON.stringify(t.diff)}`);
      await switchPart('switch-large', ctx, t, ready, runs, onRun);
    }
  } finally {
    for (const t of ready) t.close?.();
    scratch.teardown();
  }
  const summary = save('done');
  printSummary(summary, ready, info);
  for (const t of toolInfo.filter((x) => !x.available)) console.log(`${t.id} NOT RUN: ${t.reason}`);
  console.log(`\nraw runs + summary: ${jsonFile}`);
}

let saveOnCrash = null;

main().catch((e) => {
  cleanupAll();
  try {
    saveOnCrash?.('crashed');
  } catch {}
  console.error(e.stack || e);
  process.exit(1);
});
