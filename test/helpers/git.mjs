// Fixture builders that drive the real system `git`.
//
// Every git command runs with an isolated environment (no system config, HOME in a temp dir,
// fixed author/committer, no GIT_* variables inherited), and this module also points the test
// process's own HOME/XDG_CONFIG_HOME there, so the engine reads the same (empty) global config.
// Everything lives under one temp root, removed when the process exits
// (set PCHECKOUT_KEEP_TMP=1 to keep it for debugging).
//
// Note: `node --test test/` also runs this file as a "test"; importing it must stay cheap and
// harmless (it only creates and later removes an empty temp root).

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'pcheckout-test-'));
const HOME = path.join(ROOT, 'home');
fs.mkdirSync(path.join(HOME, '.config'), { recursive: true });

process.on('exit', () => {
  if (process.env.PCHECKOUT_KEEP_TMP) {
    process.stderr.write(`pcheckout tests: kept ${ROOT}\n`);
    return;
  }
  fs.rmSync(ROOT, { recursive: true, force: true });
});

/** Environment for every child git/node process. */
export const gitEnv = (() => {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('GIT_')) env[k] = v;
  }
  Object.assign(env, {
    HOME,
    XDG_CONFIG_HOME: path.join(HOME, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Test Author',
    GIT_AUTHOR_EMAIL: 'author@example.com',
    GIT_COMMITTER_NAME: 'Test Committer',
    GIT_COMMITTER_EMAIL: 'committer@example.com',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
    TZ: 'UTC',
  });
  return env;
})();

// The engine runs in this process: make it see the same isolated configuration as git does.
for (const k of Object.keys(process.env)) {
  if (k.startsWith('GIT_')) delete process.env[k];
}
process.env.HOME = gitEnv.HOME;
process.env.XDG_CONFIG_HOME = gitEnv.XDG_CONFIG_HOME;
process.env.GIT_CONFIG_NOSYSTEM = '1';

