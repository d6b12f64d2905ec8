// The oracle: check out the same thing with git into a second fresh clone and require that
// pcheckout's worktree, index and HEAD are indistinguishable from git's.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { assertCacheTreeLike } from './cache-tree.mjs';
import { freshClone, git, gitTry, readHead } from './git.mjs';

const oracles = new Map();

/**
 * git's own result for checking out `ref` (undefined = what HEAD points to) in a fresh clone of
 * `src` made with `method`; with `readTree`, `git read-tree -u --reset <readTree>` instead
 * (worktree and index from a tree, HEAD untouched). Cached per (src, method, ref, readTree);
 * the oracle clone is never modified.
 */
export function gitOracle(src, { ref, method = 'clone', readTree } = {}) {
  const srcDir = typeof src === 'string' ? src : src.dir;
  const key = JSON.stringify([srcDir, method, ref ?? null, readTree ?? null]);
  let o = oracles.get(key);
  if (o) return o;
  const dir = freshClone(srcDir, { method, prefix: 'oracle' });
  if (readTree !== undefined) git(dir, ['read-tree', '-u', '--reset', readTree]);
  else if (ref === undefined) git(dir, ['reset', '-q', '--hard']);
  else git(dir, ['checkout', '-q', '-f', ref, '--']);
  const listing = indexListing(dir);
  const head = headState(dir);
  const entries = listing.entries;
  const count = (re) => entries.filter((e) => re.test(e.mode)).length;
  const snapshot = snapshotTree(dir);
  let fileBytes = 0;
  let symlinkBytes = 0;
  for (const e of snapshot.values()) {
    if (e.type === 'file') fileBytes += e.size;
    if (e.type === 'symlink') symlinkBytes += Buffer.byteLength(e.target);
  }
  o = {
    dir,
    ref,
    method,
    snapshot,
    lsFiles: listing.lsFiles,
    lsFilesV: listing.lsFilesV,
    indexFlags: listing.entries.map((e) => `${e.name}: ${e.flags}`),
    headFile: readHead(dir),
    commit: head.commit,
    tree: head.tree,
    symbolicRef: head.symbolicRef,
    entries: entries.length,
    files: count(/^100(644|755)$/),
    symlinks: count(/^120000$/),
    gitlinks: count(/^160000$/),
    fileBytes,
    symlinkBytes,
  };
  oracles.set(key, o);
  return o;
}

/**
 * lstat every path under `dir` except the top-level .git:
 * Map(relPath → { type: 'file'|'dir'|'symlink'|'other', perm, size, target? }).
 */
export function snapshotTree(dir) {
  const out = new Map();
  const walk = (rel) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      if (!rel && name === '.git') continue;
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(path.join(dir, r));
      const perm = st.mode & 0o777;
      if (st.isSymbolicLink()) {
        out.set(r, { type: 'symlink', perm, target: fs.readlinkSync(path.join(dir, r)) });
      } else if (st.isDirectory()) {
        out.set(r, { type: 'dir', perm });
        walk(r);
      } else if (st.isFile()) {
        out.set(r, { type: 'file', perm, size: st.size });
      } else {
        out.set(r, { type: 'other', perm });
      }
    }
  };
  walk('');
  return out;
}

const CHUNK = 1 << 22;
const bufA = Buffer.allocUnsafe(CHUNK);
const bufB = Buffer.allocUnsafe(CHUNK);

/** First differing byte offset between two files of equal size, or -1 when identical. */
function firstDifference(a, b, size) {
  const diffAt = (x, y, base) => {
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return base + i;
    return base + Math.min(x.length, y.length);
  };
  if (size <= CHUNK) {
    const x = fs.readFileSync(a);
    const y = fs.readFileSync(b);
    return x.equals(y) ? -1 : diffAt(x, y, 0);
  }
  const fa = fs.openSync(a, 'r');
  const fb = fs.openSync(b, 'r');
  try {
    for (let pos = 0; ; pos += CHUNK) {
      const na = fs.readSync(fa, bufA, 0, CHUNK, pos);
      const nb = fs.readSync(fb, bufB, 0, CHUNK, pos);
      const x = bufA.subarray(0, na);
      const y = bufB.subarray(0, nb);
      if (!x.equals(y)) return diffAt(x, y, pos);
      if (na === 0) return -1;
    }
  } finally {
    fs.closeSync(fa);
    fs.closeSync(fb);
  }
}

