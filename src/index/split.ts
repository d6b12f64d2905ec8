/**
 * A split index, read (gitformat-index, "Split index"; git's split-index.c): the index file
 * holds a `link` extension naming a shared index, `sharedindex.<its checksum>` beside it, which
 * holds most entries; the index file's own entries replace some of those (each with an empty
 * name, taking the shared entry's: the replace bitmap says which), the delete bitmap removes
 * others, and the entries after the replacements are added. Merged here into one IndexFile, as
 * git's merge_base_index does, so that everything after reading sees an ordinary index.
 */
import { STAT_WORDS } from '../addon.js';
import { PcheckoutError } from '../errors.js';
import { EntryList } from '../plan/entries.js';
import { readEwah } from './ewah.js';
import type { IndexFile } from './read.js';

const SKIP_WORKTREE = 0x4000;
const HASH = 20;

/** What a split index's entries were merged from, kept for writing it split again. */
export interface SplitOrigin {
  /** The shared index's checksum, as the link extension names it (all zeros: none). */
  readonly oid: Buffer;
  /** Its path, and the entries it holds (null: none, for a link naming no shared index). */
  readonly path: string;
  readonly shared: IndexFile | null;
}

function corrupt(path: string, what: string): PcheckoutError {
  return new PcheckoutError('ERR_CORRUPT_INDEX', `corrupt index file ${path}: ${what}`, { path });
}

/** The shared index's file name for the link extension `link` of the index file at `path`. */
export function sharedIndexName(link: Buffer, path: string): string {
  if (link.length < HASH) throw corrupt(path, 'the link extension is too short');
  return `sharedindex.${link.toString('hex', 0, HASH)}`;
}

/** True for the all-zero id: a link extension that names no shared index. */
export function isNullOid(oid: Buffer): boolean {
  for (const b of oid) if (b !== 0) return false;
  return true;
}

/** Name order, then stage: the index's order. */
function compare(a: IndexFile, i: number, b: IndexFile, j: number): number {
  const ea = a.entries;
  const eb = b.entries;
  const c = ea.paths.compare(
    eb.paths,
    eb.starts[j]!,
    eb.starts[j + 1]! - 1,
    ea.starts[i]!,
    ea.starts[i + 1]! - 1,
  );
  return c !== 0 ? c : a.stages[i]! - b.stages[j]!;
}

