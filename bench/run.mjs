#!/usr/bin/env node
// Times a fresh checkout (the worktree holds only .git, no index — as after
// `git clone --no-checkout`) of a corpus's HEAD with pcheckout and its peers.
//
//   node run.mjs [--corpus linux|midsize,history,...] [--trials 5]
//                [--fs tmpfs|disk|ext4img|both|all|tmpfs,ext4img] [--tools pcheckout,git-w1,...]
//                [--timeout 600] [--json results/x.json]
//
// Every trial runs in its own child process on a fresh clone (made untimed, objects hardlinked),
// tools in round-robin order; several corpora run one after the other on each filesystem, into
// one JSON. See README.md for what is measured and the caveats.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  CLEAN_ENV,
  TIME,
  addCleanup,
  cleanupAll,
  ensureTime,
  firstLine,
  fmt,
  fsFacts,
  installSignalHandlers,
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
const PYTHON = process.env.PCHECKOUT_BENCH_PYTHON || '/usr/bin/python3';
const ESGIT_PEER = path.join(HERE, 'peers', 'esgit.mjs');

// ---------------------------------------------------------------------------------------------
// Options

const USAGE = `usage: node run.mjs [options]
  --corpus <list>     comma-separated corpora (default linux), each with its own tables and
                      figures, built and cached on first use: ${corpusNames.join(', ')}
  --trials <n>        timed trials per tool, corpus and filesystem (default 5)
  --warmup <n>        untimed rounds first, per corpus and filesystem (default 1; verification
                      runs there)
  --fs <where>        tmpfs|disk|ext4img|both|all or a comma-separated list of tmpfs, disk,
                      ext4img (default both = tmpfs, disk). ext4img: a new ext4 made in a file on
                      the disk and loop-mounted, fresh for each run
  --tools <list>      comma-separated subset of: TOOLS (default all)
  --status <list>     corpora on which each checkout of a --status-tools tool is followed by a
                      timed \`git status --porcelain\` in the same worktree (the checkout + first
                      status figure): a comma-separated list, all or none (default linux)
  --status-tools <l>  tools whose checkouts get that status (default pcheckout,git-w1,git-w2)
  --timeout <s>       per-trial timeout in seconds (default 600)
  --json <file>       where to write raw trials + summary (default results/<timestamp>.json);
                      the SVG chart (one per corpus) is written next to it
  --pcheckout <path>  pcheckout CLI (default ../dist/cli.cjs, or env PCHECKOUT_CLI)
  --tmpfs-size <sz>   size of the tmpfs mounted for the run (default 8g)
  --ext4-size <sz>    size of the ext4img image (default 8g; sparse)
  --disk-dir <dir>    where disk trials run (default <cache>/work; same filesystem as the cache so
                      clones hardlink their objects)
  --drop-caches       on disk/ext4img, also drop the page cache before each trial (cold reads)
  --verify <when>     first|all|none: check worktree + index after a tool's first good trial per
                      filesystem, after every trial, or never (default first; never timed)
  --retry-failed      keep running a tool's remaining trials after one fails (default: skip them)
  -h, --help`;