function report(problems, what) {
  if (problems.length === 0) return;
  const shown = problems.slice(0, 25).join('\n  ');
  const more = problems.length > 25 ? `\n  … and ${problems.length - 25} more` : '';
  assert.fail(`${what}: ${problems.length} difference(s) (pcheckout vs git):\n  ${shown}${more}`);
}

/** The worktree of `dir` must equal git's: paths, types, permission bits, bytes, link targets. */
export function assertSameWorktree(dir, oracle) {
  const actual = snapshotTree(dir);
  const expected = oracle.snapshot;
  const problems = [];
  for (const p of expected.keys()) if (!actual.has(p)) problems.push(`missing: ${p}`);
  for (const p of actual.keys()) if (!expected.has(p)) problems.push(`unexpected: ${p}`);
  for (const [p, e] of expected) {
    const a = actual.get(p);
    if (!a) continue;
    if (a.type !== e.type) {
      problems.push(`${p}: type ${a.type}, git has ${e.type}`);
      continue;
    }
    if (a.type !== 'symlink' && a.perm !== e.perm) {
      problems.push(`${p}: mode ${a.perm.toString(8)}, git has ${e.perm.toString(8)}`);
    }
    if (a.type === 'symlink' && a.target !== e.target) {
      problems.push(`${p}: symlink -> ${JSON.stringify(a.target)}, git has ${e.target}`);
    }
    if (a.type === 'file') {
      if (a.size !== e.size) {
        problems.push(`${p}: ${a.size} bytes, git has ${e.size}`);
      } else {
        const at = firstDifference(path.join(dir, p), path.join(oracle.dir, p), e.size);
        if (at >= 0) problems.push(`${p}: content differs from git's at byte ${at}`);
      }
    }
  }
  report(problems, `worktree ${dir}`);
}

const LISTING_RECORD =
  /([^\0]*)\0  ctime: (\d+):(\d+)\n  mtime: (\d+):(\d+)\n  dev: (\d+)\tino: (\d+)\n  uid: (\d+)\tgid: (\d+)\n  size: (\d+)\tflags: ([0-9a-f]+)\n/y;

/**
 * The index as git lists it, in one call (`git ls-files -s -v --debug -z`):
 * { lsFiles: what `git ls-files -s -z` prints, lsFilesV: what `git ls-files -v -z` prints,
 *   entries: [{ name, tag, mode, oid, stage, ctimeSec, ctimeNsec, mtimeSec, mtimeNsec, dev, ino,
 *   uid, gid, size, flags (hex, as git prints it) }] in index order }.
 * `config`: git options before the command (e.g. ['-c', 'sparse.expectFilesOutsideOfPatterns=true']).
 */
export function indexListing(dir, { config = [] } = {}) {
  const text = git(dir, [...config, 'ls-files', '-s', '-v', '--debug', '-z']);
  const entries = [];
  let lsFiles = '';
  let lsFilesV = '';
  LISTING_RECORD.lastIndex = 0;
  while (LISTING_RECORD.lastIndex < text.length) {
    const at = LISTING_RECORD.lastIndex;
    const m = LISTING_RECORD.exec(text);
    assert.ok(
      m,
      `${dir}: cannot parse ls-files -s -v --debug at ${JSON.stringify(text.slice(at, at + 200))}`,
    );
    const h = /^(\S+) (\d+) ([0-9a-f]+) (\d)\t(.*)$/s.exec(m[1]);
    assert.ok(h, `${dir}: cannot parse ls-files -s -v line ${JSON.stringify(m[1])}`);
    const [, tag, mode, oid, stage, name] = h;
    const n = m.slice(2).map((x, i) => (i === 9 ? x : Number(x)));
    lsFiles += `${mode} ${oid} ${stage}\t${name}\0`;
    lsFilesV += `${tag} ${name}\0`;
    entries.push({
      name,
      tag,
      mode,
      oid,
      stage: Number(stage),
      ctimeSec: n[0],
      ctimeNsec: n[1],
      mtimeSec: n[2],
      mtimeNsec: n[3],
      dev: n[4],
      ino: n[5],
      uid: n[6],
      gid: n[7],
      size: n[8],
      flags: n[9],
    });
  }
  return { lsFiles, lsFilesV, entries };
}

