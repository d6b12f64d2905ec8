#!/usr/bin/env node
// Times a fresh checkout (the worktree holds only .git, no index — as after
// `git clone --no-checkout`) of a corpus's HEAD with pcheckout and its peers.
//
//   node run.mjs [--corpus linux|small] [--trials 5] [--fs tmpfs|disk|ext4img|both|all]
//                [--tools pcheckout,git-w1,...] [--timeout 600] [--json results/x.json]
//
// Every trial runs in its own child process on a fresh clone (made untimed, objects hardlinked),
// tools in round-robin order. See README.md for what is measured and the caveats.

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

// ---------------------------------------------------------------------------------------------
// Options

const USAGE = `usage: node run.mjs [options]
  --corpus <name>     ${corpusNames.join('|')} (default linux; built and cached on first use)
  --trials <n>        timed trials per tool and filesystem (default 5)
  --warmup <n>        untimed rounds first, per filesystem (default 1; verification runs there)
  --fs <where>        tmpfs|disk|ext4img|both|all (default both = tmpfs, disk). ext4img: a new
                      ext4 made in a file on the disk and loop-mounted, fresh for each run
  --tools <list>      comma-separated subset of: TOOLS (default all)
  --timeout <s>       per-trial timeout in seconds (default 600)
  --json <file>       where to write raw trials + summary (default results/<timestamp>.json);
                      the SVG chart is written next to it
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
if (!FS_SETS[opt.fs]) fail(`--fs must be one of ${Object.keys(FS_SETS).join(', ')}`);
if (!['first', 'all', 'none'].includes(opt.verify)) fail(`--verify must be first, all or none`);
if (!corpusNames.includes(opt.corpus)) fail(`unknown corpus ${opt.corpus}`);
let tools = TOOLS;
if (opt.tools) {
  const want = opt.tools.split(',').map((s) => s.trim());
  for (const w of want) if (!TOOLS.some((t) => t.id === w)) fail(`unknown tool ${w}`);
  tools = TOOLS.filter((t) => want.includes(t.id));
}
const fsList = FS_SETS[opt.fs];

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

async function setupFs(kind, corpus) {
  if (kind === 'tmpfs' || kind === 'ext4img') {
    const { mnt, teardown } = mountScratch(kind, cacheDir(), {
      tmpfsSize: opt['tmpfs-size'],
      ext4Size: opt['ext4-size'],
    });
    say(`${kind} mounted at ${mnt}; copying the source repository into it (untimed)`);
    await run('cp', ['-a', corpus.repo, path.join(mnt, 'source.git')]);
    execFileSync('sync');
    return { kind, root: mnt, source: path.join(mnt, 'source.git'), teardown };
  }
  const root = path.resolve(opt['disk-dir'] || path.join(cacheDir(), 'work'));
  await fsp.rm(root, { recursive: true, force: true });
  await fsp.mkdir(root, { recursive: true });
  const teardown = addCleanup(() => fs.rmSync(root, { recursive: true, force: true }));
  let source = corpus.repo;
  if (fs.statSync(root).dev !== fs.statSync(corpus.repo).dev) {
    // Clones hardlink only within one filesystem: keep a copy of the source next to the trials.
    say(`${root} is not on the cache's filesystem; copying the source repository (untimed)`);
    source = path.join(root, 'source.git');
    await run('cp', ['-a', corpus.repo, source]);
  }
  return { kind, root, source, teardown };
}

// ---------------------------------------------------------------------------------------------
// Trials

let dropCachesWorked = null;

