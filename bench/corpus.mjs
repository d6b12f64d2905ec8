#!/usr/bin/env node
// Builds the benchmark corpora once and caches them.
//
//   node corpus.mjs [--corpus linux|small|tiny|small1k|midsize|history] [--force]
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

export function hash32(...parts) {
  return createHash('sha1').update(parts.join('\0')).digest().readUInt32BE(0);
}

// xorshift32: cheap per-line randomness, seeded per file and revision.
export function prng(seed) {
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
  tiny: {
    description: "engine.mjs's 10-file tree (text files of 1-12 KB), one commit",
    generate: (w) => engineTreeImport(w, 10),
    pack: ['repack', '-a', '-d', '-f', '-q'],
  },
  small1k: {
    description:
      "engine.mjs's 1,000-file tree (text files of 1-12 KB in 7 x 20 directories), one commit",
    generate: (w) => engineTreeImport(w, 1000),
    pack: ['repack', '-a', '-d', '-f', '-q'],
  },
  midsize: {
    description:
      'synthetic mid-size project: ~4,700 files, ~60 MB (text; a few binaries, symlinks, exec ' +
      'bits), 2,201 commits of small edits with adds, deletes and renames',
    generate: (w) => synthHistory(w, MIDSIZE),
    pack: ['repack', '-a', '-d', '-f', '-q'], // git's defaults: window 10, depth 50
  },
  history: {
    description:
      'synthetic history-heavy project: ~2,800 files, 4,001 commits, a few hot files edited ' +
      'hundreds of times; gc --aggressive with depth 250 (deep delta chains)',
    generate: (w) => synthHistory(w, HISTORY),
    // git 2.39's gc --aggressive uses depth 50 (gc.aggressiveDepth); 250 as before git 2.18.
    pack: ['-c', 'gc.aggressiveDepth=250', 'gc', '--aggressive', '--prune=now', '-q'],
  },
};

// The synthetic histories' parameters (see synthHistory). Changing any changes the commit ids.
const MIDSIZE = {
  name: 'midsize',
  seed: 0x6d1d5123,
  initialFiles: 3800,
  sizeLo: 150, // text files 150 B .. 77 KB, about log-uniform (mean ~12.8 KB)
  sizeOctaves: 9,
  binaries: 15, // 16 KB .. 512 KB
  binLo: 16384,
  symlinks: 9,
  commits: 2200,
  editsMax: 8,
  hot: 2, // edit picks skewed as u^2: the top 1% of files get 10% of the edits
  addProb: 0.25,
  addMax: 3,
  deleteProb: 0.1,
  renameProb: 0.02,
  binaryEvery: 150,
  dateStep: 14400,
};
const HISTORY = {
  name: 'history',
  seed: 0x415707e5,
  initialFiles: 2300,
  sizeLo: 100, // 100 B .. 25.6 KB (mean ~4.8 KB)
  sizeOctaves: 8,
  binaries: 3,
  binLo: 8192,
  symlinks: 4,
  commits: 4000,
  editsMax: 5,
  hot: 3, // u^3: the top 1% of files get 22% of the edits, the hottest one ~7%
  addProb: 0.1,
  addMax: 2,
  deleteProb: 0.03,
  renameProb: 0.01,
  binaryEvery: 500,
  dateStep: 7200,
};

