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

/** The link extension's delete and replace bitmaps, each a list of shared entries' positions. */
function readBitmaps(
  link: Buffer,
  path: string,
  nb: number,
): { deleted: number[]; replaced: number[] } {
  if (link.length <= HASH) return { deleted: [], replaced: [] };
  const d = readEwah(link, HASH, link.length, nb);
  const r = d && readEwah(link, d.end, link.length, nb);
  if (!d || !r) throw corrupt(path, 'the link extension has a malformed bitmap');
  if (r.end !== link.length) throw corrupt(path, 'garbage at the end of the link extension');
  return { deleted: d.bits, replaced: r.bits };
}

/** The index file's entries: a name for each added one, none for each replacement. */
function checkNames(main: IndexFile, replacements: number, path: string): void {
  const nm = main.entries.count;
  if (replacements > nm) {
    throw corrupt(path, `it replaces ${replacements} shared entries but holds ${nm} entries`);
  }
  for (let k = 0; k < nm; k++) {
    const empty = main.entries.starts[k + 1]! - main.entries.starts[k]! === 1;
    if (k < replacements && !empty) {
      throw corrupt(path, `entry ${k} replaces a shared entry, and should have no name`);
    }
    if (k >= replacements && empty) throw corrupt(path, `entry ${k} has an empty path`);
  }
}

/**
 * What becomes of each shared entry — `action[j]`: -1 kept, -2 gone, k >= 0 replaced by main's
 * entry k — and, by shared position, main's added entries that go before it (sorted as git
 * writes them; the same path at the same stage replaces the shared entry, a merged entry every
 * stage).
 */
function planMerge(
  main: IndexFile,
  shared: IndexFile | null,
  { deleted, replaced }: { deleted: number[]; replaced: number[] },
  path: string,
): { action: Int32Array; before: Map<number, number[]> } {
  const nb = shared?.entries.count ?? 0;
  const action = new Int32Array(nb).fill(-1);
  replaced.forEach((j, k) => (action[j] = k));
  for (const j of deleted) action[j] = -2;
  const before = new Map<number, number[]>();
  for (let k = replaced.length; k < main.entries.count; k++) {
    if (k > replaced.length && compare(main, k - 1, main, k) >= 0) {
      throw corrupt(path, `entries ${k - 1} and ${k} are not sorted by path`);
    }
    if (shared === null) continue;
    const at = lowerBound(shared, main, k);
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
  return { action, before };
}

/** The merged entries' arrays, filled in index order by runs of one file or the other. */
class MergedEntries {
  readonly paths: Buffer;
  readonly starts: Uint32Array;
  readonly oids: Buffer;
  readonly modes: Uint32Array;
  readonly stats: Uint32Array;
  readonly stages: Uint8Array;
  readonly extFlags: Uint16Array;
  readonly assumeValid: Uint8Array;
  private n = 0;
  private pos = 0;

  constructor(
    readonly count: number,
    pathBytes: number,
  ) {
    this.paths = Buffer.allocUnsafe(pathBytes);
    this.starts = new Uint32Array(count + 1);
    this.oids = Buffer.allocUnsafe(20 * count);
    this.modes = new Uint32Array(count);
    this.stats = new Uint32Array(count * STAT_WORDS);
    this.stages = new Uint8Array(count);
    this.extFlags = new Uint16Array(count);
    this.assumeValid = new Uint8Array(count);
  }

  /** Entries from..to of `file`, with their own names, in one copy per array. */
  copyRun(file: IndexFile, from: number, to: number): void {
    if (to <= from) return;
    const e = file.entries;
    const base = e.starts[from]!;
    const { n } = this;
    for (let t = 0; t < to - from; t++) this.starts[n + t] = e.starts[from + t]! - base + this.pos;
    this.pos += e.paths.copy(this.paths, this.pos, base, e.starts[to]!);
    e.oids.copy(this.oids, 20 * n, 20 * from, 20 * to);
    this.modes.set(e.modes.subarray(from, to), n);
    this.stats.set(file.stats.subarray(from * STAT_WORDS, to * STAT_WORDS), n * STAT_WORDS);
    this.stages.set(file.stages.subarray(from, to), n);
    this.extFlags.set(file.extFlags.subarray(from, to), n);
    this.assumeValid.set(file.assumeValid.subarray(from, to), n);
    this.n += to - from;
  }

  /** One entry copied with another name (a replacement takes the shared entry's). */
  copyRenamed(file: IndexFile, k: number, name: Buffer): void {
    const saved = this.pos;
    this.copyRun(file, k, k + 1);
    this.pos = saved;
    this.starts[this.n - 1] = this.pos;
    this.pos += name.copy(this.paths, this.pos);
    this.paths[this.pos++] = 0;
  }

  finish(): EntryList {
    this.starts[this.count] = this.pos;
    const { count, paths, oids, modes, starts } = this;
    return new EntryList({ count, paths, oids, modes, starts });
  }
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
  const nb = shared?.entries.count ?? 0;
  const nm = main.entries.count;
  const bitmaps = readBitmaps(link, path, nb);
  const replacements = bitmaps.replaced.length;
  checkNames(main, replacements, path);
  const { action, before } = planMerge(main, shared, bitmaps, path);

  let count = nm - replacements;
  let pathBytes = main.entries.starts[nm]! - main.entries.starts[replacements]!;
  for (let j = 0; j < nb; j++) {
    if (action[j] === -2) continue;
    count++;
    pathBytes += shared!.entries.starts[j + 1]! - shared!.entries.starts[j]!;
  }
  const out = new MergedEntries(count, pathBytes);
  /** Main's entry k, named as shared entry j (its own name when j < 0). */
  const copyMain = (k: number, j: number): void => {
    const named = j < 0 ? main.entries : shared!.entries;
    const at = j < 0 ? k : j;
    const name = named.paths.subarray(named.starts[at]!, named.starts[at + 1]! - 1);
    const problem = checkEntry(main.entries.modes[k]!, name, main.extFlags[k]!, main.stages[k]!);
    if (problem !== '') throw corrupt(path, `entry ${k} ${problem}`);
    if (j < 0) out.copyRun(main, k, k + 1);
    else out.copyRenamed(main, k, name);
  };
  const insertBefore = (j: number): void => {
    for (const k of before.get(j) ?? []) copyMain(k, -1);
  };
  let run = 0; // the first shared entry not yet copied or skipped
  for (let j = 0; j < nb; j++) {
    if (action[j] === -1 && !before.has(j)) continue;
    out.copyRun(shared!, run, j);
    insertBefore(j);
    if (action[j]! >= 0) copyMain(action[j]!, j);
    else if (action[j] === -1) out.copyRun(shared!, j, j + 1);
    run = j + 1;
  }
  out.copyRun(shared!, run, nb);
  if (shared === null) for (let k = replacements; k < nm; k++) copyMain(k, -1);
  else insertBefore(nb);

  let unmerged = false;
  let sparseDirs = 0;
  for (let i = 0; i < count; i++) {
    if (out.stages[i] !== 0) unmerged = true;
    if (out.modes[i] === 0o040000) sparseDirs++;
  }
  return {
    version: main.version,
    entries: out.finish(),
    stats: out.stats,
    stages: out.stages,
    extFlags: out.extFlags,
    assumeValid: out.assumeValid,
    mtime: main.mtime,
    extensions: main.extensions,
    unmerged,
    raw: main.raw,
    offsets: new Uint32Array(0),
    sparse: main.sparse || sparseDirs > 0,
    sparseDirs,
    split: { oid: Buffer.from(link.subarray(0, HASH)), path: sharedPath, shared },
  };
}