const { values: opt } = parseArgs({
  options: {
    corpus: { type: 'string', default: 'linux' },
    status: { type: 'string', default: 'linux' },
    'status-tools': { type: 'string', default: 'pcheckout,git-w1,git-w2' },
    trials: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    fs: { type: 'string', default: 'both' },
    tools: { type: 'string' },
    timeout: { type: 'string', default: '600' },
    json: { type: 'string' },
    pcheckout: { type: 'string', default: process.env.PCHECKOUT_CLI || '' },
    'tmpfs-size': { type: 'string', default: '8g' },
    'ext4-size': { type: 'string', default: '8g' },
    'disk-dir': { type: 'string' },
    'drop-caches': { type: 'boolean', default: false },
    verify: { type: 'string', default: 'first' },
    'retry-failed': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

// ---------------------------------------------------------------------------------------------
// Tools

const PCHECKOUT_CLI = path.resolve(opt.pcheckout || path.join(MAIN, 'dist', 'cli.cjs'));

function gitTool(id, workers) {
  return {
    id,
    label: `git checkout.workers=${workers}${workers === 0 ? ' (auto)' : ''}`,
    // What clone does after fetching: a one-way merge of HEAD's tree into an empty index with
    // update (unpack_trees), then the index written.
    command: (dir) => [
      'git',
      ['-C', dir, '-c', `checkout.workers=${workers}`, 'read-tree', '-u', '--reset', 'HEAD'],
    ],
    available: async () => null,
  };
}

function pcheckoutTool(id, extra) {
  return {
    id,
    label: `pcheckout${extra.length ? ' ' + extra.join(' ') : ' (defaults)'}`,
    command: (dir) => ['node', [PCHECKOUT_CLI, '--json', ...extra, dir]],
    parse: (stdout) => JSON.parse(stdout),
    available: async () =>
      fs.existsSync(PCHECKOUT_CLI)
        ? null
        : `${PCHECKOUT_CLI} not found: build the engine first (cd .. && npm install && npm run build)`,
  };
}

const TOOLS = [
  pcheckoutTool('pcheckout', []),
  pcheckoutTool('pcheckout-w1', ['--workers', '1']),
  // The mission's own call on these 2 cores: memory must stay bounded by one budget.
  pcheckoutTool('pcheckout-w16', ['--workers', '16']),
  gitTool('git-w1', 1),
  gitTool('git-w2', 2),
  gitTool('git-auto', 0),
  {
    id: 'isomorphic-git',
    label: 'isomorphic-git checkout({ force: true })',
    command: (dir, ctx) => ['node', [path.join(HERE, 'peers', 'isogit.mjs'), dir, ctx.branch]],
    available: async () => {
      try {
        await import('isomorphic-git');
        return null;
      } catch (e) {
        return `isomorphic-git not installed (cd bench && npm install): ${e.message}`;
      }
    },
  },
  {
    id: 'isomorphic-git-batched',
    label: 'isomorphic-git checkout({ force: true, nonBlocking: true, batchSize: 100 })',
    command: (dir, ctx) => [
      'node',
      [path.join(HERE, 'peers', 'isogit.mjs'), dir, ctx.branch, '--batched'],
    ],
    available: async () => TOOLS.find((t) => t.id === 'isomorphic-git').available(),
  },
  {
    id: 'libgit2',
    label: 'libgit2 via pygit2 checkout_head(FORCE)',
    command: (dir) => [PYTHON, [path.join(HERE, 'peers', 'pygit2_checkout.py'), dir]],
    available: async () => {
      try {
        await run(PYTHON, [path.join(HERE, 'peers', 'pygit2_checkout.py'), '--version']);
        return null;
      } catch (e) {
        return `pygit2 not usable with ${PYTHON}: apt-get install python3-pygit2 (${firstLine(e)})`;
      }
    },
  },
  {
    id: 'es-git',
    label: 'es-git (libgit2 via napi-rs) checkoutHead({ force: true })',
    command: (dir) => ['node', [ESGIT_PEER, dir]],
    available: async () => {
      try {
        await run('node', [ESGIT_PEER, '--version']);
        return null;
      } catch (e) {
        // The peer's own line: why the module or its binary did not load (e.g. a glibc too old).
        const why = String(e.stderr || '').match(/^\[peer-error\] (.*)$/m)?.[1] ?? firstLine(e);
        return `${why} (cd bench && npm install; es-git 0.7.0 needs a newer glibc than Debian 12's)`;
      }
    },
  },
];

if (opt.help) {
  console.log(USAGE.replace('TOOLS', TOOLS.map((t) => t.id).join(',')));
  process.exit(0);
}

function fail(msg) {
  console.error(`run.mjs: ${msg}\n\n${USAGE.replace('TOOLS', TOOLS.map((t) => t.id).join(','))}`);
  process.exit(2);
}

const trials = Number(opt.trials);
const timeoutMs = Number(opt.timeout) * 1000;
const warmup = Number(opt.warmup);
if (!Number.isInteger(trials) || trials < 1) fail(`--trials must be a positive integer`);
if (!Number.isInteger(warmup) || warmup < 0) fail(`--warmup must be an integer ≥ 0`);
if (!(timeoutMs > 0)) fail(`--timeout must be a positive number of seconds`);
const FS_SETS = {
  tmpfs: ['tmpfs'],
  disk: ['disk'],
  ext4img: ['ext4img'],
  both: ['tmpfs', 'disk'],
  all: ['tmpfs', 'disk', 'ext4img'],
};
const list = (s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const fsList = [...new Set(list(opt.fs).flatMap((f) => FS_SETS[f] ?? [null]))];
if (!fsList.length || fsList.includes(null)) {
  fail(`--fs takes one or more of ${Object.keys(FS_SETS).join(', ')}, comma-separated`);
}
if (!['first', 'all', 'none'].includes(opt.verify)) fail(`--verify must be first, all or none`);
const corpora = [...new Set(list(opt.corpus))];
if (!corpora.length) fail('--corpus names no corpus');
for (const c of corpora) if (!corpusNames.includes(c)) fail(`unknown corpus ${c}`);
const statusCorpora = new Set(
  opt.status === 'all' ? corpora : opt.status === 'none' ? [] : list(opt.status),
);
for (const c of statusCorpora)
  if (!corpusNames.includes(c)) fail(`unknown corpus ${c} in --status`);
const statusTools = new Set(list(opt['status-tools']));
for (const w of statusTools) if (!TOOLS.some((t) => t.id === w)) fail(`unknown tool ${w}`);
let tools = TOOLS;
if (opt.tools) {
  const want = list(opt.tools);
  for (const w of want) if (!TOOLS.some((t) => t.id === w)) fail(`unknown tool ${w}`);
  tools = TOOLS.filter((t) => want.includes(t.id));
}

// ---------------------------------------------------------------------------------------------
// Helpers

let onInterrupt = null; // saves partial results

async function countWorktree(dir) {
  // Regular files and symlinks outside .git (gitlinks would be directories; none in the corpora).
  let n = 0;
  const walk = async (d) => {
    for (const e of await fsp.readdir(d, { withFileTypes: true })) {
      if (d === dir && e.name === '.git') continue;
      if (e.isDirectory()) await walk(path.join(d, e.name));
      else n++;
    }
  };
  await walk(dir);
  return n;
}

/** Untimed sanity check: index and worktree complete and clean against HEAD. */
async function verify(dir) {
  const g = (args) => run('git', ['-C', dir, ...args], { env: CLEAN_ENV }).then((r) => r.stdout);
  const count = (s) => s.split('\0').filter(Boolean).length;
  try {
    const expected = count(await g(['ls-tree', '-r', '-z', '--name-only', 'HEAD']));
    const index = count(await g(['ls-files', '-z']));
    const disk = await countWorktree(dir);
    const status = (
      await g(['status', '--porcelain', '--ignored', '--untracked-files=all'])
    ).trim();
    const ok = expected === index && index === disk && status === '';
    const res = { ok, expected, index, disk, statusClean: status === '' };
    if (status) res.status = status.split('\n').slice(0, 5);
    return res;
  } catch (e) {
    return { ok: false, error: firstLine(e) };
  }
}

// ---------------------------------------------------------------------------------------------
// Filesystems

installSignalHandlers((state) => onInterrupt?.(state));

async function setupFs(kind) {
  if (kind === 'tmpfs' || kind === 'ext4img') {
    const { mnt, teardown } = mountScratch(kind, cacheDir(), {
      tmpfsSize: opt['tmpfs-size'],
      ext4Size: opt['ext4-size'],
    });
    say(`${kind} mounted at ${mnt}`);
    return { kind, root: mnt, copySources: true, teardown };
  }
  const root = path.resolve(opt['disk-dir'] || path.join(cacheDir(), 'work'));
  await fsp.rm(root, { recursive: true, force: true });
  await fsp.mkdir(root, { recursive: true });
  const teardown = addCleanup(() => fs.rmSync(root, { recursive: true, force: true }));
  // Clones hardlink only within one filesystem: elsewhere, copy the source next to the trials.
  const copySources = fs.statSync(root).dev !== fs.statSync(cacheDir()).dev;
  return { kind, root, copySources, teardown };
}

/** The corpus's source repository on this filesystem: { source, release() }. */
async function addSource(fsCtx, corpus) {
  if (!fsCtx.copySources) return { source: corpus.repo, release: async () => {} };
  const source = path.join(fsCtx.root, `source-${corpus.info.name}.git`);
  say(
    `${fsCtx.kind}: copying the ${corpus.info.name} source repository into ${fsCtx.root} (untimed)`,
  );
  await fsp.rm(source, { recursive: true, force: true });
  await run('cp', ['-a', corpus.repo, source]);
  execFileSync('sync');
  return { source, release: () => fsp.rm(source, { recursive: true, force: true }) };
}

// ---------------------------------------------------------------------------------------------
// Trials

let dropCachesWorked = null;

async function oneTrial(tool, fsCtx, round, warm, ctx) {
  const target = path.join(fsCtx.root, `t-${ctx.corpus}-${tool.id}-${warm ? 'w' : ''}${round}`);
  try {
    return await trialIn(target, tool, fsCtx, round, warm, ctx);
  } catch (e) {
    // The harness's own preparation failed (clone, sync, ...): report it like a peer failure.
    const w = warm ? { warmup: true } : {};
    return {
      tool: tool.id,
      corpus: ctx.corpus,
      fs: fsCtx.kind,
      round,
      ...w,
      ok: false,
      error: `harness: ${firstLine(e)}`,
    };
  } finally {
    await fsp.rm(target, { recursive: true, force: true }).catch(() => {});
  }
}

async function trialIn(target, tool, fsCtx, round, warm, ctx) {
  await fsp.rm(target, { recursive: true, force: true });
  await run('git', ['clone', '--no-checkout', '--local', '-q', ctx.source, target], {
    env: CLEAN_ENV,
  });
  if (fs.existsSync(path.join(target, '.git', 'index'))) throw new Error('clone wrote an index');
  if (fsCtx.kind !== 'tmpfs') {
    execFileSync('sync');
    if (opt['drop-caches']) {
      try {
        fs.writeFileSync('/proc/sys/vm/drop_caches', '3');
        dropCachesWorked = true;
      } catch (e) {
        if (dropCachesWorked === null) say(`cannot drop caches: ${e.message}`);
        dropCachesWorked = false;
      }
    }
  }
  const [cmd, args] = tool.command(target, ctx);
  const r = await timedRun(cmd, args, { timeoutMs });
  const trial = {
    tool: tool.id,
    corpus: ctx.corpus,
    fs: fsCtx.kind,
    round,
    ...(warm ? { warmup: true } : {}),
    ok: r.ok,
    seconds: r.seconds === undefined ? null : +r.seconds.toFixed(4),
    rssMB: r.rssMB ?? null,
    cpuSeconds: r.cpuSeconds ?? null,
    sysSeconds: r.sysSeconds ?? null,
  };
  if (!r.ok) trial.error = r.error;
  if (r.ok && tool.parse) {
    try {
      trial.summary = tool.parse(r.stdout);
    } catch (e) {
      trial.ok = false;
      trial.error = `unparsable --json output (${firstLine(e)}): ${r.stdout.trim().slice(0, 200)}`;
    }
  }
  if (trial.ok && ctx.status && statusTools.has(tool.id)) {
    // The first `git status` after the checkout, in the same worktree, right away: what a user
    // runs next. git re-hashes the entries that the index leaves racily clean (stamped in the
    // index's own second) and may rewrite the index; that is part of the figure.
    const s = await timedRun('git', ['-C', target, 'status', '--porcelain'], { timeoutMs });
    trial.status = {
      ok: s.ok,
      seconds: s.seconds === undefined ? null : +s.seconds.toFixed(4),
      rssMB: s.rssMB ?? null,
      cpuSeconds: s.cpuSeconds ?? null,
    };
    if (s.ok) {
      const out = s.stdout.trim();
      trial.status.clean = out === '';
      if (out) trial.status.output = out.split('\n').slice(0, 5);
      trial.withStatusSeconds = +(trial.seconds + trial.status.seconds).toFixed(4);
    } else trial.status.error = s.error;
  }
  if (
    trial.ok &&
    (opt.verify === 'all' || (opt.verify === 'first' && !ctx.verified.has(tool.id)))
  ) {
    trial.verify = await verify(target);
    ctx.verified.add(tool.id);
    if (!trial.verify.ok) {
      trial.ok = false;
      trial.error = `verification failed: ${JSON.stringify(trial.verify)}`;
    }
  }
  return trial;
}

async function runFs(kind, corpusList, ready, allTrials, filesystems, onTrial) {
  let fsCtx;
  try {
    fsCtx = await setupFs(kind);
  } catch (e) {
    say(`${kind}: skipped — ${e.message}`);
    filesystems.push({ kind, error: e.message });
    return;
  }
  filesystems.push({ kind, ...(await fsFacts(fsCtx.root)) });
  try {
    for (const corpus of corpusList) {
      await runCorpus(fsCtx, corpus, ready, allTrials, onTrial);
    }
  } finally {
    fsCtx.teardown();
  }
}

async function runCorpus(fsCtx, corpus, ready, allTrials, onTrial) {
  const kind = fsCtx.kind;
  const name = corpus.info.name;
  let src;
  try {
    src = await addSource(fsCtx, corpus);
  } catch (e) {
    // Recorded as a failure of every tool, so the corpus's table says why it is empty.
    say(`${kind} ${name}: skipped — ${firstLine(e)}`);
    for (const tool of ready) {
      allTrials.push({
        tool: tool.id,
        corpus: name,
        fs: kind,
        round: 1,
        ok: false,
        skipped: true,
        error: `harness: ${firstLine(e)}`,
      });
    }
    return;
  }
  // isomorphic-git wants the branch name; the clone's HEAD is the source's.
  const branch = (
    await run('git', [`--git-dir=${src.source}`, 'symbolic-ref', '--short', 'HEAD'])
  ).stdout.trim();
  const ctx = {
    corpus: name,
    source: src.source,
    branch,
    verified: new Set(),
    status: statusCorpora.has(name),
  };
  const failed = new Map();
  try {
    for (let i = 1; i <= warmup + trials; i++) {
      const warm = i <= warmup;
      const round = warm ? i : i - warmup;
      const label = warm ? `warm-up ${round}/${warmup}` : `round ${round}/${trials}`;
      for (const tool of ready) {
        if (failed.has(tool.id) && !opt['retry-failed']) {
          allTrials.push({
            tool: tool.id,
            corpus: name,
            fs: kind,
            round,
            ...(warm ? { warmup: true } : {}),
            ok: false,
            skipped: true,
            error: `skipped after failure in ${failed.get(tool.id)}`,
          });
          continue;
        }
        const t = await oneTrial(tool, fsCtx, round, warm, ctx);
        allTrials.push(t);
        onTrial();
        const extra = t.summary
          ? ` [${t.summary.inflater}, pool ${t.summary.pool?.used ? t.summary.pool.workers : 'off'}]`
          : '';
        const status = t.status
          ? t.status.ok
            ? `, + git status ${t.status.seconds.toFixed(3)} s${t.status.clean ? '' : ' (not clean!)'}`
            : `, git status FAILED: ${t.status.error}`
          : '';
        say(
          `${kind} ${name} ${label} ${tool.id.padEnd(22)} ` +
            (t.ok
              ? `${t.seconds.toFixed(3)} s, ${t.rssMB} MB${extra}${status}` +
                (t.verify ? ' (verified)' : '')
              : `FAILED: ${t.error}`),
        );
        if (!t.ok && !failed.has(tool.id)) failed.set(tool.id, label);
      }
    }
  } finally {
    await src.release();
  }
}

// ---------------------------------------------------------------------------------------------
// Summary, table, chart

/** summary[fs] for one corpus's trials. */
function summarize(allTrials, ready, corpusName, fsKinds) {
  const out = {};
  const mine = allTrials.filter((t) => t.corpus === corpusName);
  for (const kind of fsKinds) {
    const per = {};
    for (const tool of ready) {
      // Warm-up trials count for failures, not for times.
      const ts = mine.filter((t) => t.fs === kind && t.tool === tool.id && !t.warmup);
      const warmFailed = mine.filter(
        (t) => t.fs === kind && t.tool === tool.id && t.warmup && !t.ok,
      );
      const good = ts.filter((t) => t.ok);
      const bad = [...warmFailed, ...ts.filter((t) => !t.ok)];
      const s = { trials: ts.length, ok: good.length };
      if (bad.length) s.errors = [...new Set(bad.map((t) => t.error))];
      // A tool with any failed trial is excluded from ratios: its times are not comparable.
      s.valid = good.length > 0 && bad.length === 0;
      if (good.length) {
        const secs = good.map((t) => t.seconds);
        s.median = +median(secs).toFixed(4);
        s.min = Math.min(...secs);
        s.max = Math.max(...secs);
        const rss = good.map((t) => t.rssMB).filter((x) => x !== null);
        if (rss.length) s.peakRssMB = Math.max(...rss);
        const cpu = good.map((t) => t.cpuSeconds).filter((x) => x !== null);
        if (cpu.length) s.cpuSecondsMedian = +median(cpu).toFixed(2);
        const sys = good.map((t) => t.sysSeconds).filter((x) => x !== null);
        if (sys.length) s.sysSecondsMedian = +median(sys).toFixed(2);
        const sums = good.map((t) => t.summary).filter(Boolean);
        if (sums.length) {
          const last = sums.at(-1);
          s.pcheckout = {
            inflater: last.inflater,
            pool: last.pool,
            threshold: last.threshold,
            entries: last.entries,
            files: last.files,
            symlinks: last.symlinks,
            bytes: last.bytes,
            collisions: last.collisions,
            timingsMedianMs: Object.fromEntries(
              Object.keys(last.timings || {}).map((k) => [
                k,
                +median(sums.map((x) => x.timings?.[k] ?? NaN)).toFixed(1),
              ]),
            ),
          };
        }
        const st = good.filter((t) => t.status);
        if (st.length) {
          const fine = st.filter((t) => t.status.ok && t.status.clean);
          s.status = {
            trials: st.length,
            ok: fine.length,
            // Only when every good checkout was followed by a clean status: comparable figures.
            valid: s.valid && fine.length === good.length,
          };
          if (fine.length) {
            s.status.median = +median(fine.map((t) => t.status.seconds)).toFixed(4);
            s.status.withCheckoutMedian = +median(fine.map((t) => t.withStatusSeconds)).toFixed(4);
            const bad = st.filter((t) => !(t.status.ok && t.status.clean));
            if (bad.length) {
              s.status.errors = [
                ...new Set(bad.map((t) => t.status.error || `not clean: ${t.status.output}`)),
              ];
            }
          }
        }
      }
      per[tool.id] = s;
    }
    const med = (id) => (per[id]?.valid ? per[id].median : null);
    const withStatus = (id) => (per[id]?.status?.valid ? per[id].status.withCheckoutMedian : null);
    const gitBestWs = [withStatus('git-w1'), withStatus('git-w2')].filter((x) => x !== null);
    const gitBestWithStatus = gitBestWs.length === 2 ? Math.min(...gitBestWs) : null;
    const statusIds = ready.filter((t) => per[t.id]?.status).map((t) => t.id);
    const gitBest = [med('git-w1'), med('git-w2')].filter((x) => x !== null);
    const ratios = {};
    for (const a of ready) {
      ratios[a.id] = {};
      for (const b of ready) {
        const x = med(a.id);
        const y = med(b.id);
        ratios[a.id][b.id] = x !== null && y !== null ? +(x / y).toFixed(3) : null;
      }
    }
    const gitBestMedian = gitBest.length === 2 ? Math.min(...gitBest) : null;
    const accept =
      gitBestMedian !== null && med('pcheckout') !== null
        ? +(med('pcheckout') / gitBestMedian).toFixed(3)
        : null;
    out[kind] = {
      tools: per,
      gitBestMedian,
      vsGitBest: Object.fromEntries(
        ready.map((t) => [
          t.id,
          gitBestMedian !== null && med(t.id) !== null
            ? +(med(t.id) / gitBestMedian).toFixed(3)
            : null,
        ]),
      ),
      ratios,
      acceptance: {
        figure: 'median(pcheckout) / min(median(git-w1), median(git-w2))',
        value: accept,
        pass: accept === null ? null : accept <= 1.0,
      },
    };
    if (statusIds.length) {
      const v = (id) =>
        gitBestWithStatus !== null && withStatus(id) !== null
          ? +(withStatus(id) / gitBestWithStatus).toFixed(3)
          : null;
      out[kind].withStatus = {
        figure:
          'median(checkout + first git status --porcelain) of pcheckout / min(the same of git-w1, git-w2)',
        gitBestMedian: gitBestWithStatus,
        vsGitBest: Object.fromEntries(statusIds.map((id) => [id, v(id)])),
        value: v('pcheckout'),
      };
    }
  }
  return out;
}

function printSummary(summary, ready, corpusInfo) {
  const lines = [];
  for (const [kind, s] of Object.entries(summary)) {
    lines.push('');
    lines.push(
      `== ${kind}: ${corpusInfo.name} corpus, ${corpusInfo.entries.toLocaleString('en')} entries, ` +
        `${trials} timed trial(s) per tool after ${warmup} warm-up, seconds ==`,
    );
    const ws = s.withStatus;
    const rows = [
      [
        'tool',
        'median',
        'min',
        'max',
        'RSS MB',
        'CPU s',
        'sys s',
        'vs git best',
        'ok',
        ...(ws ? ['git status', '+ status', 'vs git'] : []),
      ],
    ];
    for (const t of ready) {
      const x = s.tools[t.id];
      rows.push([
        t.id,
        fmt(x.median),
        fmt(x.min),
        fmt(x.max),
        fmt(x.peakRssMB, 0),
        fmt(x.cpuSecondsMedian, 2),
        fmt(x.sysSecondsMedian, 2),
        x.valid ? fmt(s.vsGitBest[t.id], 2) : 'excluded',
        `${x.ok}/${x.trials}`,
        ...(ws
          ? [
              fmt(x.status?.median),
              fmt(x.status?.withCheckoutMedian),
              x.status ? (x.status.valid ? fmt(ws.vsGitBest[t.id], 2) : 'excluded') : '',
            ]
          : []),
      ]);
    }
    lines.push(table(rows, ['l', ...rows[0].slice(1).map(() => 'r')]));
    const a = s.acceptance;
    lines.push(
      `acceptance  pcheckout / min(git-w1, git-w2) = ${fmt(a.value, 3)}` +
        (a.pass === null ? ' (not available)' : a.pass ? '  PASS (≤ 1.0)' : '  FAIL (> 1.0)'),
    );
    if (ws) {
      lines.push(
        `checkout + first git status  pcheckout / min(git-w1, git-w2) = ${fmt(ws.value, 3)}`,
      );
    }
    const valid = ready.filter((t) => s.tools[t.id].valid);
    if (valid.length > 1) {
      lines.push('ratios of medians (row / column):');
      const rr = [['', ...valid.map((t) => t.id)]];
      for (const a2 of valid) rr.push([a2.id, ...valid.map((b) => fmt(s.ratios[a2.id][b.id], 2))]);
      lines.push(table(rr, ['l', ...valid.map(() => 'r')]));
    }
    for (const t of ready) {
      const p = s.tools[t.id].pcheckout;
      if (p) {
        lines.push(
          `${t.id}: inflater ${p.inflater}, pool ${JSON.stringify(p.pool)}, threshold ${p.threshold}, ` +
            `phase medians ms ${JSON.stringify(p.timingsMedianMs)}`,
        );
      }
    }
    for (const t of ready) {
      const x = s.tools[t.id];
      if (x.errors) lines.push(`${t.id} FAILED: ${x.errors.join(' ; ')}`);
      if (x.status?.errors) lines.push(`${t.id} git status: ${x.status.errors.join(' ; ')}`);
    }
  }
  console.log(lines.join('\n'));
}

function printFootnote() {
  const lines = [''];
  lines.push(
    'Wall time: parent hrtime around the child (includes process start-up). Peak RSS: ru_maxrss ' +
      'from time(1) = the largest single process in the tree; for git with workers that is the ' +
      'biggest of the main process and its checkout--worker processes, not their sum. CPU: user+sys ' +
      '(sys: the kernel part) of the tree; medians. git status: `git status --porcelain` right ' +
      'after the checkout in its worktree, + status: the two added, per trial.',
  );
  console.log(lines.join('\n'));
}

function esc(s) {
  return String(s).replace(
    /[<>&"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c],
  );
}

// Grouped bar chart: one group per tool, one bar per filesystem (median), whiskers min..max.
function chartSvg(summary, ready, title, subtitle) {
  const kinds = Object.keys(summary);
  const colors = { tmpfs: '#4e79a7', disk: '#f28e2b', ext4img: '#59a14f' };
  const barW = 28;
  const gap = 6;
  const groupW = Math.max(96, kinds.length * (barW + gap) + 34);
  const left = 64;
  const top = 70;
  const plotH = 300;
  const width = Math.max(520, left + ready.length * groupW + 20);
  const height = top + plotH + 184;
  let maxV = 0;
  for (const k of kinds)
    for (const t of ready) maxV = Math.max(maxV, summary[k].tools[t.id].max ?? 0);
  if (maxV <= 0) maxV = 1;
  const mag = 10 ** Math.floor(Math.log10(maxV));
  const stepV = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => maxV / s <= 6);
  const maxAxis = Math.ceil(maxV / stepV) * stepV;
  const y = (v) => top + plotH - (v / maxAxis) * plotH;
  const el = [];
  el.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
      `viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
  );
  el.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  el.push(`<text x="${left}" y="22" font-size="15" font-weight="bold">${esc(title)}</text>`);
  el.push(`<text x="${left}" y="40" fill="#555">${esc(subtitle)}</text>`);
  for (let v = 0; v <= maxAxis + 1e-9; v += stepV) {
    el.push(
      `<line x1="${left}" x2="${width - 10}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>` +
        `<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${+v.toFixed(2)}</text>`,
    );
  }
  el.push(
    `<text transform="translate(16 ${top + plotH / 2}) rotate(-90)" text-anchor="middle">` +
      `median seconds (whiskers: min–max)</text>`,
  );
  ready.forEach((t, i) => {
    const gx = left + 16 + i * groupW;
    kinds.forEach((k, j) => {
      const s = summary[k].tools[t.id];
      const x = gx + j * (barW + gap);
      if (!s.median && s.median !== 0) {
        el.push(
          `<text x="${x + barW / 2}" y="${y(0) - 6}" text-anchor="middle" fill="#c00" ` +
            `transform="rotate(-90 ${x + barW / 2} ${y(0) - 6})" dx="30">failed</text>`,
        );
        return;
      }
      const fill = s.valid ? colors[k] || '#888' : '#bbb';
      el.push(
        `<rect x="${x}" y="${y(s.median)}" width="${barW}" height="${y(0) - y(s.median)}" ` +
          `fill="${fill}"><title>${esc(`${t.id} on ${k}: median ${fmt(s.median)} s`)}</title></rect>`,
      );
      const cx = x + barW / 2;
      el.push(
        `<line x1="${cx}" x2="${cx}" y1="${y(s.min)}" y2="${y(s.max)}" stroke="#333"/>` +
          `<line x1="${cx - 5}" x2="${cx + 5}" y1="${y(s.max)}" y2="${y(s.max)}" stroke="#333"/>` +
          `<line x1="${cx - 5}" x2="${cx + 5}" y1="${y(s.min)}" y2="${y(s.min)}" stroke="#333"/>`,
      );
      el.push(
        `<text x="${cx}" y="${y(s.max) - 4}" text-anchor="middle" font-size="10">` +
          `${fmt(s.median, s.median < 10 ? 2 : 1)}</text>`,
      );
    });
    el.push(
      `<text transform="translate(${gx + (kinds.length * (barW + gap)) / 2} ${top + plotH + 14}) ` +
        `rotate(-30)" text-anchor="end">${esc(t.id)}</text>`,
    );
  });
  el.push(`<line x1="${left}" x2="${width - 10}" y1="${y(0)}" y2="${y(0)}" stroke="#333"/>`);
  kinds.forEach((k, j) => {
    const x = left + j * 110;
    const ly = top + plotH + 124;
    el.push(
      `<rect x="${x}" y="${ly - 10}" width="12" height="12" fill="${colors[k] || '#888'}"/>` +
        `<text x="${x + 18}" y="${ly}">${esc(k)}</text>`,
    );
  });
  el.push(
    `<text x="${left}" y="${top + plotH + 148}" fill="#555">grey bar: excluded (a trial failed)` +
      `</text><text x="${left}" y="${top + plotH + 166}" fill="#555">` +
      `acceptance, pcheckout / min(git-w1, git-w2): ${kinds
        .map((k) => `${k} ${fmt(summary[k].acceptance.value, 2)}`)
        .join(', ')}</text>`,
  );
  el.push('</svg>');
  return el.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// Machine facts

async function startupCost(cmd, args) {
  const xs = [];
  for (let i = 0; i < 5; i++) {
    const t0 = process.hrtime.bigint();
    if ((await tryRun(cmd, args)) === null) return null;
    xs.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return +median(xs).toFixed(4);
}

async function machineFacts(ready) {
  const cpus = os.cpus();
  const pyv = await tryRun(PYTHON, [path.join(HERE, 'peers', 'pygit2_checkout.py'), '--version']);
  let isogitVersion = null;
  try {
    isogitVersion = JSON.parse(
      fs.readFileSync(path.join(HERE, 'node_modules', 'isomorphic-git', 'package.json'), 'utf8'),
    ).version;
  } catch {}
  const esgitv = await tryRun('node', [ESGIT_PEER, '--version']);
  let pcheckoutVersion = null;
  try {
    pcheckoutVersion = JSON.parse(fs.readFileSync(path.join(MAIN, 'package.json'), 'utf8')).version;
  } catch {}
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model ?? null,
    memoryGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    kernel: `${os.type()} ${os.release()} ${os.version()}`,
    os: await tryRun('sh', ['-c', '. /etc/os-release && echo "$PRETTY_NAME"']),
    node: process.version,
    git: await tryRun('git', ['--version']),
    time: TIME,
    python: await tryRun(PYTHON, ['--version']),
    pygit2: pyv ? JSON.parse(pyv) : null,
    isomorphicGit: isogitVersion,
    esGit: esgitv ? JSON.parse(esgitv) : null,
    pcheckout: {
      version: pcheckoutVersion,
      cli: PCHECKOUT_CLI,
      commit: await tryRun('git', ['-C', MAIN, 'rev-parse', 'HEAD']),
      dirty:
        (await tryRun('git', ['-C', MAIN, 'status', '--porcelain', '--', 'src', 'native'])) !== '',
    },
    // What process start-up alone costs, to read small-corpus figures against.
    startupSeconds: {
      node: await startupCost('node', ['-e', '']),
      git: await startupCost('git', ['--version']),
      pythonPygit2: ready.some((t) => t.id === 'libgit2')
        ? await startupCost(PYTHON, ['-c', 'import pygit2'])
        : null,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Main

async function main() {
  const startedAt = new Date();
  if (!ensureTime()) fail(`${TIME} is required for peak RSS: apt-get install time`);

  // Every corpus built (or found in the cache) before any trial, so no build runs between them.
  const corpusList = [];
  const corpusErrors = {};
  for (const name of corpora) {
    try {
      const corpus = await ensureCorpus(name);
      corpusList.push(corpus);
      say(
        `corpus ${name}: ${corpus.info.entries} entries, HEAD ${corpus.info.head.slice(0, 12)}, ` +
          `pack ${(corpus.info.packSizeBytes / 2 ** 20).toFixed(1)} MiB (${corpus.repo})`,
      );
    } catch (e) {
      if (corpora.length === 1) throw e;
      corpusErrors[name] = firstLine(e);
      say(`corpus ${name}: not run — ${firstLine(e)}`);
    }
  }
  if (!corpusList.length) fail('no corpus can be built');

  const toolInfo = [];
  const ready = [];
  for (const t of tools) {
    const reason = await t.available();
    toolInfo.push({ id: t.id, label: t.label, available: !reason, reason });
    if (reason) say(`${t.id}: not run — ${reason}`);
    else ready.push(t);
  }
  if (!ready.length) fail('no tool can run');

  const machine = await machineFacts(ready);
  const allTrials = [];
  const filesystems = [];
  const jsonFile = path.resolve(
    opt.json || path.join(HERE, 'results', `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`),
  );
  // One chart per corpus: <json>.svg for a single corpus (as before), <json>-<corpus>.svg else.
  const svgFile = (name) =>
    jsonFile.replace(/\.json$/, '') + (corpusList.length > 1 ? `-${name}` : '') + '.svg';
  fs.mkdirSync(path.dirname(jsonFile), { recursive: true });

  // Written after every trial (state: running), so an interrupted or crashed run keeps its data.
  const save = (state) => {
    const summary = {};
    for (const c of corpusList) {
      const name = c.info.name;
      const kinds = filesystems
        .filter(
          (f) =>
            !f.error && allTrials.some((t) => t.corpus === name && t.fs === f.kind && !t.warmup),
        )
        .map((f) => f.kind);
      if (kinds.length) summary[name] = summarize(allTrials, ready, name, kinds);
    }
    const result = {
      schema: 2,
      state,
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      argv: process.argv.slice(2),
      options: {
        corpora: corpusList.map((c) => c.info.name),
        trials,
        warmup,
        fs: fsList,
        timeoutSeconds: timeoutMs / 1000,
        verify: opt.verify,
        retryFailed: opt['retry-failed'],
        statusCorpora: [...statusCorpora],
        statusTools: [...statusTools],
        tmpfsSize: opt['tmpfs-size'],
        syncBeforeDiskTrials: true,
        ext4Size: opt['ext4-size'],
        dropCaches: opt['drop-caches'] ? dropCachesWorked : false,
        order:
          'round-robin over tools within each round; corpora one after the other on each ' +
          'filesystem; filesystems one after the other',
        gitCommand: 'git -c checkout.workers=N read-tree -u --reset HEAD',
        statusCommand: 'git status --porcelain (right after the checkout, same worktree)',
      },
      machine,
      // Keyed by corpus name; trials carry { corpus, fs }, summary is summary[corpus][fs].
      corpora: Object.fromEntries(corpusList.map((c) => [c.info.name, c.info])),
      ...(Object.keys(corpusErrors).length ? { corpusErrors } : {}),
      filesystems,
      tools: toolInfo,
      trials: allTrials,
      summary,
    };
    fs.writeFileSync(jsonFile, JSON.stringify(result, null, 2) + '\n');
    for (const c of corpusList) {
      const name = c.info.name;
      if (!summary[name]) continue;
      fs.writeFileSync(
        svgFile(name),
        chartSvg(
          summary[name],
          ready,
          `Fresh checkout of ${name} (${c.info.entries.toLocaleString('en')} entries)` +
            (state === 'done' ? '' : ` — ${state}`),
          `${machine.cores} cores, ${machine.kernel.split(' ').slice(0, 2).join(' ')}, ` +
            `${machine.git}, node ${machine.node}; median of ${trials}`,
        ),
      );
    }
    return summary;
  };
  onInterrupt = (state) => save(state);

  for (const kind of fsList) {
    await runFs(kind, corpusList, ready, allTrials, filesystems, () => save('running'));
  }
  const summary = save('done');
  for (const c of corpusList) {
    if (summary[c.info.name]) printSummary(summary[c.info.name], ready, c.info);
  }
  if (corpusList.length > 1) {
    // One line per corpus and filesystem: the figures to compare across sizes.
    const rows = [
      ['corpus', 'entries', 'fs', 'pcheckout s', 'git best s', 'acceptance', '+ status'],
    ];
    for (const c of corpusList) {
      for (const [kind, s] of Object.entries(summary[c.info.name] || {})) {
        rows.push([
          c.info.name,
          c.info.entries.toLocaleString('en'),
          kind,
          fmt(s.tools.pcheckout?.median),
          fmt(s.gitBestMedian),
          fmt(s.acceptance.value, 3),
          s.withStatus ? fmt(s.withStatus.value, 3) : '',
        ]);
      }
    }
    console.log(`\n== all corpora: pcheckout / min(git-w1, git-w2) ==`);
    console.log(table(rows, ['l', 'r', 'l', 'r', 'r', 'r', 'r']));
  }
  printFootnote();
  for (const t of toolInfo.filter((x) => !x.available)) console.log(`${t.id} NOT RUN: ${t.reason}`);
  for (const [n, e] of Object.entries(corpusErrors)) console.log(`corpus ${n} NOT RUN: ${e}`);
  const rel = path.relative(process.cwd(), jsonFile);
  console.log(
    `\nraw trials + summary: ${jsonFile}\nchart${corpusList.length > 1 ? 's' : ''}: ` +
      corpusList.map((c) => svgFile(c.info.name)).join(', ') +
      `\nmarkdown tables: node tables.mjs ${rel.startsWith('..') ? jsonFile : rel}`,
  );
}

main().catch((e) => {
  cleanupAll();
  try {
    onInterrupt?.('crashed');
  } catch {}
  console.error(e.stack || e);
  process.exit(1);
});