export const WORDS = (
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
// Synthetic histories: a git fast-import stream generated here (one process for thousands of
// commits instead of a `git commit` each)

const AUTHOR = `${GIT_ENV.GIT_AUTHOR_NAME} <${GIT_ENV.GIT_AUTHOR_EMAIL}>`;
const SYNTH_START = 1577836800; // 2020-01-01: the first synthetic commit's date

/** A double in [0, 1). */
const unit = (rnd) => rnd() / 4294967296;

/**
 * A size in [lo, lo * 2^octaves): a whole octave picked uniformly, then uniform within it, so
 * sizes are about log-uniform (integer arithmetic and one product: the same on every machine).
 */
export function octaveSize(rnd, lo, octaves) {
  const base = lo * 2 ** (rnd() % octaves);
  return Math.floor(base * (1 + unit(rnd)));
}

const CODE_EXTS = ['c', 'h', 'js', 'ts', 'py', 'rs', 'go'];
const TOPS = {
  src: CODE_EXTS,
  lib: CODE_EXTS,
  include: ['h'],
  tests: ['c', 'js', 'py', 'txt'],
  docs: ['md', 'txt', 'rst'],
  tools: ['py', 'sh', 'js'],
  scripts: ['sh', 'py'],
  examples: CODE_EXTS,
  config: ['json', 'yml', 'toml'],
  third_party: ['c', 'h', 'txt'],
};
const PROSE = new Set(['md', 'txt', 'rst']);

function textLine(rnd, prose) {
  const n = 2 + (rnd() % 10);
  let s = prose ? '' : '\t'.repeat(rnd() % 4);
  for (let k = 0; k < n; k++) {
    if (k) s += ' ';
    s += WORDS[rnd() % WORDS.length];
    if (rnd() % 8 === 0) s += rnd() % 100;
  }
  return s + (prose ? '.' : rnd() % 5 === 0 ? ' {' : ';');
}

function textLines(rnd, bytes, prose) {
  const lines = [];
  for (let len = 0; len < bytes;) {
    const line = textLine(rnd, prose);
    lines.push(line);
    len += line.length + 1;
  }
  return lines;
}

/** Random bytes with a PNG-like header (NULs in the first 8000 bytes: git calls it binary). */
function binaryBlob(rnd, size) {
  const buf = Buffer.alloc(size);
  for (let i = 0; i + 4 <= size; i += 4) buf.writeUInt32LE(rnd(), i);
  Buffer.from('\x89PNG\r\n\x1a\n\0\0\0\rIHDR', 'latin1').copy(buf, 0);
  return buf;
}

/**
 * One revision of a text file, in place: 1-3 hunks, each replacing, inserting or deleting a few
 * lines (now and then a block of 10-40 new lines). Files above `cap` lines only shrink.
 */
function editLines(rnd, f) {
  const hunks = 1 + (rnd() % 3);
  for (let h = 0; h < hunks; h++) {
    const pos = rnd() % (f.lines.length + 1);
    let op = rnd() % 10;
    if (f.lines.length > f.cap && op >= 4) op = 7;
    const fresh = (n) => Array.from({ length: n }, () => textLine(rnd, f.prose));
    if (op < 4) f.lines.splice(pos, 1 + (rnd() % 3), ...fresh(1 + (rnd() % 3)));
    else if (op < 7) f.lines.splice(pos, 0, ...fresh(1 + (rnd() % 8)));
    else if (op < 9) f.lines.splice(pos, 1 + (rnd() % 8));
    else f.lines.splice(pos, 0, ...fresh(10 + (rnd() % 31)));
  }
  if (!f.lines.length) f.lines.push(textLine(rnd, f.prose));
}

/** Buffers fast-import's input and waits for the pipe when it is full. */
export async function fastImport(gitDir, produce) {
  const child = spawn('git', [`--git-dir=${gitDir}`, 'fast-import', '--quiet', '--done'], {
    env: { ...process.env, ...GIT_ENV },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const err = [];
  child.stderr.on('data', (d) => err.push(d));
  child.stdin.on('error', () => {}); // reported through the exit code instead
  const closed = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) =>
      code === 0
        ? resolve()
        : reject(
            new Error(
              `git fast-import failed (${signal || code}): ` +
                Buffer.concat(err).toString().trim().slice(-2000),
            ),
          ),
    );
  });
  let chunks = [];
  let size = 0;
  let dead = false;
  closed.catch(() => (dead = true));
  const flush = async () => {
    if (!size) return;
    const buf = Buffer.concat(chunks);
    chunks = [];
    size = 0;
    if (dead) throw new Error('git fast-import exited early');
    if (!child.stdin.write(buf)) {
      await Promise.race([new Promise((r) => child.stdin.once('drain', r)), closed]);
    }
  };
  const w = {
    async write(x) {
      const b = typeof x === 'string' ? Buffer.from(x, 'latin1') : x;
      chunks.push(b);
      size += b.length;
      if (size >= 1 << 20) await flush();
    },
  };
  try {
    await produce(w);
    await w.write('done\n');
    await flush();
  } finally {
    child.stdin.end();
  }
  await closed;
}