let dirCounter = 0;
/** A new empty directory under the temp root. */
export function tmpDir(prefix = 'd') {
  const dir = path.join(ROOT, `${prefix}-${++dirCounter}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** A path under the temp root that does not exist yet. */
export function tmpPath(prefix = 'p') {
  return path.join(ROOT, `${prefix}-${++dirCounter}`);
}

let commitClock = 1_700_000_000;
function dateEnv() {
  commitClock += 60;
  const d = `@${commitClock} +0000`;
  return { GIT_AUTHOR_DATE: d, GIT_COMMITTER_DATE: d };
}

/**
 * Run git in `cwd`; return stdout as a string (or Buffer with { encoding: 'buffer' }).
 * Throws with stderr on a non-zero exit.
 */
export function git(cwd, args, { input, encoding = 'utf8', env } = {}) {
  try {
    return execFileSync('git', args, {
      cwd,
      input,
      encoding,
      env: { ...gitEnv, ...dateEnv(), ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 1 << 30,
    });
  } catch (err) {
    const stderr = err.stderr ? err.stderr.toString() : '';
    throw new Error(`git ${args.join(' ')} (in ${cwd}) failed: ${stderr || err.message}`);
  }
}

/** Run git and return its trimmed stdout. */
export function gitOut(cwd, ...args) {
  return git(cwd, args).trim();
}

/** Run git without throwing: { status, stdout, stderr }. */
export function gitTry(cwd, args, { encoding = 'utf8', env } = {}) {
  const r = spawnSync('git', args, {
    cwd,
    encoding,
    env: { ...gitEnv, ...dateEnv(), ...env },
    maxBuffer: 1 << 30,
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// ---------------------------------------------------------------------------------------------
// Deterministic content

/** mulberry32: a small seeded PRNG returning floats in [0, 1). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho ' +
  'sigma tau upsilon phi chi psi omega tree blob commit index worker pool inflate deflate pack ' +
  'offset delta base chain object file directory symlink gitlink checkout branch tag ref head'
).split(' ');

/** `n` lines of pseudo-random words (text that deflates and deltas like source code). */
export function textLines(rand, n) {
  const lines = [];
  for (let i = 0; i < n; i++) {
    const k = 4 + Math.floor(rand() * 9);
    const words = [];
    for (let j = 0; j < k; j++) words.push(WORDS[Math.floor(rand() * WORDS.length)]);
    lines.push(`${i}: ${words.join(' ')}`);
  }
  return lines;
}

/**
 * A new version of `lines`: `changes` lines rewritten, then `drop` lines removed (so versions
 * shrink over time and git's size-ordered delta search stores the newest versions as deltas).
 */
export function editLines(lines, rand, { changes = 5, drop = 0, add = 0 } = {}) {
  const out = lines.slice();
  for (let i = 0; i < changes; i++) {
    const at = Math.floor(rand() * out.length);
    out[at] = `${out[at]} edited-${Math.floor(rand() * 1e6)}`;
  }
  for (let i = 0; i < drop && out.length > 1; i++) {
    out.splice(Math.floor(rand() * out.length), 1);
  }
  for (let i = 0; i < add; i++) {
    out.splice(Math.floor(rand() * out.length), 0, `added line ${Math.floor(rand() * 1e9)}`);
  }
  return out;
}

/** Incompressible bytes from a seeded xorshift128 generator (fast: ~100 MB in well under 1 s). */
export function randomBytes(size, seed) {
  const buf = Buffer.alloc(size);
  const words = new Uint32Array(buf.buffer, buf.byteOffset, Math.floor(size / 4));
  let x = seed >>> 0 || 1;
  let y = 362436069;
  let z = 521288629;
  let w = 88675123;
  for (let i = 0; i < words.length; i++) {
    const t = x ^ (x << 11);
    x = y;
    y = z;
    z = w;
    w = (w ^ (w >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
    words[i] = w;
  }
  for (let i = words.length * 4; i < size; i++) buf[i] = (i * 131 + seed) & 0xff;
  return buf;
}

/** Write `size` incompressible bytes to `file` in 1 MB blocks; returns the sha256 of the data. */
export function writeRandomFile(file, size, seed) {
  const hash = crypto.createHash('sha256');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  try {
    const block = 1 << 20;
    for (let off = 0, i = 0; off < size; off += block, i++) {
      const chunk = randomBytes(Math.min(block, size - off), seed * 7919 + i);
      fs.writeSync(fd, chunk);
      hash.update(chunk);
    }
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

/** Free bytes on the filesystem holding `dir`. */
export function freeBytes(dir = os.tmpdir()) {
  const s = fs.statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
}

/** A syntactically valid object id that no repository here contains (for gitlinks). */
export function fakeCommitId(label) {
  return crypto.createHash('sha1').update(`gitlink:${label}`).digest('hex');
}

// ---------------------------------------------------------------------------------------------
// Repository builder

export class Repo {
  /** git init a new repository (branch `main`) under the temp root. */
  static init(prefix = 'repo') {
    const dir = tmpDir(prefix);
    git(dir, ['init', '-q', '-b', 'main']);
    // Keep fixtures in exactly the storage the test asks for.
    git(dir, ['config', 'gc.auto', '0']);
    git(dir, ['config', 'advice.detachedHead', 'false']);
    return new Repo(dir);
  }

  constructor(dir) {
    this.dir = dir;
    this.gitDir = path.join(dir, '.git');
  }

  abs(rel) {
    return path.join(this.dir, rel);
  }

  git(...args) {
    return gitOut(this.dir, ...args);
  }

  /** Write a file (parents created); `exec` sets mode 0755, otherwise 0644. */
  write(rel, content, { exec = false } = {}) {
    const file = this.abs(rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.rmSync(file, { force: true });
    fs.writeFileSync(file, content);
    fs.chmodSync(file, exec ? 0o755 : 0o644);
    return this;
  }

  chmod(rel, exec) {
    fs.chmodSync(this.abs(rel), exec ? 0o755 : 0o644);
    return this;
  }

  symlink(rel, target) {
    const file = this.abs(rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.rmSync(file, { force: true });
    fs.symlinkSync(target, file);
    return this;
  }

  rm(rel) {
    fs.rmSync(this.abs(rel), { recursive: true, force: true });
    return this;
  }

  /** Stage all worktree changes (gitlinks are kept: their directories exist, empty). */
  addAll() {
    git(this.dir, ['add', '-A']);
    return this;
  }

  /** Record a gitlink (submodule entry) at `rel` pointing at `commitId`. */
  gitlink(rel, commitId) {
    // An empty directory at the path keeps `git add -A` from staging the gitlink's deletion.
    fs.mkdirSync(this.abs(rel), { recursive: true });
    git(this.dir, ['update-index', '--add', '--cacheinfo', `160000,${commitId},${rel}`]);
    return this;
  }

  /** `git add -A` then commit; returns the new commit id. */
  commit(message = 'commit') {
    this.addAll();
    git(this.dir, ['commit', '-q', '--allow-empty', '-m', message]);
    return this.git('rev-parse', 'HEAD');
  }

  rev(rev) {
    return this.git('rev-parse', '--verify', '-q', rev);
  }

  tag(name, rev = 'HEAD', { annotated = false, message = `tag ${name}` } = {}) {
    if (annotated) git(this.dir, ['tag', '-a', name, '-m', message, rev]);
    else git(this.dir, ['tag', name, rev]);
    return this;
  }

  branch(name, rev = 'HEAD') {
    git(this.dir, ['branch', '-f', name, rev]);
    return this;
  }

  /** Switch the source worktree (used to build commits on other branches). */
  switchTo(name) {
    git(this.dir, ['checkout', '-q', '-f', name]);
    return this;
  }

  /** `git gc`: one pack with OFS_DELTA deltas; refs packed into packed-refs. */
  gc() {
    git(this.dir, ['gc', '-q', '--prune=now']);
    return this;
  }

  /** One pack with REF_DELTA deltas only (loose objects pruned; refs left as they are). */
  repackRefDeltas() {
    git(this.dir, ['-c', 'repack.useDeltaBaseOffset=false', 'repack', '-adfq']);
    return this;
  }

  /** Pack the loose objects into an additional pack (existing packs untouched). */
  repackIncremental() {
    git(this.dir, ['repack', '-dq']);
    return this;
  }

  packRefs() {
    git(this.dir, ['pack-refs', '--all', '--prune']);
    return this;
  }

  /** A full copy of this repository (worktree and .git) under a new temp dir. */
  copy(prefix = 'copy') {
    const dir = tmpPath(prefix);
    fs.cpSync(this.dir, dir, { recursive: true, verbatimSymlinks: true });
    return new Repo(dir);
  }
}

// ---------------------------------------------------------------------------------------------
// Fixture cache
//
// A generated fixture is kept on disk, keyed by what makes it: its name, the builder's source,
// its inputs, this file's source and git's version (as gitoxide keeps generated fixtures keyed
// by their script). It lives in os.tmpdir() (PCHECKOUT_FIXTURE_CACHE to move it, set it to
// "off" to build every time) and is never committed; each use gets its own copy under ROOT.

const FIXTURE_CACHE =
  process.env.PCHECKOUT_FIXTURE_CACHE ?? path.join(os.tmpdir(), 'pcheckout-fixture-cache');
const THIS_FILE_SOURCE = fs.readFileSync(new URL(import.meta.url), 'utf8');
let gitVersion;

function fixtureKey(name, build, inputs) {
  gitVersion ??= execFileSync('git', ['--version'], { env: gitEnv, encoding: 'utf8' });
  const h = crypto.createHash('sha256');
  for (const part of [
    name,
    build.toString(),
    JSON.stringify(inputs),
    THIS_FILE_SOURCE,
    gitVersion,
  ]) {
    h.update(`${part.length}:`).update(part);
  }
  return `${name.replace(/[^A-Za-z0-9_-]/g, '_')}-${h.digest('hex').slice(0, 20)}`;
}

/**
 * The repositories `build()` makes, from the cache when an identical build was done before.
 * `build()` returns a Repo, or { repo?: Repo, repos?: { [name]: Repo }, ...data } (`data`:
 * JSON, returned alongside). `inputs`: everything else the build depends on (constants, the
 * sources of helpers outside this file). Returns the same shape, each Repo a fresh copy the
 * caller may change (under ROOT, named after `prefix`); a copy's index is refreshed
 * (git update-index --refresh), as the copied files have new stat data.
 */
export function cachedFixture(name, inputs, build, { prefix = name } = {}) {
  if (FIXTURE_CACHE === 'off') return unwrap(build());
  const key = fixtureKey(name, build, inputs);
  const entry = path.join(FIXTURE_CACHE, key);
  const metaFile = path.join(entry, 'meta.json');
  if (fs.existsSync(metaFile)) {
    const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8'));
    const now = new Date();
    fs.utimesSync(metaFile, now, now); // in use: not pruned
    const load = (sub) => {
      const dir = tmpPath(prefix);
      fs.cpSync(path.join(entry, sub), dir, { recursive: true, verbatimSymlinks: true });
      if (fs.existsSync(path.join(dir, '.git', 'index'))) {
        git(dir, ['update-index', '-q', '--refresh']);
      }
      return new Repo(dir);
    };
    // Commits made after this get later dates than the fixture's, as without the cache.
    commitClock = Math.max(commitClock, meta.clock);
    const out = { ...meta.data };
    if (meta.repo) out.repo = load('repo');
    if (meta.repos) {
      out.repos = Object.fromEntries(meta.repos.map((k) => [k, load(`repos/${k}`)]));
    }
    return out;
  }
  const built = unwrap(build());
  prune(name, key);
  const tmp = path.join(FIXTURE_CACHE, `.tmp-${process.pid}-${crypto.randomUUID()}`);
  try {
    const { repo, repos, ...data } = built;
    const copy = (r, sub) =>
      fs.cpSync(r.dir, path.join(tmp, sub), { recursive: true, verbatimSymlinks: true });
    fs.mkdirSync(tmp, { recursive: true });
    if (repo) copy(repo, 'repo');
    for (const [k, r] of Object.entries(repos ?? {})) copy(r, `repos/${k}`);
    const meta = { clock: commitClock, data, repo: !!repo, repos: repos && Object.keys(repos) };
    fs.writeFileSync(path.join(tmp, 'meta.json'), JSON.stringify(meta));
    fs.renameSync(tmp, entry); // atomic: of two concurrent builds, the first stays
  } catch {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return built;
}

function unwrap(built) {
  return built instanceof Repo ? { repo: built } : built;
}

/** Drop cached builds of `name` under other keys, unused for an hour (older sources). */
function prune(name, key) {
  let names;
  try {
    names = fs.readdirSync(FIXTURE_CACHE);
  } catch {
    return;
  }
  const re = new RegExp(`^${name.replace(/[^A-Za-z0-9_-]/g, '_')}-[0-9a-f]{20}$`);
  for (const n of names) {
    if (n === key || !re.test(n)) continue;
    const dir = path.join(FIXTURE_CACHE, n);
    try {
      if (Date.now() - fs.statSync(path.join(dir, 'meta.json')).mtimeMs < 3_600_000) continue;
    } catch {
      // no meta.json: a broken entry
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Object storage inspection

function readPackEntry(fd, offset) {
  const buf = Buffer.alloc(32);
  fs.readSync(fd, buf, 0, 32, offset);
  let pos = 0;
  let c = buf[pos++];
  const type = (c >> 4) & 7;
  let size = c & 15;
  let mul = 16;
  while (c & 0x80) {
    c = buf[pos++];
    size += (c & 0x7f) * mul;
    mul *= 128;
  }
  if (type === 6) {
    c = buf[pos++];
    let rel = c & 0x7f;
    while (c & 0x80) {
      c = buf[pos++];
      rel = (rel + 1) * 128 + (c & 0x7f);
    }
    return { type, size, baseOffset: offset - rel };
  }
  if (type === 7) return { type, size, baseId: buf.subarray(pos, pos + 20).toString('hex') };
  return { type, size };
}

const TYPE_NAMES = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag', 6: 'ofs-delta', 7: 'ref-delta' };

/** Loose object ids in a repository. */
export function looseObjects(repoDir) {
  const objects = path.join(repoDir, '.git', 'objects');
  const ids = [];
  for (const d of fs.readdirSync(objects)) {
    if (!/^[0-9a-f]{2}$/.test(d)) continue;
    for (const f of fs.readdirSync(path.join(objects, d))) {
      if (/^[0-9a-f]{38}$/.test(f)) ids.push(d + f);
    }
  }
  return ids.sort();
}

/** Every pack: its name and, per object id, { offset, type, depth } (delta type kept). */
export function packContents(repoDir) {
  const packDir = path.join(repoDir, '.git', 'objects', 'pack');
  if (!fs.existsSync(packDir)) return [];
  const packs = [];
  for (const idx of fs
    .readdirSync(packDir)
    .filter((f) => f.endsWith('.idx'))
    .sort()) {
    const packFile = path.join(packDir, idx.replace(/\.idx$/, '.pack'));
    const out = git(repoDir, ['show-index'], { input: fs.readFileSync(path.join(packDir, idx)) });
    const byId = new Map();
    const byOffset = new Map();
    for (const line of out.split('\n')) {
      const m = /^(\d+) ([0-9a-f]{40})/.exec(line);
      if (!m) continue;
      byId.set(m[2], { offset: Number(m[1]) });
      byOffset.set(Number(m[1]), m[2]);
    }
    const fd = fs.openSync(packFile, 'r');
    try {
      for (const entry of byId.values()) Object.assign(entry, readPackEntry(fd, entry.offset));
    } finally {
      fs.closeSync(fd);
    }
    const depth = (entry) => {
      let d = 0;
      for (let e = entry; e.type === 6 || e.type === 7; d++) {
        e = e.type === 6 ? byId.get(byOffset.get(e.baseOffset)) : byId.get(e.baseId);
        assert.ok(e, `delta base missing inside ${idx}`);
      }
      return d;
    };
    for (const entry of byId.values()) entry.depth = depth(entry);
    packs.push({ name: idx.replace(/\.idx$/, ''), file: packFile, objects: byId });
  }
  return packs;
}

/**
 * Where a repository's objects live, and in particular the blobs of `rev`'s tree:
 * { loose, packs, packed, ofsDeltas, refDeltas, target: { blobs, looseBlobs, packedBlobs,
 * ofsBlobs, refBlobs, maxDepth } }.
 */
export function describeStorage(repoDir, rev = 'HEAD') {
  const loose = new Set(looseObjects(repoDir));
  const packs = packContents(repoDir);
  const packed = new Map();
  let ofsDeltas = 0;
  let refDeltas = 0;
  for (const p of packs) {
    for (const [id, e] of p.objects) {
      packed.set(id, e);
      if (e.type === 6) ofsDeltas++;
      if (e.type === 7) refDeltas++;
    }
  }
  const blobs = new Set();
  for (const line of git(repoDir, ['ls-tree', '-r', '-z', rev]).split('\0')) {
    const m = /^\d+ blob ([0-9a-f]{40})\t/.exec(line);
    if (m) blobs.add(m[1]);
  }
  const target = { blobs: blobs.size, looseBlobs: 0, packedBlobs: 0, ofsBlobs: 0, refBlobs: 0 };
  target.maxDepth = 0;
  for (const id of blobs) {
    if (loose.has(id)) target.looseBlobs++;
    const e = packed.get(id);
    if (!e) continue;
    target.packedBlobs++;
    if (e.type === 6) target.ofsBlobs++;
    if (e.type === 7) target.refBlobs++;
    target.maxDepth = Math.max(target.maxDepth, e.depth);
  }
  return {
    loose: loose.size,
    packs: packs.length,
    packNames: packs.map((p) => p.name),
    packed: packed.size,
    ofsDeltas,
    refDeltas,
    target,
    typeNames: TYPE_NAMES,
  };
}

/**
 * Assert that `repoDir` stores its objects as `kind`:
 * 'loose' | 'ofs' (one pack, OFS_DELTA only) | 'ref' (one pack, REF_DELTA only) |
 * 'mixed' (≥ 2 packs + loose objects, `rev`'s blobs spread over both) | 'packed' (any pack(s),
 * no loose objects).
 */
export function assertStorage(repoDir, kind, rev = 'HEAD') {
  const s = describeStorage(repoDir, rev);
  const t = s.target;
  const msg = (what) => `${repoDir}: expected ${kind} storage, ${what}: ${JSON.stringify(s)}`;
  switch (kind) {
    case 'loose':
      assert.equal(s.packs, 0, msg('found packs'));
      assert.ok(s.loose > 0, msg('no loose objects'));
      assert.equal(t.looseBlobs, t.blobs, msg('some target blobs are not loose'));
      break;
    case 'ofs':
      assert.equal(s.packs, 1, msg('pack count'));
      assert.equal(s.loose, 0, msg('loose objects left'));
      assert.ok(s.ofsDeltas > 0, msg('no OFS_DELTA objects'));
      assert.equal(s.refDeltas, 0, msg('REF_DELTA objects present'));
      assert.ok(t.ofsBlobs > 0, msg(`none of ${rev}'s blobs is an OFS_DELTA`));
      break;
    case 'ref':
      assert.equal(s.packs, 1, msg('pack count'));
      assert.equal(s.loose, 0, msg('loose objects left'));
      assert.ok(s.refDeltas > 0, msg('no REF_DELTA objects'));
      assert.equal(s.ofsDeltas, 0, msg('OFS_DELTA objects present'));
      assert.ok(t.refBlobs > 0, msg(`none of ${rev}'s blobs is a REF_DELTA`));
      break;
    case 'mixed':
      assert.ok(s.packs >= 2, msg('fewer than 2 packs'));
      assert.ok(s.loose > 0, msg('no loose objects'));
      assert.ok(t.looseBlobs > 0, msg(`none of ${rev}'s blobs is loose`));
      assert.ok(t.packedBlobs > 0, msg(`none of ${rev}'s blobs is packed`));
      break;
    case 'packed':
      assert.ok(s.packs >= 1, msg('no pack'));
      assert.equal(s.loose, 0, msg('loose objects left'));
      break;
    default:
      throw new Error(`unknown storage kind ${kind}`);
  }
  return s;
}

