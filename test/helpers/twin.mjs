// The oracle for incremental checkouts: twins.
//
// Two identical copies of a source repository are checked out (by git) at the same commit, the
// same local changes are applied to both, then git runs in one (`git checkout <ref>`,
// `git checkout -f [<ref>]`, `git checkout-index -a -f -u`) and pcheckout in the other.
// Everything must come out the same: the worktree (types, permissions, bytes, link targets),
// the index entries and their flags (`ls-files -s -v`), HEAD, .git/MERGE_HEAD, what
// `git status --ignored` says — or, when git refuses, pcheckout must refuse too with the same
// paths and git's headlines, and leave its twin exactly as it was (worktree with inodes, index
// bytes, HEAD). Without local changes (and after any restore) `git diff-files` must be clean
// before anything refreshes the index.
//
// The "summary" of a run is checked against what the two indexes and the worktree before imply:
// - written entries: for a switch, the entries of the new index that are absent from the old one
//   or differ in mode or object id; with force, also those whose worktree differed from the
//   index (they are reset); for a restore, the entries whose worktree differed from the index.
//   Entries with the skip-worktree bit afterwards (sparse checkout) are never written.
//   `files`, `symlinks` and `gitlinks` are these counts, by kind; `created + updated` is their
//   sum. Whether a changed type at one path counts as created or updated is left open; only
//   lower bounds are checked: a written path that was neither in the old index nor on disk
//   is created, one that was in the old index and on disk with the same kind is updated.
// - `deleted` lies between the old-index entries that are gone from the new index and were on
//   disk, and all old-index entries that are gone (0 for a restore).
// - unchanged entries keep their inode (same mode and blob in both commits, not locally
//   modified; for a restore: the entries whose worktree matched the index).

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { assertCacheTreeLike } from './cache-tree.mjs';
import { assertPoolRule, assertSummaryShape } from './compare.mjs';
import {
  Repo,
  cachedFixture,
  editLines,
  fakeCommitId,
  git,
  gitTry,
  prng,
  textLines,
  tmpPath,
} from './git.mjs';

const THIS_FILE_SOURCE = fs.readFileSync(new URL(import.meta.url), 'utf8');

// ---------------------------------------------------------------------------------------------
// Twins

/** A copy of `src`'s .git (refs, objects, config exactly as in the source; no index) checked
 * out by git at `at` into a new directory. */
export function cloneAt(src, at, prefix = 'twin') {
  const srcDir = typeof src === 'string' ? src : src.dir;
  const dir = tmpPath(prefix);
  fs.mkdirSync(dir);
  const srcGit = path.join(srcDir, '.git');
  const skip = new Set(['index', 'index.lock', 'hooks'].map((f) => path.join(srcGit, f)));
  fs.cpSync(srcGit, path.join(dir, '.git'), {
    recursive: true,
    verbatimSymlinks: true,
    filter: (p) => !skip.has(p),
  });
  git(dir, ['checkout', '-q', '-f', at, '--']);
  return dir;
}

/**
 * Two identical worktrees of `src` at `at`, with `mutate(dir)` applied to both:
 * { git: dir for git, pc: dir for pcheckout }.
 */
export async function makeTwins(src, { at = 'HEAD', mutate } = {}) {
  const twins = { git: cloneAt(src, at, 'twin-git'), pc: cloneAt(src, at, 'twin-pc') };
  if (mutate) {
    await mutate(twins.git);
    await mutate(twins.pc);
  }
  return twins;
}

// ---------------------------------------------------------------------------------------------
// Observations

/**
 * lstat every path under `dir` except the top-level .git, without following symlinks:
 * Map(rel → { type, perm, size, target, sha, ino }); `sha` hashes a regular file's content.
 */
export function worktreeSnapshot(dir) {
  const out = new Map();
  const walk = (rel) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      if (!rel && name === '.git') continue;
      const r = rel ? `${rel}/${name}` : name;
      const abs = path.join(dir, r);
      const st = fs.lstatSync(abs);
      const e = { type: 'other', perm: st.mode & 0o777, ino: st.ino };
      if (st.isSymbolicLink()) {
        e.type = 'symlink';
        e.target = fs.readlinkSync(abs);
        delete e.perm;
      } else if (st.isDirectory()) {
        e.type = 'dir';
      } else if (st.isFile()) {
        e.type = 'file';
        e.size = st.size;
        e.sha = crypto.createHash('sha1').update(fs.readFileSync(abs)).digest('hex');
      }
      out.set(r, e);
      if (e.type === 'dir') walk(r);
    }
  };
  walk('');
  return out;
}