/** Writes one commit on refs/heads/master (the branch's tip is its parent) to the stream. */
async function emitCommit(w, seconds, message, ops) {
  const when = `${seconds} +0000`;
  await w.write(
    `commit refs/heads/master\nauthor ${AUTHOR} ${when}\ncommitter ${AUTHOR} ${when}\n` +
      `data ${message.length}\n${message}\n`,
  );
  for (const op of ops) {
    if (op.delete) {
      await w.write(`D ${op.path}\n`);
      continue;
    }
    const data = typeof op.data === 'string' ? Buffer.from(op.data, 'latin1') : op.data;
    await w.write(`M ${op.mode} inline ${op.path}\ndata ${data.length}\n`);
    await w.write(data);
    await w.write('\n');
  }
  await w.write('\n');
}

/**
 * A project's history: an initial import of `p.initialFiles` text files (plus binaries, symlinks,
 * an empty file), then `p.commits` commits that each edit a handful of files — picked with a
 * skew (index = n * u^p.hot over a fixed random order), so a few files get most of the edits and
 * their delta chains grow as in real code — and now and then add, delete or rename files.
 */
async function synthHistory(w, p) {
  const rnd = prng(p.seed);
  const files = new Map(); // path -> { mode, kind: text|bin|link, lines?, buf?, prose?, cap? }
  const order = []; // text files, hottest first
  const bins = [];
  const dirs = Object.keys(TOPS);
  const st = { edits: 0, adds: 0, deletes: 0, renames: 0, binaryEdits: 0, blobsWritten: 0 };

  const topOf = (dir) => dir.split('/')[0];
  const newDir = () => {
    let parent = dirs[rnd() % dirs.length];
    if (parent.split('/').length >= 5) parent = topOf(parent);
    const dir = `${parent}/${WORDS[rnd() % WORDS.length]}${rnd() % 10 ? '' : rnd() % 10}`;
    if (!dirs.includes(dir)) dirs.push(dir);
    return dir;
  };
  const newPath = () => {
    for (;;) {
      const dir = rnd() % 10 === 0 ? newDir() : dirs[rnd() % dirs.length];
      const exts = TOPS[topOf(dir)];
      const ext = exts[rnd() % exts.length];
      const base = `${WORDS[rnd() % WORDS.length]}_${WORDS[rnd() % WORDS.length]}${rnd() % 100}`;
      const file = `${dir}/${base}.${ext}`;
      if (!files.has(file)) return { file, ext };
    }
  };
  const newText = () => {
    const { file, ext } = newPath();
    const prose = PROSE.has(ext);
    const lines = textLines(rnd, octaveSize(rnd, p.sizeLo, p.sizeOctaves), prose);
    const exec = ext === 'sh' || ext === 'py' ? rnd() % 3 === 0 : rnd() % 100 === 0;
    const f = { mode: exec ? '100755' : '100644', kind: 'text', lines, prose };
    f.cap = 2 * lines.length + 20;
    files.set(file, f);
    return file;
  };
  const textOp = (file) => {
    st.blobsWritten++;
    const f = files.get(file);
    f.revs = (f.revs || 0) + 1;
    return { path: file, mode: f.mode, data: f.lines.join('\n') + '\n' };
  };

  // The initial import.
  const ops = [];
  for (let i = 0; i < p.initialFiles; i++) {
    const file = newText();
    order.push(file);
    ops.push(textOp(file));
  }
  for (let i = 0; i < p.binaries; i++) {
    const sub = ['img', 'fonts', 'data'][i % 3];
    const file = `assets/${sub}/${WORDS[rnd() % WORDS.length]}${i}.${['png', 'ttf', 'bin'][i % 3]}`;
    const f = { mode: '100644', kind: 'bin', buf: binaryBlob(rnd, octaveSize(rnd, p.binLo, 5)) };
    files.set(file, f);
    bins.push(file);
    ops.push({ path: file, mode: f.mode, data: f.buf });
    st.blobsWritten++;
  }
  for (let i = 0; i < p.symlinks; i++) {
    const target = order[rnd() % order.length];
    const link = `${path.posix.dirname(target)}/link_${i}`;
    files.set(link, { mode: '120000', kind: 'link' });
    ops.push({ path: link, mode: '120000', data: path.posix.basename(target) });
  }
  files.set('latest', { mode: '120000', kind: 'link' });
  ops.push({ path: 'latest', mode: '120000', data: 'src' });
  files.set('config/empty.cfg', { mode: '100644', kind: 'text', lines: [], cap: 0 });
  ops.push({ path: 'config/empty.cfg', mode: '100644', data: '' });
  let seconds = SYNTH_START;
  await emitCommit(w, seconds, `${p.name}: initial import\n`, ops);

  for (let c = 1; c <= p.commits; c++) {
    seconds += p.dateStep / 2 + (rnd() % p.dateStep);
    const changed = new Map(); // path -> op, so a path is written once per commit
    const what = [];
    // Edits: 1 .. editsMax files, mostly few.
    const u = unit(rnd);
    const n = 1 + Math.floor(p.editsMax * u * u);
    for (let k = 0; k < n; k++) {
      const v = unit(rnd);
      let skew = 1;
      for (let e = 0; e < p.hot; e++) skew *= v; // v^hot, by plain products
      const file = order[Math.floor(order.length * skew)];
      if (changed.has(file)) continue;
      editLines(rnd, files.get(file));
      changed.set(file, textOp(file));
      st.edits++;
    }
    what.push(`edit ${changed.size}`);
    if (unit(rnd) < p.addProb) {
      const m = 1 + (rnd() % p.addMax);
      for (let k = 0; k < m; k++) {
        const file = newText();
        order.splice(rnd() % (order.length + 1), 0, file);
        changed.set(file, textOp(file));
        st.adds++;
      }
      what.push(`add ${m}`);
    }
    if (unit(rnd) < p.deleteProb && order.length > p.initialFiles / 2) {
      const i = rnd() % order.length;
      const [file] = order.splice(i, 1);
      files.delete(file);
      changed.set(file, { path: file, delete: true });
      st.deletes++;
      what.push('delete 1');
    }
    if (unit(rnd) < p.renameProb) {
      const i = rnd() % order.length;
      const from = order[i];
      if (!changed.has(from)) {
        const f = files.get(from);
        const { file: to } = newPath();
        files.delete(from);
        files.set(to, f);
        order[i] = to;
        changed.set(from, { path: from, delete: true });
        changed.set(to, textOp(to));
        st.renames++;
        what.push('rename 1');
      }
    }
    if (bins.length && c % p.binaryEvery === 0) {
      // A binary asset changes: a patched region now and then, otherwise a new file.
      const file = bins[rnd() % bins.length];
      const f = files.get(file);
      if (rnd() % 3) {
        const patch = binaryBlob(rnd, Math.min(f.buf.length, 1024 + (rnd() % 8192)));
        f.buf = Buffer.from(f.buf);
        patch.copy(f.buf, 16 + (rnd() % Math.max(1, f.buf.length - patch.length - 16)), 16);
      } else f.buf = binaryBlob(rnd, octaveSize(rnd, p.binLo, 5));
      changed.set(file, { path: file, mode: f.mode, data: f.buf });
      st.binaryEdits++;
      st.blobsWritten++;
      what.push('binary 1');
    }
    const first = [...changed.keys()][0];
    await emitCommit(
      w,
      seconds,
      `${topOf(first)}: change ${c} (${what.join(', ')})\n\nTouches ${[...changed.keys()]
        .slice(0, 4)
        .join(', ')}.\n`,
      [...changed.values()],
    );
  }
  let bytes = 0;
  for (const f of files.values()) {
    if (f.kind === 'text') bytes += f.lines.length ? f.lines.join('\n').length + 1 : 0;
    else if (f.kind === 'bin') bytes += f.buf.length;
  }
  const revs = order.map((file) => files.get(file).revs).sort((a, b) => b - a);
  return {
    ...st,
    commits: p.commits + 1,
    files: files.size,
    textFiles: order.length + 1,
    binaries: bins.length,
    symlinks: p.symlinks + 1,
    treeBytes: bytes,
    revisionsPerTextFile: {
      max: revs[0],
      p99: revs[Math.floor(revs.length / 100)],
      median: revs[revs.length >> 1],
    },
  };
}