async function oneTrial(tool, fsCtx, round, warm, ctx) {
  const target = path.join(fsCtx.root, `t-${tool.id}-${warm ? 'w' : ''}${round}`);
  try {
    return await trialIn(target, tool, fsCtx, round, warm, ctx);
  } catch (e) {
    // The harness's own preparation failed (clone, sync, ...): report it like a peer failure.
    const w = warm ? { warmup: true } : {};
    return {
      tool: tool.id,
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
  await run('git', ['clone', '--no-checkout', '--local', '-q', fsCtx.source, target], {
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

async function runFs(kind, corpus, ready, allTrials, filesystems, onTrial) {
  let fsCtx;
  try {
    fsCtx = await setupFs(kind, corpus);
  } catch (e) {
    say(`${kind}: skipped — ${e.message}`);
    filesystems.push({ kind, error: e.message });
    return;
  }
  filesystems.push({ kind, ...(await fsFacts(fsCtx.root)) });
  // isomorphic-git wants the branch name; the clone's HEAD is the source's.
  const branch = (
    await run('git', [`--git-dir=${fsCtx.source}`, 'symbolic-ref', '--short', 'HEAD'])
  ).stdout.trim();
  const ctx = { branch, verified: new Set() };
  const failed = new Map();
  try {
    for (let i = 1; i <= warmup + trials; i++) {
      const warm = i <= warmup;
      const round = warm ? i : i - warmup;
      const name = warm ? `warm-up ${round}/${warmup}` : `round ${round}/${trials}`;
      for (const tool of ready) {
        if (failed.has(tool.id) && !opt['retry-failed']) {
          allTrials.push({
            tool: tool.id,
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
        say(
          `${kind} ${name} ${tool.id.padEnd(22)} ` +
            (t.ok
              ? `${t.seconds.toFixed(3)} s, ${t.rssMB} MB${extra}${t.verify ? ' (verified)' : ''}`
              : `FAILED: ${t.error}`),
        );
        if (!t.ok && !failed.has(tool.id)) failed.set(tool.id, name);
      }
    }
  } finally {
    fsCtx.teardown();
  }
}

// ---------------------------------------------------------------------------------------------
// Summary, table, chart

function summarize(allTrials, ready, fsKinds) {
  const out = {};
  for (const kind of fsKinds) {
    const per = {};
    for (const tool of ready) {
      // Warm-up trials count for failures, not for times.
      const ts = allTrials.filter((t) => t.fs === kind && t.tool === tool.id && !t.warmup);
      const warmFailed = allTrials.filter(
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
      }
      per[tool.id] = s;
    }
    const med = (id) => (per[id]?.valid ? per[id].median : null);
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
    const rows = [
      ['tool', 'median', 'min', 'max', 'RSS MB', 'CPU s', 'sys s', 'vs git best', 'ok'],
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
      ]);
    }
    lines.push(table(rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r']));
    const a = s.acceptance;
    lines.push(
      `acceptance  pcheckout / min(git-w1, git-w2) = ${fmt(a.value, 3)}` +
        (a.pass === null ? ' (not available)' : a.pass ? '  PASS (≤ 1.0)' : '  FAIL (> 1.0)'),
    );
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
    }
  }
  lines.push('');
  lines.push(
    'Wall time: parent hrtime around the child (includes process start-up). Peak RSS: ru_maxrss ' +
      'from time(1) = the largest single process in the tree; for git with workers that is the ' +
      'biggest of the main process and its checkout--worker processes, not their sum. CPU: user+sys ' +
      '(sys: the kernel part) of the tree; medians.',
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

  const corpus = await ensureCorpus(opt.corpus);
  say(
    `corpus ${opt.corpus}: ${corpus.info.entries} entries, HEAD ${corpus.info.head.slice(0, 12)}, ` +
      `pack ${(corpus.info.packSizeBytes / 2 ** 20).toFixed(1)} MiB (${corpus.repo})`,
  );

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
  const svgFile = jsonFile.replace(/\.json$/, '') + '.svg';
  fs.mkdirSync(path.dirname(jsonFile), { recursive: true });

  // Written after every trial (state: running), so an interrupted or crashed run keeps its data.
  const save = (state) => {
    const kinds = filesystems
      .filter((f) => !f.error && allTrials.some((t) => t.fs === f.kind && !t.warmup))
      .map((f) => f.kind);
    const summary = summarize(allTrials, ready, kinds);
    const result = {
      schema: 1,
      state,
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      argv: process.argv.slice(2),
      options: {
        corpus: opt.corpus,
        trials,
        warmup,
        fs: fsList,
        timeoutSeconds: timeoutMs / 1000,
        verify: opt.verify,
        retryFailed: opt['retry-failed'],
        tmpfsSize: opt['tmpfs-size'],
        syncBeforeDiskTrials: true,
        ext4Size: opt['ext4-size'],
        dropCaches: opt['drop-caches'] ? dropCachesWorked : false,
        order: 'round-robin over tools within each round; filesystems one after the other',
        gitCommand: 'git -c checkout.workers=N read-tree -u --reset HEAD',
      },
      machine,
      corpus: corpus.info,
      filesystems,
      tools: toolInfo,
      trials: allTrials,
      summary,
    };
    fs.writeFileSync(jsonFile, JSON.stringify(result, null, 2) + '\n');
    fs.writeFileSync(
      svgFile,
      chartSvg(
        summary,
        ready,
        `Fresh checkout of ${opt.corpus} (${corpus.info.entries.toLocaleString('en')} entries)` +
          (state === 'done' ? '' : ` — ${state}`),
        `${machine.cores} cores, ${machine.kernel.split(' ').slice(0, 2).join(' ')}, ` +
          `${machine.git}, node ${machine.node}; median of ${trials}`,
      ),
    );
    return summary;
  };
  onInterrupt = (state) => save(state);

  for (const kind of fsList) {
    await runFs(kind, corpus, ready, allTrials, filesystems, () => save('running'));
  }
  const summary = save('done');
  printSummary(summary, ready, corpus.info);
  for (const t of toolInfo.filter((x) => !x.available)) console.log(`${t.id} NOT RUN: ${t.reason}`);
  console.log(`\nraw trials + summary: ${jsonFile}\nchart: ${svgFile}`);
}

main().catch((e) => {
  cleanupAll();
  try {
    onInterrupt?.('crashed');
  } catch {}
  console.error(e.stack || e);
  process.exit(1);
});
