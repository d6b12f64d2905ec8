#!/usr/bin/env node
// Seed corpora for the fuzz targets, made with git from a small generated repository (nothing
// is fetched): packs with offset and reference deltas, their indexes (also with 64-bit
// offsets), deltas and zlib streams cut from the packs with their bases and sizes, trees, and
// index files of versions 2, 3 and 4 (extended flags, unmerged stages, a long path, a sparse
// directory entry). Usage: node fuzz/seed.mjs <out dir>  (one sub-directory per target).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

const out = path.resolve(process.argv[2] ?? 'fuzz/out/seeds');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-seed-'));
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'seed',
  GIT_AUTHOR_EMAIL: 'seed@example.com',
  GIT_COMMITTER_NAME: 'seed',
  GIT_COMMITTER_EMAIL: 'seed@example.com',
  GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};
const git = (cwd, args, input) =>
  execFileSync('git', args, { cwd, env, input, maxBuffer: 1 << 28 });
const gitText = (cwd, args, input) => git(cwd, args, input).toString('utf8').trim();

let counter = 0;
function save(target, name, bytes) {
  const dir = path.join(out, target);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${String(counter++).padStart(3, '0')}-${name}`), bytes);
}
const u16 = (n) => Buffer.from([n & 0xff, n >> 8]);
const u32 = (n) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};

// Deterministic content: text that changes a little per commit (deltas), and some binary.
let seed = 7;
const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
const words = ['alpha', 'beta', 'gamma', 'delta', 'tree', 'blob', 'pack', 'index', '\n'];
const text = (n) => Array.from({ length: n }, () => words[rand() % words.length]).join(' ');
const binary = (n) => Buffer.from(Array.from({ length: n }, () => rand() & 0xff));

const repo = path.join(work, 'repo');
git(work, ['init', '-q', '-b', 'main', repo]);
const write = (rel, data, mode) => {
  fs.mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
  fs.writeFileSync(path.join(repo, rel), data);
  if (mode) fs.chmodSync(path.join(repo, rel), mode);
};
const base = text(400);
const bin = binary(1500);
for (let c = 0; c < 4; c++) {
  write('a.txt', base + text(20 * c));
  write('dir/sub/b.c', `int main(void) { return ${c}; }\n${text(60)}`);
  write('bin.dat', Buffer.concat([bin.subarray(0, 700), binary(8), bin.subarray(708)]));
  write('big.txt', `${'all work and no play\n'.repeat(800)}${text(30)}`);
  write('run.sh', `#!/bin/sh\necho ${c}\n`, 0o755);
  write('empty', '');
  for (let i = 0; i < 12; i++) write(`many/f${i}.txt`, `${i} ${c < 2 ? 'x' : 'y'}\n`);
  if (c === 0) fs.symlinkSync('a.txt', path.join(repo, 'link'));
  git(repo, ['add', '-A']);
  if (c === 1) {
    const blob = gitText(repo, ['hash-object', '-w', '--stdin'], 'sub\n');
    git(repo, ['update-index', '--add', '--cacheinfo', `160000,${blob},module`]);
  }
  git(repo, ['commit', '-q', '-m', `c${c}`]);
}
const gitDir = path.join(repo, '.git');

// Loose objects (before any repack): zlib streams of known size.
const looseDir = path.join(gitDir, 'objects');
for (const sub of fs
  .readdirSync(looseDir)
  .filter((d) => /^[0-9a-f]{2}$/.test(d))
  .slice(0, 12)) {
  for (const f of fs.readdirSync(path.join(looseDir, sub)).slice(0, 2)) {
    const z = fs.readFileSync(path.join(looseDir, sub, f));
    save('inflate', 'loose', Buffer.concat([u32(zlib.inflateSync(z).length), z]));
  }
}