/** The trees of engine.mjs: n files of 1-12 KB in d<i%7>/e<i/50>/f<i>.txt, one commit. */
export function engineTreeFiles(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const size = 1024 + ((i * 2654435761) % 11264);
    out.push({
      path: `d${i % 7}/e${Math.floor(i / 50)}/f${i}.txt`,
      data: `${i} `.repeat(size).slice(0, size),
    });
  }
  return out;
}

async function engineTreeImport(w, n) {
  const ops = engineTreeFiles(n).map((f) => ({ ...f, mode: '100644' }));
  await emitCommit(w, BASE_DATE, `${n} files\n`, ops);
  return { commits: 1, files: n, treeBytes: ops.reduce((s, f) => s + f.data.length, 0) };
}

// ---------------------------------------------------------------------------------------------
// Build

// Default: one pack with fresh deltas. --aggressive (window 250) takes far too long on 2 cores for
// the Linux corpus.
const REPACK = ['repack', '-a', '-d', '-f', '-q', '--depth=50', '--window=10'];

async function buildCorpus(name, def, finalDir) {
  const tmp = `${finalDir}.tmp`;
  await fsp.rm(tmp, { recursive: true, force: true });
  await fsp.mkdir(tmp, { recursive: true });
  const t0 = Date.now();
  const phases = {};
  const phase = (k, since) => (phases[k] = Math.round((Date.now() - since) / 100) / 10);
  const gitDir = path.join(tmp, 'source.git');
  const init = async () => {
    await git(gitDir, ['init', '--bare', '-q', '--initial-branch=master']);
    for (const [k, v] of [
      ['core.autocrlf', 'false'],
      ['pack.threads', '0'],
      ['gc.auto', '0'],
    ]) {
      await git(gitDir, ['config', k, v]);
    }
  };

  let built;
  if (def.generate) {
    await init();
    const t = Date.now();
    log('generating the history (git fast-import) ...');
    let history;
    await fastImport(gitDir, async (w) => (history = await def.generate(w)));
    phase('fastImportSeconds', t);
    const { stdout: head } = await git(gitDir, ['rev-parse', 'refs/heads/master']);
    built = { head: head.trim(), history };
  } else {
    built = await buildFromTree(def, tmp, gitDir, init, phase);
  }

  let t = Date.now();
  const pack = def.pack || REPACK;
  const packCommand = `git ${pack.filter((a) => a !== '-q').join(' ')}`;
  log(`packing (${packCommand}) ...`);
  await git(gitDir, pack);
  await git(gitDir, ['prune', '--expire=now']);
  await git(gitDir, ['pack-refs', '--all']);
  phase('repackSeconds', t);

  const { stdout: headTree } = await git(gitDir, ['rev-parse', 'HEAD^{tree}']);
  // Sanity: the final tree equals the files we started from.
  if (built.tree && headTree.trim() !== built.tree) throw new Error('HEAD tree mismatch');
  const { stdout: ls } = await git(gitDir, ['ls-tree', '-r', '-z', '--name-only', 'HEAD']);
  const { stdout: count } = await git(gitDir, ['rev-list', '--count', 'HEAD']);

  const stats = await packStats(gitDir);
  const info = {
    name,
    description: def.description,
    createdAt: new Date().toISOString(),
    gitVersion: (await run('git', ['--version'])).stdout.trim(),
    head: built.head,
    headTree: headTree.trim(),
    entries: ls.split('\0').filter(Boolean).length,
    commitCount: Number(count),
    ...(built.commits ? { commits: built.commits } : {}),
    ...(built.history ? { history: built.history } : {}),
    packCommand,
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

/** linux, small: the final tree from real files, older states derived from it (see the top). */
async function buildFromTree(def, tmp, gitDir, init, phase) {
  let t = Date.now();
  await fsp.mkdir(path.join(tmp, 'tree'));
  const treeDir = await def.prepareTree(path.join(tmp, 'tree'));
  phase('prepareTreeSeconds', t);
  await init();

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

  return {
    head: parent,
    tree: trees.at(-1).tree,
    commits: trees.map(({ commit, tree, entries: n, edited, message }) => ({
      commit,
      tree,
      entries: n,
      edited,
      message,
    })),
  };
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
  const { stdout: lsTree } = await git(gitDir, ['ls-tree', '-r', '-t', '-z', 'HEAD']);
  const headBlobs = new Set();
  const headTrees = new Set([(await git(gitDir, ['rev-parse', 'HEAD^{tree}'])).stdout.trim()]);
  for (const rec of lsTree.split('\0')) {
    const [, type, sha] = rec.slice(0, rec.indexOf('\t')).split(' ');
    if (type === 'blob') headBlobs.add(sha);
    else if (type === 'tree') headTrees.add(sha);
  }
  let headTreeDeltas = 0;
  let headTreeMax = 0;
  for (const sha of headTrees) {
    const d = depth(sha);
    if (d) headTreeDeltas++;
    headTreeMax = Math.max(headTreeMax, d);
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
    headTrees: { unique: headTrees.size, deltas: headTreeDeltas, maxDepth: headTreeMax },
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