function describeEntry(e) {
  if (!e) return 'absent';
  if (e.type === 'symlink') return `symlink -> ${JSON.stringify(e.target)}`;
  if (e.type === 'file') return `file ${e.perm.toString(8)} ${e.size} bytes sha1 ${e.sha}`;
  return `${e.type} ${e.perm.toString(8)}`;
}

/** The two snapshots describe the same tree (inodes aside). */
export function assertSameSnapshot(actual, expected, what) {
  const problems = [];
  for (const p of new Set([...expected.keys(), ...actual.keys()])) {
    const a = describeEntry(actual.get(p));
    const e = describeEntry(expected.get(p));
    if (a !== e) problems.push(`${p}: ${a}; expected ${e}`);
  }
  if (problems.length > 0) {
    const shown = problems.slice(0, 30).join('\n  ');
    assert.fail(`${what}: ${problems.length} difference(s)\n  ${shown}`);
  }
}

/**
 * `git ls-files -s -v` (one call): { text, entries: Map(path → [{ tag, mode, oid, stage }]) }
 * (several stages when unmerged). `text` is compared between twins as is. The skip-worktree
 * bits are the index file's: git 2.39 otherwise clears, as it reads the index, the bit of
 * every entry whose file is present (sparse.expectFilesOutsideOfPatterns=false, the default).
 */
export function readIndex(dir) {
  const text = git(dir, [
    '-c',
    'sparse.expectFilesOutsideOfPatterns=true',
    'ls-files',
    '-s',
    '-v',
    '-z',
  ]);
  const entries = new Map();
  for (const line of text.split('\0')) {
    if (!line) continue;
    const m = /^(\S) (\d+) ([0-9a-f]+) (\d)\t(.*)$/s.exec(line);
    assert.ok(m, `cannot parse ls-files -s -v line ${JSON.stringify(line)}`);
    const list = entries.get(m[5]) ?? [];
    list.push({ tag: m[1], mode: m[2], oid: m[3], stage: Number(m[4]) });
    entries.set(m[5], list);
  }
  return { text, entries };
}

function nameList(dir, args) {
  return git(dir, args).split('\0').filter(Boolean);
}

function kindOfMode(mode) {
  if (mode === '120000') return 'symlink';
  if (mode === '160000') return 'gitlink';
  return 'file';
}

function kindOnDisk(e) {
  if (!e) return null;
  if (e.type === 'symlink') return 'symlink';
  if (e.type === 'dir') return 'gitlink';
  return e.type;
}

function readOrNull(file) {
  return fs.existsSync(file) ? fs.readFileSync(file).toString('base64') : null;
}

/** Everything a refused checkout must leave alone: worktree (with inodes), index, HEAD. */
function untouchedState(dir) {
  const snap = worktreeSnapshot(dir);
  return {
    worktree: [...snap].map(([p, e]) => `${p}: ${describeEntry(e)} ino ${e.ino}`),
    index: readOrNull(path.join(dir, '.git', 'index')),
    indexLock: fs.existsSync(path.join(dir, '.git', 'index.lock')),
    head: readOrNull(path.join(dir, '.git', 'HEAD')),
    mergeHead: readOrNull(path.join(dir, '.git', 'MERGE_HEAD')),
  };
}

/** HEAD (one git call): { file, symbolic: 'refs/heads/x' | null, commit, tree }. */
export function headOf(dir) {
  const [commit, tree, name] = git(dir, [
    'rev-parse',
    'HEAD',
    'HEAD^{tree}',
    '--symbolic-full-name',
    'HEAD',
  ])
    .trim()
    .split('\n');
  return {
    file: fs.readFileSync(path.join(dir, '.git', 'HEAD'), 'utf8'),
    symbolic: name === 'HEAD' ? null : name,
    commit,
    tree,
  };
}

const byBytes = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * What git said when it refused: { headlines, paths (sorted, unique), unmerged }.
 * git prints `error: <headline>:` followed by one tab-indented path per line.
 */