/** HEAD in one call: { commit, tree, symbolicRef: 'refs/heads/x' | null (detached) }. */
export function headState(dir) {
  const [commit, tree, name] = git(dir, [
    'rev-parse',
    'HEAD',
    'HEAD^{tree}',
    '--symbolic-full-name',
    'HEAD',
  ])
    .trim()
    .split('\n');
  return { commit, tree, symbolicRef: name === 'HEAD' ? null : name };
}

/**
 * The index's cached stat data must describe the files on disk (so git trusts it without
 * re-reading content): size (non-zero for non-empty files: nothing smudged), mtime, ctime,
 * inode, device, uid, gid. `listing`: indexListing(dir), when the caller has it already.
 */
export function assertIndexStatMatchesDisk(dir, listing = indexListing(dir)) {
  const problems = [];
  const low32 = (n) => Number(BigInt(n) & 0xffffffffn);
  for (const e of listing.entries) {
    if (e.mode === '160000') continue; // gitlink: git itself records the directory's stat
    let st;
    try {
      st = fs.lstatSync(path.join(dir, e.name), { bigint: true });
    } catch {
      problems.push(`${e.name}: in the index but not on disk`);
      continue;
    }
    const sec = (ns) => Number(ns / 1_000_000_000n);
    const nsec = (ns) => Number(ns % 1_000_000_000n);
    const checks = [
      ['size', e.size, low32(st.size)],
      ['mtime', `${e.mtimeSec}:${e.mtimeNsec}`, `${sec(st.mtimeNs)}:${nsec(st.mtimeNs)}`],
      ['ctime', `${e.ctimeSec}:${e.ctimeNsec}`, `${sec(st.ctimeNs)}:${nsec(st.ctimeNs)}`],
      ['ino', e.ino, low32(st.ino)],
      ['dev', e.dev, low32(st.dev)],
      ['uid', e.uid, Number(st.uid)],
      ['gid', e.gid, Number(st.gid)],
    ];
    for (const [what, inIndex, onDisk] of checks) {
      if (inIndex !== onDisk) {
        const smudged = what === 'size' && inIndex === 0 ? ' (smudged entry)' : '';
        problems.push(`${e.name}: index ${what} ${inIndex}, on disk ${onDisk}${smudged}`);
      }
    }
  }
  report(problems, `index stat data in ${dir}`);
}

/**
 * Full comparison of a pcheckout result in `dir` with git's checkout of the same `ref`
 * from the same source: worktree, index (entries, flags, stat data), HEAD, and git's own
 * view (diff-files, diff-index, status, fsck). Returns the oracle.
 */
