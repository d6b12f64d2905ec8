#!/usr/bin/env node
// Builds the benchmark corpora once and caches them.
//
//   node corpus.mjs [--corpus linux|small] [--force]
//
// A corpus is a bare repository `<cache>/<name>/source.git` whose HEAD (refs/heads/master) is the
// commit to check out, plus `<cache>/<name>/corpus.json` describing it. The cache directory is
// `/var/tmp/pcheckout-bench` unless PCHECKOUT_BENCH_CACHE says otherwise.
//
// Builds happen in `<name>.tmp/` under a lock file and are renamed into place only when complete,
// so an interrupted build is detected (stale lock or leftover .tmp) and restarted from scratch.
//
// History: the final tree is written first (from the real files), then older states are derived
// from it (subsystems removed, files edited deterministically) and committed in order, oldest
// first, so that the repack stores older versions as deltas of newer ones — like a real project.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

export const DEFAULT_CACHE = '/var/tmp/pcheckout-bench';
export const LINUX_TARBALL =
  process.env.PCHECKOUT_BENCH_LINUX_TARBALL || '/usr/src/linux-source-6.1.tar.xz';

export function cacheDir() {
  return path.resolve(process.env.PCHECKOUT_BENCH_CACHE || DEFAULT_CACHE);
}

// Fixed identity and dates: the same inputs always give the same commit ids.
const GIT_ENV = {
  GIT_AUTHOR_NAME: 'pcheckout bench',
  GIT_AUTHOR_EMAIL: 'bench@pcheckout.invalid',
  GIT_COMMITTER_NAME: 'pcheckout bench',
  GIT_COMMITTER_EMAIL: 'bench@pcheckout.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};
const BASE_DATE = 1670716800; // 2022-12-11, Linux 6.1 release day

// ---------------------------------------------------------------------------------------------
// Process helpers

export function run(cmd, args, opts = {}) {
  const { input, cwd, env, quiet = true, maxBuffer = 1 << 30 } = opts;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out = [];
    const err = [];
    let size = 0;
    child.stdout.on('data', (d) => {
      size += d.length;
      if (size <= maxBuffer) out.push(d);
    });
    child.stderr.on('data', (d) => {
      err.push(d);
      if (!quiet) process.stderr.write(d);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const stdout = Buffer.concat(out).toString();
      const stderr = Buffer.concat(err).toString();
      if (code === 0) resolve({ stdout, stderr });
      else {
        const e = new Error(
          `${cmd} ${args.join(' ')} failed (${signal || code}): ${stderr.trim().slice(-2000)}`,
        );
        e.stdout = stdout;
        e.stderr = stderr;
        reject(e);
      }
    });
    if (input !== undefined) {
      child.stdin.on('error', () => {}); // reported through the exit code instead
      child.stdin.end(input);
    }
  });
}

function git(gitDir, args, opts = {}) {
  return run('git', [`--git-dir=${gitDir}`, ...args], {
    ...opts,
    env: { ...GIT_ENV, ...opts.env },
  });
}

function log(msg) {
  process.stderr.write(`[corpus] ${msg}\n`);
}

// ---------------------------------------------------------------------------------------------
// Deterministic helpers

function hash32(...parts) {
  return createHash('sha1').update(parts.join('\0')).digest().readUInt32BE(0);
}

// xorshift32: cheap per-line randomness, seeded per file and revision.
function prng(seed) {
  let x = seed >>> 0 || 0x9e3779b9;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

function isBinary(buf) {
  return buf.subarray(0, 8000).includes(0);
}

// An "older" revision of a text file: a header line, ~2.5% of lines dropped, ~2.5% edited.
// Small edits keep the versions delta-friendly, as consecutive revisions of real code are.
function reviseText(buf, file, rev) {
  const rnd = prng(hash32('rev', rev, file));
  const lines = buf.toString('latin1').split('\n');
  const out = [`/* pcheckout-bench: ${file} revision ${rev} */`];
  for (const line of lines) {
    const r = rnd() % 40;
    if (r === 0) continue;
    out.push(r === 1 ? `${line} /* r${rev} */` : line);
  }
  return Buffer.from(out.join('\n'), 'latin1');
}

function writeLooseBlob(gitDir, content) {
  const header = Buffer.from(`blob ${content.length}\0`);
  const sha = createHash('sha1').update(header).update(content).digest('hex');
  const dir = path.join(gitDir, 'objects', sha.slice(0, 2));
  const file = path.join(dir, sha.slice(2));
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true });
    const data = zlib.deflateSync(Buffer.concat([header, content]), { level: 1 });
    fs.writeFileSync(file, data, { mode: 0o444 });
  }
  return sha;
}