export function parseGitRefusal(stderr) {
  const headlines = [];
  const paths = new Set();
  let inList = false;
  for (const line of stderr.split('\n')) {
    const m = /^error: (.*):$/.exec(line);
    if (m) {
      headlines.push(m[1]);
      inList = true;
    } else if (inList && line.startsWith('\t')) {
      paths.add(line.slice(1));
    } else {
      inList = false;
    }
  }
  return {
    headlines,
    paths: [...paths].sort(byBytes),
    unmerged: /you need to resolve your current index first/.test(stderr),
  };
}

/**
 * The git command a pcheckout call stands for. A restore also updates the stat data of the
 * entries it writes (`-u`), as pcheckout does, so that `git diff-files` is clean afterwards.
 */
export function gitCommandFor({ ref, force, restore }) {
  if (restore) return ['checkout-index', '-a', '-f', '-u'];
  const args = ['checkout', '-q'];
  if (force) args.push('-f');
  if (ref !== undefined) args.push(ref, '--');
  return args;
}

/**
 * The state of a twin before the run, as git sees it (nothing here writes the index):
 * { hasIndex, index (Map as readIndex), diffFiles (worktree ≠ index), staged (index ≠ HEAD),
 * unmerged }.
 */
export function observeBefore(dir) {
  const hasIndex = fs.existsSync(path.join(dir, '.git', 'index'));
  const { entries: index } = hasIndex ? readIndex(dir) : { entries: new Map() };
  const diffFiles = new Set(hasIndex ? nameList(dir, ['diff-files', '--name-only', '-z']) : []);
  const staged = new Set(
    hasIndex ? nameList(dir, ['diff-index', '--cached', '--name-only', '-z', 'HEAD']) : [],
  );
  const unmerged = [...index.values()].some((l) => l.length > 1 || l[0].stage !== 0);
  return { hasIndex, index, diffFiles, staged, unmerged };
}

// ---------------------------------------------------------------------------------------------
// The comparison

/**
 * Make twins of `src` at `at` (with `mutate` applied to both), then compareTwins. Without a
 * `mutate` (or with `localChanges: false`), git's view of pcheckout's twin must be clean.
 * Returns what compareTwins returns.
 */
export async function compareWithGit(src, { at, mutate, localChanges, ...rest }) {
  const twins = await makeTwins(src, { at, mutate });
  return compareTwins(twins, { ...rest, localChanges: localChanges ?? mutate !== undefined });
}

/**
 * Run git in twins.git and `run(twins.pc)` (the pcheckout call) in the other twin, then compare
 * everything. `op`: { ref, force, restore, workers, threshold } — what the pcheckout call does
 * (the git command is derived from it). `run(dir)` returns the summary or rejects. With
 * `cli: true`, refusals carry only { code, message } (no paths). `localChanges` (default
 * true): whether the twins differ from a clean checkout in any way git would report.
 * `expect`: 'success' (default) or the error code the oracle must lead to (a check on the
 * fixture: git refuses, or the restore is invalid, exactly when the test says so).
 *
 * Returns { twins, git: { status, stdout, stderr } | null, refusal, summary, error, before }.
 */
