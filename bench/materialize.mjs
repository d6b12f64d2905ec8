#!/usr/bin/env node
// Materialize, then refresh: a ~1,000-file tree written into a plain directory, then the same
// directory brought to a commit that changes ~5% of it. Shows what the refresh writes (it
// should be only the difference) and its time against a full materialize of the same commit.
// Each call runs in its own process (node start-up included), medians of --trials.
//
//   node materialize.mjs [--files 1000] [--changed 0.05] [--trials 5] [--json out.json]

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    files: { type: 'string', default: '1000' },
    changed: { type: 'string', default: '0.05' },
    trials: { type: 'string', default: '5' },
    json: { type: 'string' },
  },
});
const FILES = Number(opt.files);
const CHANGED = Number(opt.changed);
const TRIALS = Number(opt.trials);
const DIST = new URL('../dist/index.js', import.meta.url).href;

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-mat-bench-'));
process.on('exit', () => fs.rmSync(root, { recursive: true, force: true }));
const env = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: root,
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@example.com',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@example.com',
};
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();

// A deterministic tree: FILES text files in 40 directories, 1–12 KiB each.
const repo = path.join(root, 'repo');
fs.mkdirSync(repo);
git(repo, 'init', '-q', '-b', 'main');
let seed = 12345;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const names = [];
for (let i = 0; i < FILES; i++) {
  const rel = `d${i % 40}/sub${i % 7}/file${i}.txt`;
  names.push(rel);
  fs.mkdirSync(path.join(repo, path.dirname(rel)), { recursive: true });
  fs.writeFileSync(path.join(repo, rel), `file ${i}\n`.repeat(Math.floor(100 + rand() * 1300)));
}
git(repo, 'add', '-A');
git(repo, 'commit', '-qm', 'A');
git(repo, 'tag', 'A');
const edits = names.filter(() => rand() < CHANGED);
for (const rel of edits) fs.appendFileSync(path.join(repo, rel), 'an edit\n');
git(repo, 'commit', '-qam', 'B');
git(repo, 'tag', 'B');

function materializeInChild(target, ref) {
  const code = `import { materialize } from ${JSON.stringify(DIST)};
const t = performance.now();
const s = await materialize(${JSON.stringify(repo)}, ${JSON.stringify(target)}, { ref: ${JSON.stringify(ref)} });
process.stdout.write(JSON.stringify({ ...s, inProcessMs: performance.now() - t }));`;
  const t = performance.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
  const wall = performance.now() - t;
  if (r.status !== 0) throw new Error(`materialize failed: ${r.stderr}`);
  return { wall, summary: JSON.parse(r.stdout) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const full = [];
const refresh = [];
let refreshSummary;
let inodesKept = 0;
for (let t = 0; t < TRIALS; t++) {
  // A full materialize of B into a new directory.
  full.push(materializeInChild(path.join(root, `full-${t}`), 'B').wall);
  // A materialized A refreshed to B.
  const dir = path.join(root, `refresh-${t}`);
  materializeInChild(dir, 'A');
  const before = new Map(names.map((n) => [n, fs.statSync(path.join(dir, n)).ino]));
  const r = materializeInChild(dir, 'B');
  refresh.push(r.wall);
  refreshSummary = r.summary;
  const unchanged = names.filter((n) => !edits.includes(n));
  inodesKept = unchanged.filter((n) => fs.statSync(path.join(dir, n)).ino === before.get(n)).length;
}

const result = {
  files: FILES,
  changedBetweenCommits: edits.length,
  refresh: {
    medianMs: Math.round(median(refresh)),
    written: refreshSummary.files,
    created: refreshSummary.created,
    updated: refreshSummary.updated,
    deleted: refreshSummary.deleted,
    unchangedFilesInodeKept: inodesKept,
    unchangedFiles: FILES - edits.length,
  },
  fullMaterialize: { medianMs: Math.round(median(full)), written: FILES },
  ratio: Math.round((median(refresh) / median(full)) * 100) / 100,
  trials: TRIALS,
  load: os.loadavg()[0],
};
console.log(
  [
    `tree: ${FILES} files; A → B changes ${edits.length} of them (${((edits.length / FILES) * 100).toFixed(1)}%)`,
    `full materialize of B:     ${result.fullMaterialize.medianMs} ms (median of ${TRIALS}, one process each), ${FILES} files written`,
    `refresh A → B in place:    ${result.refresh.medianMs} ms, ${result.refresh.written} files written (created ${result.refresh.created}, updated ${result.refresh.updated}, deleted ${result.refresh.deleted}); ${inodesKept} of ${FILES - edits.length} unchanged files kept their inode`,
    `refresh / full:            ${result.ratio}    (load average ${result.load.toFixed(2)})`,
  ].join('\n'),
);
if (opt.json) fs.writeFileSync(opt.json, `${JSON.stringify(result, null, 2)}\n`);