// ---------------------------------------------------------------------------------------------
// Corpus definitions

const CORPORA = {
  linux: {
    description: `Linux 6.1 source (${LINUX_TARBALL}), 4 commits, the last one the full tree`,
    async prepareTree(tmp) {
      if (!fs.existsSync(LINUX_TARBALL)) {
        throw new Error(
          `${LINUX_TARBALL} not found: apt-get install linux-source-6.1 ` +
            '(or set PCHECKOUT_BENCH_LINUX_TARBALL)',
        );
      }
      log(`extracting ${LINUX_TARBALL} ...`);
      await run('tar', ['-xJf', LINUX_TARBALL, '-C', tmp, '--no-same-owner']);
      const [top] = await fsp.readdir(tmp);
      return path.join(tmp, top);
    },
    // Oldest first. Each state lists path prefixes left out and edits (files whose path hash
    // modulo `mod` equals `rem` get revision `rev`, if they start with one of `prefixes`).
    states: [
      {
        message: 'Linux 6.1 bench: early state (no Documentation/gpu/sound/tools, few arches)',
        remove: [
          'Documentation/',
          'drivers/gpu/',
          'sound/',
          'tools/',
          ...[
            'alpha',
            'arc',
            'arm',
            'csky',
            'hexagon',
            'ia64',
            'loongarch',
            'm68k',
            'microblaze',
            'mips',
            'nios2',
            'openrisc',
            'parisc',
            'powerpc',
            'riscv',
            's390',
            'sh',
            'sparc',
            'um',
            'xtensa',
          ].map((a) => `arch/${a}/`),
        ],
        edits: [
          {
            prefixes: ['fs/', 'kernel/', 'mm/', 'net/', 'include/', 'drivers/net/'],
            mod: 3,
            rem: 0,
            rev: 1,
          },
        ],
      },
      {
        message: 'Linux 6.1 bench: Documentation, sound and arches back; many edits',
        remove: ['drivers/gpu/drm/amd/', 'tools/', 'drivers/staging/'],
        edits: [
          { prefixes: ['fs/', 'kernel/', 'mm/', 'include/'], mod: 3, rem: 0, rev: 2 },
          { prefixes: ['drivers/'], mod: 5, rem: 0, rev: 2 },
          { prefixes: ['arch/'], mod: 4, rem: 1, rev: 2 },
          { prefixes: ['Documentation/'], mod: 6, rem: 0, rev: 2 },
        ],
      },
      {
        message: 'Linux 6.1 bench: nearly there (drivers/staging still out)',
        remove: ['drivers/staging/'],
        edits: [
          { prefixes: [''], mod: 7, rem: 3, rev: 3 },
          { prefixes: ['drivers/'], mod: 5, rem: 0, rev: 3 },
        ],
      },
      { message: 'Linux 6.1', remove: [], edits: [] },
    ],
  },
  small: {
    description: 'synthetic tree of ~5,000 files (text, a few executables and symlinks), 3 commits',
    async prepareTree(tmp) {
      const root = path.join(tmp, 'small');
      log('generating the synthetic tree ...');
      generateSmallTree(root);
      return root;
    },
    states: [
      {
        message: 'small: first state',
        remove: ['d07/', 'd13/'],
        edits: [{ prefixes: [''], mod: 3, rem: 0, rev: 1 }],
      },
      {
        message: 'small: second state',
        remove: ['d13/'],
        edits: [
          { prefixes: [''], mod: 3, rem: 0, rev: 2 },
          { prefixes: ['d0'], mod: 4, rem: 1, rev: 2 },
        ],
      },
      { message: 'small: final state', remove: [], edits: [] },
    ],
  },
};