// Packs: everything with offset deltas, everything with reference deltas, the last commit alone.
function makePack(name, args, revs) {
  const packDir = path.join(work, name);
  fs.mkdirSync(packDir);
  const prefix = path.join(packDir, 'p');
  const hash = gitText(repo, ['pack-objects', ...args, prefix], revs);
  return { pack: `${prefix}-${hash}.pack`, idx: `${prefix}-${hash}.idx` };
}
const all = gitText(repo, ['rev-list', '--objects', '--all']) + '\n';
const last = gitText(repo, ['rev-list', '--objects', 'HEAD~1..HEAD']) + '\n';
const packs = [
  ['ofs', makePack('ofs', ['--delta-base-offset', '--window=50', '--depth=50'], all)],
  ['ref', makePack('ref', ['--window=50', '--depth=50'], all)],
  ['last', makePack('last', ['--delta-base-offset'], last)],
];
// The same pack indexed with every offset in the 64-bit table.
{
  const { pack } = packs[2][1];
  const idx64 = path.join(work, 'idx64.idx');
  git(work, ['index-pack', '--index-version=2,0', '-o', idx64, pack]);
  packs.push(['idx64', { pack, idx: idx64 }]);
}
for (const [name, { pack, idx }] of packs) {
  const p = fs.readFileSync(pack);
  const i = fs.readFileSync(idx);
  save('pack_index', `${name}.idx`, i);
  save('pack_read', name, Buffer.concat([u32(i.length), i, p]));
  if (name !== 'idx64') save('pack_entry', `${name}.pack`, p);
}

// Deltas and zlib streams cut out of the packs, located with verify-pack.
function entries(packInfo) {
  const lines = gitText(repo, ['verify-pack', '-v', packInfo.idx]).split('\n');
  const list = [];
  for (const line of lines) {
    const m = /^([0-9a-f]{40}) (\w+)\s+(\d+) (\d+) (\d+)(?: \d+ ([0-9a-f]{40}))?$/.exec(line);
    if (m) list.push({ oid: m[1], size: +m[3], packed: +m[4], offset: +m[5], base: m[6] });
  }
  return list;
}
for (const [name, info] of packs.slice(0, 2)) {
  const p = fs.readFileSync(info.pack);
  for (const e of entries(info)) {
    let pos = e.offset;
    let c = p[pos++];
    const type = (c >> 4) & 7;
    while (c & 0x80) c = p[pos++];
    if (type === 6) {
      do c = p[pos++];
      while (c & 0x80);
    } else if (type === 7) {
      pos += 20;
    }
    const z = p.subarray(pos, e.offset + e.packed);
    const data = zlib.inflateSync(z);
    if (data.length < 4096)
      save('inflate', `${name}-${type}`, Buffer.concat([u32(data.length), z]));
    if (!e.base) continue;
    const baseType = gitText(repo, ['cat-file', '-t', e.base]);
    const baseData = git(repo, ['cat-file', baseType, e.base]);
    if (baseData.length < 0x10000 && data.length < 4096)
      save(
        'delta',
        `${name}-${e.oid.slice(0, 8)}`,
        Buffer.concat([u16(baseData.length), baseData, data]),
      );
  }
}

// Trees: a commit's root and its subtrees, each subtree's id replaced by the harness's id for
// its position (00..00k), joined as the tree target reads them.
const SEP = Buffer.from('\n--tree--\n');
function treeSeed(rootOid) {
  const order = [rootOid];
  const raw = [];
  for (let k = 0; k < order.length && k < 8; k++) {
    const bytes = Buffer.from(git(repo, ['cat-file', 'tree', order[k]]));
    for (let pos = 0; pos < bytes.length;) {
      const sp = bytes.indexOf(0x20, pos);
      const nul = bytes.indexOf(0, sp);
      const mode = bytes.subarray(pos, sp).toString();
      const oidAt = nul + 1;
      if (mode === '40000') {
        const sub = bytes.subarray(oidAt, oidAt + 20).toString('hex');
        let idx = order.indexOf(sub);
        if (idx < 0 && order.length < 8) idx = order.push(sub) - 1;
        const fake = Buffer.alloc(20);
        fake[19] = idx < 0 ? 0xff : idx;
        fake.copy(bytes, oidAt);
      }
      pos = oidAt + 20;
    }
    raw.push(bytes);
  }
  return Buffer.concat(raw.flatMap((b, i) => (i === 0 ? [b] : [SEP, b])));
}
for (const rev of ['HEAD', 'HEAD~2'])
  save('tree', rev.replace('~', '-'), treeSeed(gitText(repo, ['rev-parse', `${rev}^{tree}`])));
