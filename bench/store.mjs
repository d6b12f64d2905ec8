#!/usr/bin/env node
// The store of worktree-ready files (--store; docs/store.md): materializing a corpus into new
// directories with a warm store against the same materialize without one, on XFS with reflink
// and on ext4 (copy_file_range), each a new image in a file on the disk, side by side in one
// run; and on XFS, the disk space that ten trees and their store take against one plain tree.
// Each call is the CLI in its own process (`--target DIR`), medians of --trials.
//
//   node store.mjs [--corpus linux] [--fs xfsimg,ext4img] [--trials 3] [--trees 10]
//                  [--image-size 12g] [--json out.json]
//
// Root is needed (loop mounts). Writes JSON and, beside it, an SVG chart.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cacheDir, ensureCorpus } from './corpus.mjs';
import {
  cleanupAll,
  fmt,
  installSignalHandlers,
  machineLoad,
  median,
  mountScratch,
  say,
  table,
  timedRun,
} from './common.mjs';

const { values: opt } = parseArgs({
  options: {
    corpus: { type: 'string', default: 'linux' },
    fs: { type: 'string', default: 'xfsimg,ext4img' },
    trials: { type: 'string', default: '3' },
    trees: { type: 'string', default: '10' },
    'image-size': { type: 'string', default: '12g' },
    json: { type: 'string' },
  },
});
const TRIALS = Number(opt.trials);
const TREES = Number(opt.trees);
const CLI = path.join(import.meta.dirname, '..', 'dist', 'cli.cjs');

installSignalHandlers();
process.on('exit', cleanupAll);

const used = (dir) => {
  execFileSync('sync');
  const st = fs.statfsSync(dir);
  return (st.blocks - st.bfree) * st.bsize;
};

/** One materialize in its own process: wall seconds, peak RSS and the summary. */
async function materializeOnce(source, ref, target, store, link = false) {
  const args = [CLI, '--json', '--no-racy-wait', '--target', target];
  if (store) args.push('--store', store);
  if (link) args.push('--store-link');
  args.push(source, ref);
  const r = await timedRun(process.execPath, args, { timeoutMs: 600_000 });
  if (!r.ok) throw new Error(`materialize ${ref} into ${target}: ${r.error}`);
  const summary = JSON.parse(r.stdout);
  return { seconds: r.seconds, rssMB: r.rssMB, summary };
}

const remove = (dir) => fs.rmSync(dir, { recursive: true, force: true });

async function onFilesystem(kind, source, refs) {
  const scratch = mountScratch(kind, cacheDir(), { ext4Size: opt['image-size'] });
  const mnt = scratch.mnt;
  const store = path.join(mnt, 'store');
  const out = { kind, plain: {}, warm: {}, link: {}, fill: null, method: null, space: null };
  let n = 0;
  const fresh = () => path.join(mnt, `t${n++}`);
  try {
    // Without a store, each ref: a full write each time.
    let plainTreeBytes = null;
    for (const [label, ref] of Object.entries(refs)) {
      const runs = [];
      for (let t = 0; t < TRIALS; t++) {
        const dir = fresh();
        const before = used(mnt);
        runs.push(await materializeOnce(source, ref, dir, null));
        if (plainTreeBytes === null) plainTreeBytes = used(mnt) - before;
        remove(dir);
      }
      out.plain[label] = runs.map((r) => r.seconds);
      say(`${kind} plain ${label}: ${runs.map((r) => fmt(r.seconds)).join(' ')} s`);
    }
    // The store filled once (base), then new trees from it.
    const fillDir = fresh();
    const fill = await materializeOnce(source, refs.base, fillDir, store);
    out.fill = { seconds: fill.seconds, store: fill.summary.store };
    say(`${kind} fill: ${fmt(fill.seconds)} s (${fill.summary.store.inserted} inserted)`);
    remove(fillDir);
    for (const [label, ref] of Object.entries(refs)) {
      const runs = [];
      for (let t = 0; t < TRIALS; t++) {
        const dir = fresh();
        runs.push(await materializeOnce(source, ref, dir, store));
        remove(dir);
      }
      out.warm[label] = runs.map((r) => r.seconds);
      out.method = runs.at(-1).summary.store.method;
      out.warmStore ??= {};
      out.warmStore[label] = runs.at(-1).summary.store;
      say(
        `${kind} store ${label}: ${runs.map((r) => fmt(r.seconds)).join(' ')} s (${out.method}, ` +
          `${runs.at(-1).summary.store.imported} imported, ${runs.at(-1).summary.store.inserted} inserted)`,
      );
    }
    // The link mode (read-only trees of hard links): its own entries for executables, so
    // one tree to fill them first.
    const linkFill = fresh();
    await materializeOnce(source, refs.base, linkFill, store, true);
    remove(linkFill);
    for (const [label, ref] of Object.entries(refs)) {
      const runs = [];
      for (let t = 0; t < TRIALS; t++) {
        const dir = fresh();
        runs.push(await materializeOnce(source, ref, dir, store, true));
        remove(dir);
      }
      out.link[label] = runs.map((r) => r.seconds);
      say(
        `${kind} link mode ${label}: ${runs.map((r) => fmt(r.seconds)).join(' ')} s ` +
          `(${runs.at(-1).summary.store.method}, ${runs.at(-1).summary.store.imported} imported)`,
      );
    }
    // Disk space: the store plus TREES trees (alternating refs) against one plain tree.
    if (TREES > 0 && out.method === 'reflink') {
      const storeBytes = used(mnt);
      const labels = Object.keys(refs);
      for (let t = 0; t < TREES; t++)
        await materializeOnce(source, refs[labels[t % labels.length]], fresh(), store);
      const total = used(mnt);
      out.space = {
        trees: TREES,
        plainTreeBytes,
        storeAndTreesBytes: total,
        treesBytes: total - storeBytes,
        ratio: +(total / plainTreeBytes).toFixed(3),
      };
      say(
        `${kind} space: store + ${TREES} trees ${fmt(total / 2 ** 20, 0)} MiB, one plain tree ` +
          `${fmt(plainTreeBytes / 2 ** 20, 0)} MiB (${out.space.ratio}x)`,
      );
    }
  } finally {
    scratch.teardown();
  }
  return out;
}