export function assertMatchesGit(dir, src, { ref, method = 'clone' } = {}) {
  const oracle = gitOracle(src, { ref, method });
  assert.ok(fs.existsSync(path.join(dir, '.git', 'index')), `${dir}: no .git/index written`);
  assert.ok(!fs.existsSync(path.join(dir, '.git', 'index.lock')), `${dir}: index.lock left behind`);

  assertSameWorktree(dir, oracle);

  // The index: entries, tags, flags and stat data (one git call).
  const listing = indexListing(dir);
  const lsFiles = listing.lsFiles;
  if (lsFiles !== oracle.lsFiles) {
    const a = lsFiles.split('\0');
    const b = oracle.lsFiles.split('\0');
    const onlyA = a.filter((x) => !b.includes(x)).slice(0, 10);
    const onlyB = b.filter((x) => !a.includes(x)).slice(0, 10);
    assert.fail(
      `git ls-files -s differs: ${a.length - 1} entries vs git's ${b.length - 1}` +
        `\n  only in pcheckout's index: ${JSON.stringify(onlyA)}` +
        `\n  only in git's index: ${JSON.stringify(onlyB)}` +
        (onlyA.length + onlyB.length === 0 ? '\n  (same entries, different order)' : ''),
    );
  }
  assert.equal(
    listing.lsFilesV,
    oracle.lsFilesV,
    'git ls-files -v tags (assume-unchanged / skip-worktree) differ from git',
  );

  assert.deepEqual(
    listing.entries.map((e) => `${e.name}: ${e.flags}`),
    oracle.indexFlags,
    'index entry flags (git ls-files --debug) differ from git',
  );

  // Before anything that refreshes the index (git status does).
  assertIndexStatMatchesDisk(dir, listing);
  const diffFiles = gitTry(dir, ['diff-files', '--name-status']);
  assert.equal(diffFiles.status, 0, `git diff-files failed: ${diffFiles.stderr}`);
  assert.equal(
    diffFiles.stdout,
    '',
    'git diff-files reports stat-dirty entries (run before any refresh)',
  );

  assert.equal(readHead(dir), oracle.headFile, '.git/HEAD differs from git checkout');
  const head = headState(dir);
  assert.equal(head.commit, oracle.commit, 'HEAD commit');
  assert.equal(head.symbolicRef, oracle.symbolicRef, 'symbolic HEAD');

  const cached = gitTry(dir, ['diff-index', '--cached', '--name-status', 'HEAD']);
  assert.equal(cached.status, 0, cached.stderr);
  assert.equal(cached.stdout, '', 'git diff-index --cached HEAD: index differs from HEAD');
  const wt = gitTry(dir, ['diff-index', '--quiet', 'HEAD']);
  assert.equal(wt.status, 0, `git diff-index --quiet HEAD exited ${wt.status}: ${wt.stderr}`);

  // The cache-tree git writes after a checkout, byte for byte; git verifies it.
  assertCacheTreeLike(dir, oracle.dir, { exact: true });

  const fsck = gitTry(dir, ['fsck', '--no-dangling', '--no-progress', '--connectivity-only']);
  assert.equal(fsck.status, 0, `git fsck failed:\n${fsck.stdout}${fsck.stderr}`);

  const status = gitTry(dir, ['status', '--porcelain=v1', '--untracked-files=all', '--ignored=no']);
  assert.equal(status.status, 0, status.stderr);
  assert.equal(status.stdout, '', 'git status --porcelain is not empty');
  return oracle;
}

/** Types and basic sanity of a Summary, independent of the repository. */
export function assertSummaryShape(s) {
  assert.equal(typeof s, 'object');
  assert.ok(s.commit === null || /^[0-9a-f]{40}$/.test(s.commit), `commit: ${s.commit}`);
  assert.ok(['fresh', 'switch', 'force', 'restore'].includes(s.mode), `mode: ${s.mode}`);
  // A restore checks out the index, not a tree: no commit or tree to name.
  if (s.mode === 'restore') assert.equal(s.tree, null, 'tree of a restore');
  else assert.match(s.tree, /^[0-9a-f]{40}$/, 'tree');
  for (const k of ['created', 'updated', 'deleted']) {
    assert.ok(Number.isInteger(s[k]) && s[k] >= 0, `${k} must be a non-negative integer: ${s[k]}`);
  }
  assert.ok(s.ref === null || typeof s.ref === 'string', `ref: ${s.ref}`);
  assert.equal(typeof s.detached, 'boolean', 'detached');
  for (const k of ['entries', 'files', 'symlinks', 'gitlinks', 'bytes', 'threshold']) {
    assert.ok(Number.isInteger(s[k]) && s[k] >= 0, `${k} must be a non-negative integer: ${s[k]}`);
  }
  assert.equal(typeof s.pool, 'object', 'pool');
  assert.equal(typeof s.pool.used, 'boolean', 'pool.used');
  assert.ok(Number.isInteger(s.pool.workers) && s.pool.workers >= 0, 'pool.workers');
  // Files go through external filters (main thread) or the pool, when it is used.
  assert.ok(Number.isInteger(s.filters?.files) && s.filters.files >= 0, 'filters.files');
  assert.ok(Array.isArray(s.filters.failed), 'filters.failed');
  assert.equal(s.pool.files, s.pool.used ? s.files - s.filters.files : 0, 'pool.files');
  assert.ok(['libdeflate', 'zlib'].includes(s.inflater), `inflater: ${s.inflater}`);
  assert.equal(typeof s.openat2, 'boolean', 'openat2');
  assert.ok(Array.isArray(s.collisions), 'collisions');
  for (const k of ['plan', 'write', 'index', 'total']) {
    const v = s.timings?.[k];
    assert.ok(typeof v === 'number' && Number.isFinite(v) && v >= 0, `timings.${k}: ${v}`);
    if (k !== 'total') assert.ok(s.timings.total + 1 >= v, `timings.total < timings.${k}`);
  }
}