const WORDS = (
  'static int void struct return if else for while unsigned long const char size_t buffer ' +
  'length index count result error lock unlock page inode file mutex spin list head next prev ' +
  'offset value flags node tree entry object commit blob pack delta base write read open close'
).split(' ');

// ~5,000 files in 20 top-level directories, 1-3 levels deep, sizes log-uniform 100 B .. 64 KiB.
function generateSmallTree(root) {
  const rnd = prng(0x5eed1234);
  const files = [];
  for (let i = 0; i < 5000; i++) {
    const top = `d${String(rnd() % 20).padStart(2, '0')}`;
    const depth = rnd() % 3;
    const parts = [top];
    for (let d = 0; d < depth; d++) parts.push(`s${rnd() % 6}`);
    const ext = ['c', 'h', 'txt', 'md', 'js'][rnd() % 5];
    parts.push(`f${i}.${ext}`);
    const rel = parts.join('/');
    const size = Math.floor(100 * Math.pow(2, ((rnd() % 1000) / 1000) * 9.4));
    const lines = [];
    let len = 0;
    while (len < size) {
      const n = 3 + (rnd() % 9);
      const ws = [];
      for (let k = 0; k < n; k++) ws.push(WORDS[rnd() % WORDS.length]);
      const line = '\t'.repeat(rnd() % 3) + ws.join(' ') + ';';
      lines.push(line);
      len += line.length + 1;
    }
    const abs = path.join(root, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, lines.join('\n') + '\n', { mode: rnd() % 50 === 0 ? 0o755 : 0o644 });
    files.push(rel);
  }
  // A few symlinks to files in the same directory, and an empty file.
  for (let i = 0; i < 20; i++) {
    const target = files[(i * 251) % files.length];
    const link = path.join(root, path.dirname(target), `link${i}`);
    if (!fs.existsSync(link)) fs.symlinkSync(path.basename(target), link);
  }
  fs.writeFileSync(path.join(root, 'd00', 'empty'), '');
}

// ---------------------------------------------------------------------------------------------
// Build