/** The first entry of `base` at or after entry `k` of `main` in index order. */
function lowerBound(base: IndexFile, main: IndexFile, k: number): number {
  let lo = 0;
  let hi = base.entries.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(base, mid, main, k) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function sameName(a: IndexFile, i: number, b: IndexFile, j: number): boolean {
  const ea = a.entries;
  const eb = b.entries;
  return (
    ea.paths.compare(
      eb.paths,
      eb.starts[j]!,
      eb.starts[j + 1]!,
      ea.starts[i]!,
      ea.starts[i + 1]!,
    ) === 0
  );
}

/** The checks the native reader makes of each entry, for the index file's own entries. */
function checkEntry(mode: number, name: Buffer, ext: number, stage: number): string {
  if ((mode & 0o170000) === 0o040000) {
    if (mode !== 0o040000) return 'is a directory with an invalid mode';
    if (name[name.length - 1] !== 0x2f) return "is a directory whose path does not end in '/'";
    if ((ext & SKIP_WORKTREE) === 0) return 'is a directory without the skip-worktree bit';
    if (stage !== 0) return `is a directory at stage ${stage}`;
    return '';
  }
  const type = mode & 0o170000;
  if (type !== 0o100000 && type !== 0o120000 && type !== 0o160000) return 'has an invalid mode';
  return '';
}

/**
 * The entries of the split index `main` (read from `path`, its link extension `link`) merged
 * with its shared index `shared` (null when the link names none): git's merge_base_index, with
 * its checks — a replaced entry has no name, an added one has, no bit past the shared index's
 * entries. The IndexFile returned is main's (version, extensions, mtime) with the merged
 * entries; its `raw` is main's file, which `offsets` do not index (an in-place update is not
 * possible), and `split` says where it came from.
 */
export function mergeSplitIndex(
  main: IndexFile,
  link: Buffer,
  path: string,
  sharedPath: string,
  shared: IndexFile | null,
): IndexFile {
  const oid = link.subarray(0, HASH);
  const nb = shared?.entries.count ?? 0;
  let deleted: number[] = [];
  let replaced: number[] = [];
  if (link.length > HASH) {
    const d = readEwah(link, HASH, link.length, nb);
    const r = d && readEwah(link, d.end, link.length, nb);
    if (!d || !r) throw corrupt(path, 'the link extension has a malformed bitmap');
    if (r.end !== link.length) throw corrupt(path, 'garbage at the end of the link extension');
    deleted = d.bits;
    replaced = r.bits;
  }
  const nm = main.entries.count;
  if (replaced.length > nm) {
    throw corrupt(path, `it replaces ${replaced.length} shared entries but holds ${nm} entries`);
  }
  for (let k = 0; k < nm; k++) {
    const empty = main.entries.starts[k + 1]! - main.entries.starts[k]! === 1;
    if (k < replaced.length && !empty) {
      throw corrupt(path, `entry ${k} replaces a shared entry, and should have no name`);
    }
    if (k >= replaced.length && empty) throw corrupt(path, `entry ${k} has an empty path`);
  }

  // Per shared entry: -1 kept, -2 gone, k >= 0 replaced by main's entry k.
  const action = new Int32Array(nb).fill(-1);
  replaced.forEach((j, k) => (action[j] = k));
  for (const j of deleted) action[j] = -2;
  // Main's added entries, sorted as git writes them, each placed before a shared entry.
  const before = new Map<number, number[]>();
  for (let k = replaced.length; k < nm; k++) {
    if (k > replaced.length && compare(main, k - 1, main, k) >= 0) {
      throw corrupt(path, `entries ${k - 1} and ${k} are not sorted by path`);
    }
    if (shared === null) continue;
    const at = lowerBound(shared, main, k);
    // The same path at the same stage is replaced; a merged entry replaces every stage.
    let first = at;
    while (first > 0 && sameName(shared, first - 1, main, k)) first--;
    for (let j = first; j < nb && sameName(shared, j, main, k); j++) {
      if (action[j] === -2) continue;
      if (main.stages[k] === 0 || shared.stages[j] === main.stages[k]) action[j] = -2;
      else if (shared.stages[j] === 0) {
        throw corrupt(path, `entry ${k} is unmerged where the shared index has a merged entry`);
      }
    }
    const list = before.get(at);
    if (list) list.push(k);
    else before.set(at, [k]);
  }

  // The merged entries: where each comes from, then one pass copying.
  let count = nm - replaced.length;
  let pathBytes = 0;
  for (let k = replaced.length; k < nm; k++) {
    pathBytes += main.entries.starts[k + 1]! - main.entries.starts[k]!;
  }
  for (let j = 0; j < nb; j++) {
    if (action[j] === -2) continue;
    count++;
    pathBytes += shared!.entries.starts[j + 1]! - shared!.entries.starts[j]!;
  }
  const paths = Buffer.allocUnsafe(pathBytes);
  const starts = new Uint32Array(count + 1);
  const oids = Buffer.allocUnsafe(20 * count);
  const modes = new Uint32Array(count);
  const stats = new Uint32Array(count * STAT_WORDS);
  const stages = new Uint8Array(count);
  const extFlags = new Uint16Array(count);
  const assumeValid = new Uint8Array(count);
  let n = 0;
  let pos = 0;
  /** Entries from..to of `file` (their own names), in one copy per array. */
  const copyRun = (file: IndexFile, from: number, to: number): void => {
    if (to <= from) return;
    const e = file.entries;
    const base = e.starts[from]!;
    for (let t = 0; t < to - from; t++) starts[n + t] = e.starts[from + t]! - base + pos;
    pos += e.paths.copy(paths, pos, base, e.starts[to]!);
    e.oids.copy(oids, 20 * n, 20 * from, 20 * to);
    modes.set(e.modes.subarray(from, to), n);
    stats.set(file.stats.subarray(from * STAT_WORDS, to * STAT_WORDS), n * STAT_WORDS);
    stages.set(file.stages.subarray(from, to), n);
    extFlags.set(file.extFlags.subarray(from, to), n);
    assumeValid.set(file.assumeValid.subarray(from, to), n);
    n += to - from;
  };
  /** Main's entry k, named as shared entry j (its own name when j < 0). */
  const copyMain = (k: number, j: number): void => {
    const named = j < 0 ? main.entries : shared!.entries;
    const at = j < 0 ? k : j;
    const name = named.paths.subarray(named.starts[at]!, named.starts[at + 1]! - 1);
    const problem = checkEntry(main.entries.modes[k]!, name, main.extFlags[k]!, main.stages[k]!);
    if (problem !== '') throw corrupt(path, `entry ${k} ${problem}`);
    const saved = pos;
    copyRun(main, k, k + 1);
    // The run copied main's (empty) name: put the shared entry's in its place.
    if (j >= 0) {
      pos = saved;
      starts[n - 1] = pos;
      pos += name.copy(paths, pos);
      paths[pos++] = 0;
    }
  };
  const insertBefore = (j: number): void => {
    for (const k of before.get(j) ?? []) copyMain(k, -1);
  };
  let run = 0; // the first shared entry not yet copied or skipped
  for (let j = 0; j < nb; j++) {
    if (action[j] === -1 && !before.has(j)) continue;
    copyRun(shared!, run, j);
    insertBefore(j);
    if (action[j]! >= 0) copyMain(action[j]!, j);
    else if (action[j] === -1) copyRun(shared!, j, j + 1);
    run = j + 1;
  }
  copyRun(shared!, run, nb);
  if (shared === null) for (let k = replaced.length; k < nm; k++) copyMain(k, -1);
  else insertBefore(nb);
  starts[count] = pos;

  let unmerged = false;
  let sparseDirs = 0;
  for (let i = 0; i < count; i++) {
    if (stages[i] !== 0) unmerged = true;
    if (modes[i] === 0o040000) sparseDirs++;
  }
  return {
    version: main.version,
    entries: new EntryList({ count, paths, oids, modes, starts }),
    stats,
    stages,
    extFlags,
    assumeValid,
    mtime: main.mtime,
    extensions: main.extensions,
    unmerged,
    raw: main.raw,
    offsets: new Uint32Array(0),
    sparse: main.sparse || sparseDirs > 0,
    sparseDirs,
    split: { oid: Buffer.from(oid), path: sharedPath, shared },
  };
}