function chart(results) {
  const bars = [];
  for (const r of results)
    for (const label of Object.keys(r.plain))
      bars.push({
        name: `${r.kind} ${label}`,
        plain: median(r.plain[label]),
        warm: median(r.warm[label]),
        link: median(r.link[label]),
      });
  const w = 70 + bars.length * 110;
  const h = 300;
  const max = Math.max(...bars.flatMap((b) => [b.plain, b.warm, b.link]), 0.001);
  const y = (v) => 250 - (v / max) * 200;
  const el = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" font-family="sans-serif" font-size="11">`,
    `<rect width="${w}" height="${h}" fill="#fff"/>`,
    `<text x="20" y="22" font-size="14" font-weight="bold">materialize into a new directory: without a store / warm store / link mode (s)</text>`,
  ];
  bars.forEach((b, i) => {
    const x = 50 + i * 110;
    for (const [k, v, color] of [
      [0, b.plain, '#f28e2b'],
      [1, b.warm, '#4e79a7'],
      [2, b.link, '#59a14f'],
    ]) {
      el.push(
        `<rect x="${x + k * 30}" y="${y(v)}" width="26" height="${250 - y(v)}" fill="${color}"/>`,
        `<text x="${x + k * 30 + 13}" y="${y(v) - 3}" text-anchor="middle" font-size="9">${fmt(v, 2)}</text>`,
      );
    }
    el.push(`<text x="${x + 43}" y="266" text-anchor="middle">${b.name}</text>`);
  });
  el.push(
    `<rect x="20" y="280" width="10" height="10" fill="#f28e2b"/><text x="34" y="289">no store</text>`,
    `<rect x="100" y="280" width="10" height="10" fill="#4e79a7"/><text x="114" y="289">warm store</text>`,
    `<rect x="200" y="280" width="10" height="10" fill="#59a14f"/><text x="214" y="289">link mode</text>`,
    '</svg>',
  );
  return el.join('\n') + '\n';
}

async function main() {
  const corpus = await ensureCorpus(opt.corpus);
  const source = corpus.repo;
  const refs = { base: 'HEAD', other: 'HEAD~1' };
  const load = machineLoad();
  const results = [];
  for (const kind of opt.fs.split(',')) results.push(await onFilesystem(kind, source, refs));
  const rows = [
    ['fs', 'ref', 'no store s', 'warm store s', 'ratio', 'method', 'link mode s', 'ratio'],
  ];
  for (const r of results)
    for (const label of Object.keys(refs)) {
      const p = median(r.plain[label]);
      const s = median(r.warm[label]);
      const l = median(r.link[label]);
      rows.push([r.kind, label, fmt(p), fmt(s), fmt(s / p), r.method ?? '-', fmt(l), fmt(l / p)]);
    }
  console.log(table(rows, ['l', 'l', 'r', 'r', 'r', 'l', 'r', 'r']));
  if (opt.json) {
    const doc = {
      date: new Date().toISOString(),
      corpus: opt.corpus,
      trials: TRIALS,
      load,
      results,
    };
    fs.writeFileSync(opt.json, JSON.stringify(doc, null, 2) + '\n');
    const svg = opt.json.replace(/\.json$/, '') + '.svg';
    fs.writeFileSync(svg, chart(results));
    say(`wrote ${opt.json} and ${svg}`);
  }
}

main().catch((e) => {
  say(e.stack ?? String(e));
  process.exitCode = 1;
});