async function buildCorpus(name, def, finalDir) {
  const tmp = `${finalDir}.tmp`;
  await fsp.rm(tmp, { recursive: true, force: true });
  await fsp.mkdir(tmp, { recursive: true });
  const t0 = Date.now();
  const phases = {};
  const phase = (k, since) => (phases[k] = Math.round((Date.now() - since) / 100) / 10);

  let t = Date.now();
  await fsp.mkdir(path.join(tmp, 'tree'));
  const treeDir = await def.prepareTree(path.join(tmp, 'tree'));
  phase('prepareTreeSeconds', t);

  const gitDir = path.join(tmp, 'source.git');
  await git(gitDir, ['init', '--bare', '-q', '--initial-branch=master']);
  for (const [k, v] of [
    ['core.autocrlf', 'false'],
    ['pack.threads', '0'],
    ['gc.auto', '0'],
  ]) {
    await git(gitDir, ['config', k, v]);
  }

  // The final state: every file, ignored or not (-f: Linux's .gitignore hides most of it).
  t = Date.now();
  log('adding the full tree (git add -A -f) ...');
  const fullIndex = path.join(tmp, 'index.full');
  await git(gitDir, [`--work-tree=${treeDir}`, 'add', '-A', '-f', '.'], {
    cwd: treeDir,
    env: { GIT_INDEX_FILE: fullIndex },
  });
  const { stdout: ls } = await git(gitDir, ['ls-files', '-s', '-z'], {
    env: { GIT_INDEX_FILE: fullIndex },
  });
  const entries = ls
    .split('\0')
    .filter(Boolean)
    .map((rec) => {
      const tab = rec.indexOf('\t');
      const [mode, sha] = rec.slice(0, tab).split(' ');
      return { mode, sha, path: rec.slice(tab + 1) };
    });
  phase('addSeconds', t);
  log(`${entries.length} entries in the final tree`);

  // Trees for every state, then the commits in order.
  t = Date.now();
  const trees = [];
  for (const [i, state] of def.states.entries()) {
    let edited = 0;
    const lines = [];
    for (const e of entries) {
      if (state.remove.some((p) => e.path.startsWith(p))) continue;
      let sha = e.sha;
      if (e.mode === '100644' || e.mode === '100755') {
        for (const ed of state.edits) {
          if (!ed.prefixes.some((p) => e.path.startsWith(p))) continue;
          if (hash32('pick', ed.rev, e.path) % ed.mod !== ed.rem) continue;
          const buf = fs.readFileSync(path.join(treeDir, e.path));
          if (isBinary(buf)) break;
          sha = writeLooseBlob(gitDir, reviseText(buf, e.path, ed.rev));
          edited++;
          break;
        }
      }
      lines.push(`${e.mode} ${sha}\t${e.path}`);
    }
    const idx = path.join(tmp, `index.${i}`);
    await git(gitDir, ['update-index', '--index-info'], {
      input: lines.join('\n') + '\n',
      env: { GIT_INDEX_FILE: idx },
    });
    const { stdout: tree } = await git(gitDir, ['write-tree'], { env: { GIT_INDEX_FILE: idx } });
    trees.push({ tree: tree.trim(), entries: lines.length, edited, message: state.message });
    log(`state ${i + 1}/${def.states.length}: ${lines.length} entries, ${edited} edited`);
  }
  let parent = null;
  for (const [i, st] of trees.entries()) {
    const date = `${BASE_DATE + i * 86400} +0000`;
    const { stdout } = await git(
      gitDir,
      ['commit-tree', st.tree, ...(parent ? ['-p', parent] : []), '-m', st.message],
      { env: { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } },
    );
    parent = stdout.trim();
    st.commit = parent;
  }
  await git(gitDir, ['update-ref', 'refs/heads/master', parent]);
  phase('historySeconds', t);

  // One pack with fresh deltas. --aggressive (window 250) takes far too long on 2 cores.
  t = Date.now();
  log('repacking (git repack -adf --depth=50 --window=10) ...');
  await git(gitDir, ['repack', '-a', '-d', '-f', '-q', '--depth=50', '--window=10']);
  await git(gitDir, ['prune', '--expire=now']);
  await git(gitDir, ['pack-refs', '--all']);
  phase('repackSeconds', t);

  // Sanity: the final tree equals the files we started from.
  const { stdout: headTree } = await git(gitDir, ['rev-parse', 'HEAD^{tree}']);
  if (headTree.trim() !== trees.at(-1).tree) throw new Error('HEAD tree mismatch');

  const stats = await packStats(gitDir);
  const info = {
    name,
    description: def.description,
    createdAt: new Date().toISOString(),
    gitVersion: (await run('git', ['--version'])).stdout.trim(),
    head: parent,
    headTree: headTree.trim(),
    entries: trees.at(-1).entries,
    commits: trees.map(({ commit, tree, entries: n, edited, message }) => ({
      commit,
      tree,
      entries: n,
      edited,
      message,
    })),
    ...stats,
    buildSeconds: Math.round((Date.now() - t0) / 100) / 10,
    phases,
  };
  await fsp.rm(path.join(tmp, 'tree'), { recursive: true, force: true });
  for (const f of await fsp.readdir(tmp)) {
    if (f.startsWith('index.')) await fsp.rm(path.join(tmp, f));
  }
  fs.writeFileSync(path.join(tmp, 'corpus.json'), JSON.stringify(info, null, 2) + '\n');
  await fsp.rm(finalDir, { recursive: true, force: true });
  await fsp.rename(tmp, finalDir);
  return info;
}