/** Turn a (loose) source repository into a copy stored as `kind` ('loose'|'ofs'|'ref'|'mixed'). */
export function storageVariant(src, kind, { more } = {}) {
  const repo = src.copy(`${kind}`);
  if (kind === 'ofs') repo.gc();
  else if (kind === 'ref') repo.repackRefDeltas();
  else if (kind === 'mixed') {
    // pack 1 (gc), commit, pack 2 (incremental repack), commit again: loose on top.
    repo.gc();
    (more ?? defaultMore)(repo, 1);
    repo.repackIncremental();
    (more ?? defaultMore)(repo, 2);
  } else if (kind !== 'loose') throw new Error(`unknown storage kind ${kind}`);
  assertStorage(repo.dir, kind);
  return repo;
}

function defaultMore(repo, round) {
  const rand = prng(9000 + round);
  repo.write(`mixed/round-${round}.txt`, textLines(rand, 40).join('\n') + '\n');
  for (const rel of listFiles(repo.dir)
    .filter((f) => f.endsWith('.txt'))
    .slice(round, round + 6)) {
    const lines = fs.readFileSync(repo.abs(rel), 'utf8').split('\n');
    repo.write(rel, editLines(lines, rand, { changes: 2 }).join('\n'), {
      exec: (fs.statSync(repo.abs(rel)).mode & 0o100) !== 0,
    });
  }
  repo.commit(`mixed round ${round}`);
}