/**
 * The Summary must describe what git checked out; with explicit `workers` and `threshold` in
 * `opts`, the pool rule is checked too (used iff workers > 1 and files > threshold).
 */
export function assertSummary(s, oracle, opts = {}) {
  assertSummaryShape(s);
  assert.equal(s.commit, oracle.commit, 'summary.commit');
  assert.equal(s.tree, oracle.tree, 'summary.tree');
  assert.equal(s.ref, oracle.symbolicRef, 'summary.ref');
  assert.equal(s.detached, oracle.symbolicRef === null, 'summary.detached');
  assert.equal(s.entries, oracle.entries, 'summary.entries (index entries)');
  assert.equal(s.files, oracle.files, 'summary.files (regular files)');
  assert.equal(s.symlinks, oracle.symlinks, 'summary.symlinks');
  assert.equal(s.gitlinks, oracle.gitlinks, 'summary.gitlinks');
  assert.ok(
    s.bytes === oracle.fileBytes || s.bytes === oracle.fileBytes + oracle.symlinkBytes,
    `summary.bytes ${s.bytes}: expected the regular files' ${oracle.fileBytes} bytes` +
      ` (or ${oracle.fileBytes + oracle.symlinkBytes} with symlink targets)`,
  );
  assert.deepEqual(s.collisions, [], 'summary.collisions on a case-sensitive filesystem');
  if (opts.threshold !== undefined) assert.equal(s.threshold, opts.threshold, 'summary.threshold');
  if (opts.workers !== undefined && opts.threshold !== undefined) {
    assertPoolRule(s, opts.workers, opts.threshold);
  }
}

/**
 * pool.used iff workers > 1 and the files not filtered by external drivers are more than the
 * threshold; then 1 ≤ pool.workers ≤ workers.
 */
export function assertPoolRule(s, workers, threshold) {
  const expected = workers > 1 && s.files - (s.filters?.files ?? 0) > threshold;
  assert.equal(
    s.pool.used,
    expected,
    `pool.used with workers=${workers}, threshold=${threshold}, files=${s.files}`,
  );
  if (s.pool.used) {
    assert.ok(
      s.pool.workers >= 1 && s.pool.workers <= workers,
      `pool.workers ${s.pool.workers} not in [1, ${workers}]`,
    );
  }
}

/**
 * Fresh clone of `src`, `checkout(dir, opts)`, then everything above: the result must equal
 * git's checkout of `opts.ref` and the summary must describe it. Returns { dir, summary, oracle }.
 */
export async function checkoutMatchesGit(checkout, src, opts = {}, { method = 'clone' } = {}) {
  const dir = freshClone(src, { method });
  const summary = await checkout(dir, opts);
  const oracle = assertMatchesGit(dir, src, { ref: opts.ref, method });
  assertSummary(summary, oracle, opts);
  return { dir, summary, oracle };
}