export async function compareTwins(
  twins,
  { op = {}, run, localChanges = true, cli = false, expect = 'success' },
) {
  const pc = twins.pc;
  const g = twins.git;
  const before = observeBefore(g);
  const snapBefore = worktreeSnapshot(pc);
  const gitSnapBefore = worktreeSnapshot(g);
  const stateBefore = untouchedState(pc);
  const gitStateBefore = untouchedState(g);
  const headFileBefore = fs.readFileSync(path.join(g, '.git', 'HEAD'), 'utf8');
  // Paths whose mode or blob differ between HEAD and the target.
  const changedInTarget =
    op.restore || !before.hasIndex || op.ref === undefined
      ? new Set()
      : new Set(
          nameList(g, ['diff-tree', '-r', '-z', '--no-renames', '--name-only', 'HEAD', op.ref]),
        );

  // What must happen: an error code, or git's result.
  let expectedCode = null;
  let refusal = null;
  let gitResult = null;
  if (op.restore && op.ref !== undefined) expectedCode = 'ERR_INVALID_OPTION';
  else if (op.restore && before.unmerged) expectedCode = 'ERR_UNMERGED';
  else {
    gitResult = gitTry(g, gitCommandFor(op));
    if (gitResult.status !== 0) {
      refusal = parseGitRefusal(gitResult.stderr);
      expectedCode = refusal.unmerged ? 'ERR_UNMERGED' : 'ERR_WOULD_OVERWRITE';
      assert.ok(
        refusal.unmerged || refusal.paths.length > 0,
        `oracle: git refused without listing paths:\n${gitResult.stderr}`,
      );
      assert.deepEqual(untouchedState(g), gitStateBefore, 'oracle: git refused, yet wrote');
    }
  }
  assert.equal(
    expectedCode ?? 'success',
    expect,
    `oracle: the fixture does not lead where the test expects; git: ${gitResult?.stderr ?? '-'}`,
  );

  let summary;
  let error;
  try {
    summary = await run(pc);
  } catch (err) {
    error = err;
  }
  const result = { twins, git: gitResult, refusal, summary, error, before };

  if (expectedCode) {
    assert.ok(
      error,
      `expected ${expectedCode} (git: ${gitResult?.stderr ?? '-'}), but pcheckout succeeded: ` +
        JSON.stringify(summary),
    );
    assert.equal(error.code, expectedCode, `error code (message: ${error.message})`);
    if (!cli) assert.equal(error.name, 'PcheckoutError', 'error class');
    if (expectedCode === 'ERR_WOULD_OVERWRITE') {
      for (const h of refusal.headlines) {
        assert.ok(error.message.includes(h), `message lacks git's "${h}": ${error.message}`);
      }
      if (!cli) assert.deepEqual(error.paths, refusal.paths, 'err.paths: the paths git lists');
    }
    if (expectedCode === 'ERR_UNMERGED' && !op.restore) {
      assert.match(error.message, /you need to resolve your current index first/);
    }
    assert.deepEqual(untouchedState(pc), stateBefore, 'refused, yet the twin changed');
    return result;
  }

  assert.ok(
    !error,
    `git succeeded (git ${gitCommandFor(op).join(' ')}) but pcheckout failed: ` +
      `${error?.code} ${error?.message}\n${error?.stack ?? ''}`,
  );
  assert.ok(!fs.existsSync(path.join(pc, '.git', 'index.lock')), 'index.lock left behind');
  assert.ok(fs.existsSync(path.join(pc, '.git', 'index')), 'no index written');

  // Worktree.
  const snapAfter = worktreeSnapshot(pc);
  const gitSnapAfter = worktreeSnapshot(g);
  assertSameSnapshot(snapAfter, gitSnapAfter, `worktree differs from git's (${pc} vs ${g})`);

  // Index entries and their flags (ls-files -s -v).
  const index = readIndex(pc);
  const gitIndex = readIndex(g);
  if (index.text !== gitIndex.text) {
    const a = index.text.split('\0');
    const b = gitIndex.text.split('\0');
    assert.fail(
      'git ls-files -s -v differs from git' +
        `\n  only in pcheckout's index: ${JSON.stringify(a.filter((x) => !b.includes(x)))}` +
        `\n  only in git's index: ${JSON.stringify(b.filter((x) => !a.includes(x)))}`,
    );
  }

  // HEAD, and the merge state git clears.
  const head = headOf(pc);
  const gitHead = headOf(g);
  assert.deepEqual(head, gitHead, 'HEAD differs from git');
  if (op.restore) assert.equal(gitHead.file, headFileBefore, 'oracle: checkout-index moved HEAD');
  assert.equal(
    fs.existsSync(path.join(pc, '.git', 'MERGE_HEAD')),
    fs.existsSync(path.join(g, '.git', 'MERGE_HEAD')),
    '.git/MERGE_HEAD kept or removed unlike git',
  );

  // Unchanged entries keep their inode (git keeps them too: checked as oracle sanity).
  if (before.hasIndex) {
    const stable = [];
    for (const [p, list] of before.index) {
      if (list.length > 1 || list[0].stage !== 0) continue;
      if (before.diffFiles.has(p) || !snapBefore.has(p)) continue;
      if (gitIndex.entries.get(p)?.[0]?.tag === 'S') continue; // left the sparse cone
      if (!op.restore && (before.staged.has(p) || changedInTarget.has(p))) continue;
      stable.push(p);
    }
    const moved = (b, a) => stable.filter((p) => b.get(p)?.ino !== a.get(p)?.ino);
    assert.deepEqual(moved(gitSnapBefore, gitSnapAfter), [], 'oracle: git rewrote entries');
    assert.deepEqual(moved(snapBefore, snapAfter), [], 'unchanged entries rewritten (new inode)');
  }

  // Before anything refreshes the index: its stat data must describe the files.
  if (!localChanges || op.restore) {
    for (const [d, who] of [
      [g, 'oracle: git'],
      [pc, 'pcheckout'],
    ]) {
      const df = gitTry(d, ['diff-files', '--name-only']);
      assert.equal(df.status, 0, df.stderr);
      assert.equal(df.stdout, '', `${who}: git diff-files lists entries (stale stat or content)`);
    }
  }

  checkSummary(summary, { op, before, snapBefore, gitSnapAfter, after: gitIndex.entries, head });

  // The cache-tree: what git wrote, where both say a directory is unchanged; git verifies it.
  assertCacheTreeLike(pc, g);

  // Last, as it refreshes the index: git status, ignored files included.
  const status = (d) =>
    git(d, ['status', '--porcelain=v1', '--untracked-files=all', '--ignored', '-z']);
  const st = status(pc);
  assert.equal(st, status(g), 'git status --porcelain --ignored differs from git');
  if (!localChanges) {
    const notIgnored = st.split('\0').filter((l) => l && !l.startsWith('!! '));
    assert.deepEqual(notIgnored, [], 'git status --porcelain is not empty');
  }
  return result;
}