// Hand-made trees: names git refuses, and a file "a" and a directory "a" set apart by "a-b".
const entry = (mode, name, k = 0x42) => {
  const oid = Buffer.alloc(20, k);
  if (mode === '40000') oid.fill(0).writeUInt8(k, 19);
  return Buffer.concat([Buffer.from(`${mode} ${name}\0`, 'latin1'), oid]);
};
save('tree', 'dotgit', Buffer.concat([entry('100644', '.GIT'), entry('100644', 'git~1')]));
save(
  'tree',
  'split-duplicate',
  Buffer.concat([
    entry('100644', 'a'),
    entry('100644', 'a-b'),
    entry('40000', 'a', 1),
    SEP,
    entry('100644', 'x'),
  ]),
);
save(
  'tree',
  'gitmodules-link',
  Buffer.concat([entry('120000', '.gitmodules'), entry('160000', 'm')]),
);

// Index files: version 2, 3 (intent-to-add, skip-worktree), 4, unmerged, a long path, sparse.
const indexFile = () => fs.readFileSync(path.join(gitDir, 'index'));
save('index_entries', 'v2', indexFile());
write('new.txt', 'new\n');
git(repo, ['add', '-N', 'new.txt']);
git(repo, ['update-index', '--skip-worktree', 'a.txt']);
save('index_entries', 'v3-extended', indexFile());
git(repo, ['update-index', '--index-version', '4']);
save('index_entries', 'v4', indexFile());
const blob = gitText(repo, ['rev-parse', 'HEAD:a.txt']);
const longPath = Array.from({ length: 22 }, (_, i) => `${'d'.repeat(200)}${i}`).join('/');
git(repo, ['update-index', '--add', '--cacheinfo', `100644,${blob},${longPath}`]);
save('index_entries', 'v4-long-path', indexFile());
git(repo, ['update-index', '--index-version', '2']);
save('index_entries', 'v2-long-path', indexFile());
git(repo, ['update-index', '--force-remove', longPath]);
git(
  repo,
  ['update-index', '--index-info'],
  [1, 2, 3].map((s) => `100644 ${blob} ${s}\tmany/f1.txt\n`).join(''),
);
save('index_entries', 'v2-unmerged', indexFile());
git(repo, ['reset', '-q', '--hard']);
git(repo, ['sparse-checkout', 'set', '--cone', '--sparse-index', 'dir']);
save('index_entries', 'v3-sparse', indexFile());

// Cache-trees: git's own after a checkout, one with directories marked not valid, and the
// index's paths after the separator (the first byte of a line picks stage and flags).
const treeExt = () => {
  const d = indexFile();
  const at = d.lastIndexOf('TREE');
  return d.subarray(at + 8, at + 8 + d.readUInt32BE(at + 4));
};
const indexPaths = () =>
  gitText(repo, ['ls-files', '-z'])
    .split('\0')
    .filter(Boolean)
    .map((p) => `0${p}`)
    .join('\n');
git(repo, ['sparse-checkout', 'disable']);
git(repo, ['update-index', '--index-version', '2']);
git(repo, ['read-tree', 'HEAD']);
save(
  'cache_tree',
  'valid',
  Buffer.concat([treeExt(), Buffer.from('\n--index--\n'), Buffer.from(indexPaths())]),
);
write('dir/staged.txt', 'staged\n');
git(repo, ['add', 'dir/staged.txt']);
save(
  'cache_tree',
  'invalidated',
  Buffer.concat([treeExt(), Buffer.from('\n--index--\n'), Buffer.from(indexPaths())]),
);
git(repo, ['reset', '-q', '--hard']);

// Paths for the rules: what git refuses and what it accepts.
const names = [
  '.git',
  '.GIT/config',
  'a/.git/b',
  'git~1',
  'GIT~1/x',
  '.git.',
  '.git ',
  '.git::$INDEX_ALLOCATION',
  '.gitmodules',
  'gitmod~1',
  '.g\u200cit',
  '.git\u200d',
  'a/./b',
  'a/../b',
  'a//b',
  '/a',
  'a/',
  'foo.',
  'foo ',
  'a:b',
  'con',
  '.gitattributes',
  'x\\.git',
  'dir/.GitModules',
  'plain/path.txt',
];
for (const n of names) save('path_rules', 'name', Buffer.from(n, 'utf8'));

fs.rmSync(work, { recursive: true, force: true });
for (const t of fs.readdirSync(out).sort())
  console.log(`  ${t}: ${fs.readdirSync(path.join(out, t)).length} seeds`);