/** Regular files (relative paths, sorted) under `dir`, excluding .git and symlinks. */
export function listFiles(dir) {
  const out = [];
  const walk = (rel) => {
    for (const d of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${d.name}` : d.name;
      if (!rel && d.name === '.git') continue;
      if (d.isDirectory()) walk(r);
      else if (d.isFile()) out.push(r);
    }
  };
  walk('');
  return out.sort();
}

// ---------------------------------------------------------------------------------------------
// Fresh-checkout targets

/** Names in a worktree other than .git. */
export function worktreeEntries(dir) {
  return fs.readdirSync(dir).filter((n) => n !== '.git');
}

/** Configuration of every fresh-checkout target (and oracle clone). */
const TARGET_CONFIG = ['advice.detachedHead=false', 'gc.auto=0'];

/**
 * The object store of a repository as files (no git process): { loose: sorted ids, packs:
 * sorted [name, .pack size, .idx size] }. Equal for two repositories when one is a local clone
 * or a byte copy of the other.
 */
export function storageFiles(repoDir) {
  const packDir = path.join(repoDir, '.git', 'objects', 'pack');
  const size = (f) => fs.statSync(path.join(packDir, f)).size;
  const packs = fs.existsSync(packDir)
    ? fs
        .readdirSync(packDir)
        .filter((f) => f.endsWith('.pack'))
        .sort()
        .map((f) => [f, size(f), size(f.replace(/\.pack$/, '.idx'))])
    : [];
  return { loose: looseObjects(repoDir), packs };
}

/**
 * A fresh-checkout target made from `src` (a Repo or a path): only `.git`, no `.git/index`.
 * - method 'clone' (default): `git clone --no-checkout` (a local clone copies the object store
 *   file by file, so loose objects, packs and delta kinds stay exactly as in the source; refs
 *   become refs/remotes/origin/* plus the local HEAD branch).
 * - method 'copy': a byte copy of src/.git without the index (refs exactly as in the source,
 *   loose or packed, local branches and tags kept, HEAD possibly detached).
 * `hardlinks: false` copies object files instead of hardlinking them (needed before corrupting).
 * Asserts the object storage and HEAD match the source.
 */
export function freshClone(src, { method = 'clone', hardlinks = true, prefix = 'target' } = {}) {
  const srcDir = typeof src === 'string' ? src : src.dir;
  const dst = tmpPath(prefix);
  if (method === 'clone') {
    const args = ['clone', '-q', '--no-checkout', ...TARGET_CONFIG.flatMap((kv) => ['-c', kv])];
    if (!hardlinks) args.push('--no-hardlinks');
    git(ROOT, [...args, srcDir, dst]);
  } else if (method === 'copy') {
    fs.mkdirSync(dst);
    fs.cpSync(path.join(srcDir, '.git'), path.join(dst, '.git'), {
      recursive: true,
      verbatimSymlinks: true,
    });
    fs.rmSync(path.join(dst, '.git', 'index'), { force: true });
    // As `git config` would append them (no git process needed for two settings).
    const settings = TARGET_CONFIG.map((kv) => kv.split('=')).map(
      ([k, v]) => `[${k.split('.')[0]}]\n\t${k.split('.')[1]} = ${v}\n`,
    );
    fs.appendFileSync(path.join(dst, '.git', 'config'), settings.join(''));
  } else {
    throw new Error(`unknown clone method ${method}`);
  }

  // The target really is a fresh-checkout target...
  assert.deepEqual(worktreeEntries(dst), [], `${dst}: worktree not empty after ${method}`);
  assert.ok(!fs.existsSync(path.join(dst, '.git', 'index')), `${dst}: .git/index exists`);
  // ...with HEAD and objects stored exactly as in the source: the same loose objects and the
  // same pack files (a pack's name is its checksum), so every delta chain is the source's.
  if (method === 'clone') {
    assert.equal(headCommit(dst), headCommit(srcDir), `${dst}: HEAD differs from the source`);
  } else {
    // A copy keeps every ref too: HEAD's and each ref's object id, one call per side.
    assert.equal(
      gitOut(dst, 'show-ref', '--head'),
      gitOut(srcDir, 'show-ref', '--head'),
      `${dst}: HEAD or refs differ from the source`,
    );
  }
  assert.deepEqual(
    storageFiles(dst),
    storageFiles(srcDir),
    `${dst}: object storage (loose objects, packs) differs from the source`,
  );
  if (method === 'copy') {
    assert.equal(
      fs.readFileSync(path.join(dst, '.git', 'HEAD'), 'utf8'),
      fs.readFileSync(path.join(srcDir, '.git', 'HEAD'), 'utf8'),
    );
  }
  return dst;
}

/** Raw content of .git/HEAD. */
export function readHead(dir) {
  return fs.readFileSync(path.join(dir, '.git', 'HEAD'), 'utf8');
}

/**
 * The commit HEAD names, read from the files (a loose ref, else packed-refs) as git stores
 * them after a clone; anything else (a symref chain, reftable, no such ref) asks git. A test
 * spawns hundreds of clones, and a git process costs ~10 ms here.
 */
export function headCommit(dir) {
  const gitDir = path.join(dir, '.git');
  const head = fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
  if (/^[0-9a-f]{40}$/.test(head)) return head;
  const ref = /^ref: (refs\/heads\/\S+)$/.exec(head)?.[1];
  if (ref !== undefined) {
    let loose = null;
    try {
      loose = fs.readFileSync(path.join(gitDir, ref), 'utf8').trim();
    } catch {
      // not loose: packed
    }
    if (loose !== null)
      return /^[0-9a-f]{40}$/.test(loose) ? loose : gitOut(dir, 'rev-parse', 'HEAD');
    let packed = '';
    try {
      packed = fs.readFileSync(path.join(gitDir, 'packed-refs'), 'utf8');
    } catch {
      // none
    }
    for (const line of packed.split('\n')) {
      if (line.endsWith(` ${ref}`) && /^[0-9a-f]{40} /.test(line)) return line.slice(0, 40);
    }
  }
  return gitOut(dir, 'rev-parse', 'HEAD');
}

// ---------------------------------------------------------------------------------------------
// Ready-made fixtures

export const DEEP_LEVELS = 30;
export const deepDir = Array.from(
  { length: DEEP_LEVELS },
  (_, i) => `level-${String(i + 1).padStart(2, '0')}`,
).join('/');

/** Odd but valid path names (spaces, UTF-8, punctuation); each maps to its content. */
export const unicodeNames = [
  'names/with space.txt',
  'names/  two leading spaces.txt',
  'names/trailing space .txt',
  'names/café é.txt',
  'names/日本/ファイル 日本語.txt',
  'names/emoji 🎉🚀.txt',
  'names/#%&+,;=@[]{}~!$.txt',
  "names/quote'single.txt",
  'names/quote"double.txt',
  'names/-dash-first.txt',
  'names/.hidden',
  'names/Ünïcödé dir/ñ.txt',
  'names/' + 'long-'.repeat(40) + 'name.txt',
];

/**
 * The rich repository used by the matrix: > 150 regular files in nested directories, sizeable
 * text files edited (and shrinking) over several commits so packs carry delta chains, exec bits,
 * symlinks (to a file, to a directory, dangling, absolute, relative upwards), gitlinks, empty
 * files, 30-level nesting, names with spaces and UTF-8, a binary file.
 * Refs: main (HEAD), feature, tags v1.0 (annotated, on the first commit) and lw (lightweight).
 * Returns the Repo with all objects loose.
 */
export function buildRichRepo({ smallFiles = 150, prefix = 'rich' } = {}) {
  const opts = { smallFiles, prefix };
  return cachedFixture(`rich-${prefix}`, [opts], () => makeRichRepo(opts)).repo;
}

/**
 * buildRichRepo's repository in several object storages: { [kind]: Repo } for each kind of
 * `kinds` ('loose' | 'ofs' | 'ref' | 'mixed', as storageVariant makes them; 'loose' is the
 * source itself), each checked with assertStorage (also when it comes from the cache).
 */
export function richStorageVariants(kinds, { smallFiles = 150, prefix = 'rich' } = {}) {
  const opts = { smallFiles, prefix };
  const { repos } = cachedFixture(`rich-variants-${prefix}`, [kinds, opts], () => {
    const src = makeRichRepo(opts);
    return { repos: Object.fromEntries(kinds.map((k) => [k, storageVariant(src, k)])) };
  });
  for (const k of kinds) assertStorage(repos[k].dir, k);
  return repos;
}

function makeRichRepo({ smallFiles, prefix }) {
  const repo = Repo.init(prefix);
  const rand = prng(42);
  const big = [];
  for (let i = 0; i < 4; i++) big.push(textLines(rand, 2500 + i * 500));
  const writeBig = () =>
    big.forEach((lines, i) => repo.write(`docs/big-${i}.txt`, lines.join('\n')));

  repo.write('README.md', textLines(rand, 50).join('\n') + '\n');
  repo.write('.gitignore', '*.log\n/build-output/\n');
  writeBig();
  for (let i = 0; i < smallFiles; i++) {
    const dir = `src/pkg-${i % 10}`;
    repo.write(`${dir}/file-${i}.txt`, textLines(rand, 1 + Math.floor(rand() * 60)).join('\n'));
  }
  repo.write('bin/run.sh', '#!/bin/sh\necho run\n', { exec: true });
  repo.write('bin/tool', randomBytes(3000, 7), { exec: true });
  repo.write('data/blob.bin', randomBytes(64 * 1024, 8));
  repo.write('empty.txt', '');
  repo.write('src/pkg-0/empty', '');
  repo.write('dir with empty/.keep', '');
  repo.symlink('link-readme', 'README.md');
  repo.symlink('link-src', 'src');
  repo.symlink('link-dangling', 'does/not/exist');
  repo.symlink('link-absolute', '/nonexistent/absolute/target');
  repo.symlink('src/pkg-1/link-up', '../../README.md');
  repo.write(`${deepDir}/deep.txt`, 'thirty levels down\n');
  repo.write(`${deepDir}/deep-exec.sh`, '#!/bin/sh\n', { exec: true });
  for (const name of unicodeNames) repo.write(name, `content of ${name}\n`);
  repo.symlink('names/link to 日本', '日本/ファイル 日本語.txt');
  for (const name of ['a-b', 'a.b', 'a/b', 'a0', 'a_b', 'A', 'a/b.c/d']) {
    repo.write(`order/${name}`, `${name}\n`);
  }
  repo.gitlink('vendor/sub', fakeCommitId('sub-1'));
  repo.gitlink('modules/deep/er/sm', fakeCommitId('sm-1'));
  const first = repo.commit('initial');
  repo.tag('v1.0', first, { annotated: true, message: 'release 1.0' });

  // commit 2: edits everywhere, an exec bit flipped on, a symlink retargeted, adds and removes.
  big.forEach((lines, i) => (big[i] = editLines(lines, rand, { changes: 8, drop: 40 })));
  writeBig();
  for (let i = 0; i < 10; i++) {
    repo.write(`src/pkg-${i}/file-${i}.txt`, textLines(rand, 30).join('\n'));
  }
  repo.chmod('src/pkg-2/file-2.txt', true);
  repo.symlink('link-readme', 'docs/big-0.txt');
  repo.write('new/file.txt', 'new in commit 2\n');
  repo.rm(`src/pkg-9/file-${smallFiles - 1}.txt`);
  const second = repo.commit('second');
  repo.tag('lw', second);

  // feature branch from commit 2.
  repo.branch('feature', second);
  repo.switchTo('feature');
  big[1] = editLines(big[1], prng(7), { changes: 3, add: 20 });
  repo.write('docs/big-1.txt', big[1].join('\n'));
  repo.write('feature-only.txt', 'feature\n');
  repo.chmod('bin/run.sh', false);
  repo.commit('feature work');
  repo.switchTo('main');
  big[1] = fs.readFileSync(repo.abs('docs/big-1.txt'), 'utf8').split('\n');

  // commits 3 and 4 on main: more shrinking edits (HEAD's versions become deltas) and a
  // gitlink moved to another commit.
  for (let c = 3; c <= 4; c++) {
    big.forEach((lines, i) => (big[i] = editLines(lines, rand, { changes: 5, drop: 30 })));
    writeBig();
    repo.write(`src/pkg-3/file-${c}.txt`, textLines(rand, 20 + c).join('\n'));
    if (c === 4) repo.gitlink('vendor/sub', fakeCommitId('sub-2'));
    repo.commit(`commit ${c}`);
  }
  return repo;
}

/** A small repository with `n` regular files (no symlinks or gitlinks) in one commit. */
export function buildFlatRepo(n, { prefix = 'flat', seed = 1 } = {}) {
  const repo = Repo.init(prefix);
  const rand = prng(seed);
  for (let i = 0; i < n; i++) {
    repo.write(`f/${Math.floor(i / 25)}/file-${i}.txt`, textLines(rand, 1 + (i % 20)).join('\n'));
  }
  repo.commit('flat');
  return repo;
}