/** The summary of a successful run (see the comment at the top of this file). */
function checkSummary(s, { op, before, snapBefore, gitSnapAfter, after, head }) {
  assertSummaryShape(s);
  const expectedMode = op.restore ? 'restore' : op.force ? 'force' : 'switch';
  assert.equal(s.mode, expectedMode, 'summary.mode');
  for (const k of ['created', 'updated', 'deleted']) {
    assert.ok(Number.isInteger(s[k]) && s[k] >= 0, `summary.${k}: ${s[k]}`);
  }
  if (!op.restore) {
    assert.equal(s.commit, head.commit, 'summary.commit');
    assert.equal(s.tree, head.tree, 'summary.tree');
  }
  assert.equal(s.ref, head.symbolic, 'summary.ref');
  assert.equal(s.detached, head.symbolic === null, 'summary.detached');
  assert.equal(s.entries, after.size, 'summary.entries (index entries)');
  if (op.workers !== undefined) assert.equal(s.workers, op.workers, 'summary.workers');
  if (op.threshold !== undefined) assert.equal(s.threshold, op.threshold, 'summary.threshold');
  if (op.workers !== undefined && op.threshold !== undefined) {
    assertPoolRule(s, op.workers, op.threshold);
  }
  const writtenTotal = s.files + s.symlinks + s.gitlinks;
  assert.equal(s.created + s.updated, writtenTotal, 'created + updated = entries written');

  const afterEntry = (p) => after.get(p)[0];
  const written = expectedWritten({ op, before, after });
  if (written === null) {
    // No index before: what had to be written is what differed on disk.
    const mustWrite = [...after.keys()].filter(
      (p) => describeEntry(snapBefore.get(p)) !== describeEntry(gitSnapAfter.get(p)),
    );
    assert.ok(
      writtenTotal >= mustWrite.length && writtenTotal <= after.size,
      `wrote ${writtenTotal} entries: fewer than the ${mustWrite.length} that differed on ` +
        `disk, or more than the ${after.size} in the index`,
    );
    return;
  }
  const count = (kind) => written.filter((p) => kindOfMode(afterEntry(p).mode) === kind).length;
  assert.deepEqual(
    { files: s.files, symlinks: s.symlinks, gitlinks: s.gitlinks },
    { files: count('file'), symlinks: count('symlink'), gitlinks: count('gitlink') },
    `entries written (expected: ${JSON.stringify(written)})`,
  );

  const oldEntry = (p) => before.index.get(p)?.find((e) => e.stage === 0);
  const createdMin = written.filter((p) => !before.index.has(p) && !snapBefore.has(p)).length;
  const updatedMin = written.filter((p) => {
    const o = op.restore ? afterEntry(p) : oldEntry(p);
    const kind = o && kindOfMode(o.mode);
    return kind === kindOfMode(afterEntry(p).mode) && kindOnDisk(snapBefore.get(p)) === kind;
  }).length;
  assert.ok(s.created >= createdMin, `summary.created ${s.created} < ${createdMin} new paths`);
  assert.ok(s.updated >= updatedMin, `summary.updated ${s.updated} < ${updatedMin} changed`);

  if (op.restore) assert.equal(s.deleted, 0, 'summary.deleted (a restore deletes nothing)');
  else {
    const gone = [...before.index.keys()].filter((p) => !after.has(p));
    const goneOnDisk = gone.filter((p) => snapBefore.has(p)).length;
    assert.ok(
      s.deleted >= goneOnDisk && s.deleted <= gone.length,
      `summary.deleted ${s.deleted} not in [${goneOnDisk}, ${gone.length}]: ${JSON.stringify(gone)}`,
    );
  }

  const fileSize = (p) => gitSnapAfter.get(p)?.size ?? 0;
  const linkBytes = (p) => Buffer.byteLength(gitSnapAfter.get(p)?.target ?? '');
  const maxBytes = written.reduce((n, p) => n + fileSize(p) + linkBytes(p), 0);
  const minBytes = written.filter((p) => !snapBefore.has(p)).reduce((n, p) => n + fileSize(p), 0);
  assert.ok(
    s.bytes >= minBytes && s.bytes <= maxBytes,
    `summary.bytes ${s.bytes} not in [${minBytes}, ${maxBytes}]`,
  );
}