async function packStats(gitDir) {
  const { stdout: co } = await git(gitDir, ['count-objects', '-v']);
  const kv = Object.fromEntries(
    co
      .trim()
      .split('\n')
      .map((l) => l.split(': '))
      .map(([k, v]) => [k, Number(v)]),
  );
  const { stdout } = await git(gitDir, [
    'cat-file',
    '--batch-all-objects',
    '--batch-check=%(objectname) %(objecttype) %(deltabase)',
  ]);
  const types = {};
  const base = new Map();
  for (const line of stdout.split('\n')) {
    if (!line) continue;
    const [sha, type, db] = line.split(' ');
    types[type] = (types[type] || 0) + 1;
    if (!/^0+$/.test(db)) base.set(sha, db);
  }
  const depthOf = new Map();
  const depth = (sha) => {
    let d = 0;
    const chain = [];
    let cur = sha;
    while (base.has(cur) && !depthOf.has(cur)) {
      chain.push(cur);
      cur = base.get(cur);
    }
    d = depthOf.get(cur) || 0;
    for (let i = chain.length - 1; i >= 0; i--) depthOf.set(chain[i], ++d);
    return depthOf.get(sha) || 0;
  };
  const hist = {};
  let maxDepth = 0;
  let sum = 0;
  for (const sha of base.keys()) {
    const d = depth(sha);
    hist[d] = (hist[d] || 0) + 1;
    maxDepth = Math.max(maxDepth, d);
    sum += d;
  }
  // What a checkout of HEAD meets: how many of its blobs are stored as deltas, and how deep.
  const { stdout: lsTree } = await git(gitDir, ['ls-tree', '-r', '-z', 'HEAD']);
  const headBlobs = new Set();
  for (const rec of lsTree.split('\0')) {
    const [, type, sha] = rec.slice(0, rec.indexOf('\t')).split(' ');
    if (type === 'blob') headBlobs.add(sha);
  }
  const headHist = {};
  let headDeltas = 0;
  for (const sha of headBlobs) {
    const d = depth(sha);
    if (!d) continue;
    headDeltas++;
    headHist[d] = (headHist[d] || 0) + 1;
  }
  const packs = fs
    .readdirSync(path.join(gitDir, 'objects', 'pack'))
    .filter((f) => /\.pack$/.test(f));
  return {
    objects: { total: kv['in-pack'], ...types },
    packs: packs.length,
    packSizeBytes: kv['size-pack'] * 1024,
    looseObjects: kv.count,
    deltas: base.size,
    deltaDepth: { max: maxDepth, mean: base.size ? +(sum / base.size).toFixed(2) : 0, hist },
    headBlobs: { unique: headBlobs.size, deltas: headDeltas, deltaDepthHist: headHist },
  };
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/** Returns { dir, repo, info } for the named corpus, building it first if needed. */
export async function ensureCorpus(name = 'linux', { force = false } = {}) {
  const def = CORPORA[name];
  if (!def) throw new Error(`unknown corpus ${name}; expected one of ${Object.keys(CORPORA)}`);
  const root = cacheDir();
  const dir = path.join(root, name);
  const marker = path.join(dir, 'corpus.json');
  const result = () => ({
    dir,
    repo: path.join(dir, 'source.git'),
    info: JSON.parse(fs.readFileSync(marker, 'utf8')),
  });
  if (!force && fs.existsSync(marker)) return result();

  fs.mkdirSync(root, { recursive: true });
  const lock = path.join(root, `${name}.lock`);
  let fd;
  try {
    fd = fs.openSync(lock, 'wx');
  } catch (e) {
    if (e.code !== 'EEXIST') throw e;
    const pid = Number(fs.readFileSync(lock, 'utf8'));
    if (pid && pidAlive(pid)) {
      throw new Error(`corpus ${name} is being built by pid ${pid} (lock ${lock}); wait for it`);
    }
    log(`removing stale lock of pid ${pid} (interrupted build); starting over`);
    fs.rmSync(lock, { force: true });
    fd = fs.openSync(lock, 'wx');
  }
  fs.writeSync(fd, String(process.pid));
  fs.closeSync(fd);
  try {
    log(`building corpus "${name}" in ${dir} — ${def.description}`);
    const info = await buildCorpus(name, def, dir);
    log(
      `done in ${info.buildSeconds} s: ${info.entries} files, ${info.objects.total} objects ` +
        `(${info.deltas} deltas, max depth ${info.deltaDepth.max}), ` +
        `pack ${(info.packSizeBytes / 2 ** 20).toFixed(1)} MiB`,
    );
    return result();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

export const corpusNames = Object.keys(CORPORA);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const i = args.indexOf('--corpus');
  const name = i >= 0 ? args[i + 1] : 'linux';
  ensureCorpus(name, { force: args.includes('--force') }).then(
    ({ repo, info }) => {
      console.log(JSON.stringify({ repo, ...info }, null, 2));
    },
    (e) => {
      console.error(`corpus: ${e.message}`);
      process.exit(1);
    },
  );
}