/** The entries a run writes (see the top of this file); null when there was no index. */
export function expectedWritten({ op, before, after }) {
  if (!before.hasIndex) return null;
  const out = [];
  for (const [p, list] of after) {
    const e = list[0];
    if (e.tag === 'S') continue; // skip-worktree (sparse checkout): never written
    if (op.restore) {
      if (before.diffFiles.has(p)) out.push(p);
      continue;
    }
    const old = before.index.get(p);
    const o = old?.find((x) => x.stage === 0);
    const changed = !o || old.length > 1 || o.mode !== e.mode || o.oid !== e.oid;
    // An entry entering the sparse cone (its bit cleared) gets its file.
    const entering = o?.tag === 'S';
    if (changed || entering || (op.force && before.diffFiles.has(p))) out.push(p);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Fixtures

/** The worker matrix: workers 1 and 2 × threshold 0 and 1e9. */
export const WORKER_MATRIX = [
  { workers: 1, threshold: 0 },
  { workers: 1, threshold: 1e9 },
  { workers: 2, threshold: 0 },
  { workers: 2, threshold: 1e9 },
];

/** Files that are the same on both branches of buildSwitchRepo. */
export const KEEP_FILES = Array.from({ length: 24 }, (_, i) => `same/keep-${i}.txt`);

/**
 * Branches A and B (and tags vA, vB annotated) covering every type transition between them,
 * in both directions (A → B listed; B → A is the reverse):
 *   f2d            file → directory (f2d/inner.txt, f2d/sub/deep.txt)
 *   f2l            file → symlink
 *   l2d            symlink (→ same, a directory) → directory whose names exist under same/
 *   f2g            file → gitlink
 *   g2d            gitlink → directory
 *   l2f            symlink → file
 *   blob-f2l       file → symlink with the same blob (only the mode differs)
 *   mode.sh        exec bit only (644 → 755);  both.sh: content and exec bit (755 → 644)
 *   content.txt    content change;  link-retarget: symlink target change
 *   only-a.txt / only-b.txt: on one side only
 *   gone/x/y/z.txt (A) / new/p/q/r.txt (B): nested directories disappearing / appearing
 *   mixed/sub/only-a.txt: a subdirectory disappears while mixed/ stays
 *   deep/a/b/c/d/leaf.txt, deep/a/b/other.txt (A) → deep, a file (B)
 *   ign-gitignore.txt, ign-exclude.txt, ign-excludesfile.txt: B only (ignore tests)
 * Unchanged: KEEP_FILES, same/sub/deeper/k.txt, same/exec.sh, same/link, gitlink-same,
 * README.md, .gitignore ('*.ign' and '/ign-gitignore.txt').
 * Also c1 and c2: branches from A that change content.txt differently (merge conflict).
 * main is B. Packed (gc). Built once, then copied from the fixture cache.
 */
export function buildSwitchRepo(prefix = 'switch') {
  const build = () => makeSwitchRepo('switch');
  return cachedFixture('switch', [THIS_FILE_SOURCE], build, { prefix }).repo;
}

function makeSwitchRepo(prefix) {
  const r = Repo.init(prefix);
  const rand = prng(77);
  r.write('README.md', textLines(rand, 20).join('\n') + '\n');
  r.write('.gitignore', '*.ign\n/ign-gitignore.txt\n');
  for (const f of KEEP_FILES) r.write(f, textLines(rand, 5 + Math.floor(rand() * 40)).join('\n'));
  r.write('same/sub/deeper/k.txt', 'deeper\n');
  r.write('same/exec.sh', '#!/bin/sh\necho same\n', { exec: true });
  r.symlink('same/link', 'keep-0.txt');
  r.gitlink('gitlink-same', fakeCommitId('same'));
  r.write('mixed/stay.txt', 'stays\n');
  const content = textLines(rand, 200);
  r.commit('base');

  // A
  r.write('f2d', 'a file on A\n');
  r.write('f2l', 'a file on A, a symlink on B\n');
  r.symlink('l2d', 'same');
  r.write('f2g', 'a file on A, a gitlink on B\n');
  r.gitlink('g2d', fakeCommitId('g2d'));
  r.symlink('l2f', 'README.md');
  r.write('blob-f2l', 'README.md');
  r.write('mode.sh', '#!/bin/sh\necho mode\n');
  r.write('both.sh', '#!/bin/sh\necho A\n', { exec: true });
  r.write('content.txt', content.join('\n'));
  r.symlink('link-retarget', 'README.md');
  r.write('only-a.txt', 'only on A\n');
  r.write('gone/x/y/z.txt', 'gone on B\n');
  r.write('mixed/sub/only-a.txt', 'only on A\n');
  r.write('deep/a/b/c/d/leaf.txt', 'leaf\n');
  r.write('deep/a/b/other.txt', 'other\n');
  const a = r.commit('A');
  r.branch('A', a);
  r.tag('vA', a, { annotated: true });

  // B (from A)
  for (const p of ['f2d', 'f2l', 'l2d', 'f2g', 'g2d', 'l2f', 'blob-f2l', 'only-a.txt', 'gone']) {
    r.rm(p);
  }
  git(r.dir, ['rm', '-q', '--cached', 'f2g', 'g2d']);
  r.rm('mixed/sub');
  r.rm('deep');
  r.write('f2d/inner.txt', 'inside f2d on B\n');
  r.write('f2d/sub/deep.txt', 'deeper inside f2d on B\n');
  r.symlink('f2l', 'README.md');
  r.write('l2d/keep-0.txt', 'l2d is a directory on B; not same/keep-0.txt\n');
  r.write('l2d/x.txt', 'x\n');
  r.gitlink('f2g', fakeCommitId('f2g'));
  r.write('g2d/file.txt', 'g2d is a directory on B\n');
  r.write('l2f', 'a file on B, a symlink on A\n');
  r.symlink('blob-f2l', 'README.md');
  r.chmod('mode.sh', true);
  r.write('both.sh', '#!/bin/sh\necho B\n');
  r.write('content.txt', editLines(content, rand, { changes: 10 }).join('\n'));
  r.symlink('link-retarget', 'same/keep-1.txt');
  r.write('only-b.txt', 'only on B\n');
  r.write('new/p/q/r.txt', 'new on B\n');
  r.write('deep', 'deep is a file on B\n');
  r.write('ign-gitignore.txt', 'tracked on B\n');
  git(r.dir, ['add', '-f', 'ign-gitignore.txt']);
  r.write('ign-exclude.txt', 'tracked on B\n');
  r.write('ign-excludesfile.txt', 'tracked on B\n');
  const b = r.commit('B');
  r.branch('B', b);
  r.tag('vB', b, { annotated: true });

  // Conflicting branches from A.
  r.switchTo('A');
  r.git('checkout', '-q', '-b', 'c1');
  r.write('content.txt', 'one\n');
  r.commit('c1');
  r.git('checkout', '-q', '-b', 'c2', 'A');
  r.write('content.txt', 'two\n');
  r.commit('c2');
  r.switchTo('main');
  r.git('reset', '-q', '--hard', 'B');
  r.gc();
  return r;
}

/** In `dir`, `git merge c2` from c1: a real conflict in content.txt (unmerged entries). */
export function mergeConflict(dir) {
  const r = gitTry(dir, ['merge', '-q', 'c2']);
  assert.notEqual(r.status, 0, 'merge was expected to conflict');
  assert.match(git(dir, ['ls-files', '-u']), /content\.txt/, 'no unmerged entries');
}
