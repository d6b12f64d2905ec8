/**
 * A split index, written (git's write_locked_index with core.splitIndex, split-index.c's
 * prepare_to_write_split_index): the entries the shared index holds as they are stay there;
 * the index file holds the others — a changed one as a replacement (no name, a bit in the
 * replace bitmap), a new one with its name — a bit in the delete bitmap for each shared entry
 * gone, and the extensions. When more than splitIndex.maxPercentChange of the entries (20% by
 * default) would not be shared, a new shared index is written instead (all the entries, no
 * extensions, named by its checksum), as git does, and the old ones past
 * splitIndex.sharedIndexExpire (two weeks by default) are removed.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { STAT_WORDS } from '../addon.js';
import { PcheckoutError, fromSystem } from '../errors.js';
import { fsyncDir } from '../lock.js';
import { adjustSharedPerm } from '../perms.js';
import { EntryList } from '../plan/entries.js';
import type { GitConfig } from '../repo/config.js';
import { writeEwah } from './ewah.js';
import type { IndexFile } from './read.js';
import type { SplitOrigin } from './split.js';
import { buildIndex, extensionBytes, type BuildIndexOptions } from './write.js';

/** What core.splitIndex and the splitIndex.* settings ask of the index a call writes. */
export interface SplitConfig {
  /** Write the index split (core.splitIndex true, or unset and the index read was split). */
  readonly split: boolean;
  /** splitIndex.maxPercentChange: 0 always writes a new shared index, 100 never. */
  readonly maxPercentChange: number;
  /** splitIndex.sharedIndexExpire as a time in ms (shared indexes as old or older are removed); null: never. */
  readonly expireBefore: number | null;
}

const DEFAULT_PERCENT = 20;
const DAY = 86_400_000;

/**
 * git's config for a split index, read before anything is written (a bad value stops the call
 * there, as git dies on it). A materialized tree's record is never split.
 */
export function splitConfig(
  config: GitConfig,
  current: IndexFile | null,
  materialize: boolean,
  now = Date.now(),
): SplitConfig {
  const wanted = config.getBool('core.splitindex');
  const split = !materialize && (wanted ?? current?.split !== undefined);
  if (split && current?.sparse) {
    // git's tweak_split_index dies the same way on reading such an index.
    throw new PcheckoutError(
      'ERR_UNSUPPORTED',
      'cannot use split index with a sparse index (git refuses it too): set core.splitIndex ' +
        'to false, or index.sparse to false and run `git sparse-checkout reapply`',
    );
  }
  let maxPercentChange = DEFAULT_PERCENT;
  const max = config.getInt('splitindex.maxpercentchange');
  // git: a value outside 0-100 is an error message, and the default is used.
  if (max !== undefined && max >= 0 && max <= 100) maxPercentChange = max;
  return { split, maxPercentChange, expireBefore: expiry(config, now) };
}

const UNITS: Record<string, number> = {
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: DAY,
  week: 7 * DAY,
};

/**
 * splitIndex.sharedIndexExpire, as git's git_config_get_expiry reads it: "now", "never" (or
 * "false"), a relative date ("2.weeks.ago", "3 days ago", months and years by the calendar) or
 * an absolute one; a value that is none of these, or lies in the future, is a config error.
 */
function expiry(config: GitConfig, now: number): number | null {
  const raw = config.get('splitindex.sharedindexexpire');
  const value = (raw ?? '2.weeks.ago').trim().toLowerCase();
  if (value === 'never' || value === 'false') return null;
  if (value === 'now') return now;
  const bad = (): PcheckoutError =>
    new PcheckoutError('ERR_BAD_CONFIG', `Invalid splitIndex.sharedIndexExpire: '${raw}'`);
  const m = /^(\d+)[. ]+(second|minute|hour|day|week|month|year)s?[. ]+ago$/.exec(value);
  if (m) {
    const n = Number(m[1]);
    if (m[2] === 'month' || m[2] === 'year') {
      const d = new Date(now);
      if (m[2] === 'month') d.setMonth(d.getMonth() - n);
      else d.setFullYear(d.getFullYear() - n);
      return d.getTime();
    }
    return now - n * UNITS[m[2]!]!;
  }
  const at = Date.parse(raw ?? '');
  if (Number.isNaN(at) || at > now) throw bad();
  return at;
}

/** The index file and, when one is needed, a new shared index to write before it. */
export interface SplitFiles {
  readonly main: Buffer;
  /** The new shared index (its name: sharedindex.<its checksum>), or null to keep the old. */
  readonly shared: Buffer | null;
  /** The shared index the index file names: the old one's path when it is kept. */
  readonly keptPath: string | null;
}

/** The link extension (signature, size, data). */
function linkExtension(oid: Buffer, deleted: number[], replaced: number[]): Buffer {
  return extensionBytes('link', Buffer.concat([oid, writeEwah(deleted), writeEwah(replaced)]));
}

/** Whether new entry i is shared entry j as it is on disk (name, stage and all). */
function sameEntry(
  entries: EntryList,
  stats: Uint32Array,
  ext: Uint16Array | undefined,
  i: number,
  shared: IndexFile,
  j: number,
): boolean {
  if (shared.stages[j] !== 0 || shared.assumeValid[j] !== 0) return false;
  if ((ext?.[i] ?? 0) !== shared.extFlags[j]) return false;
  if (entries.modes[i] !== shared.entries.modes[j]) return false;
  for (let w = 0; w < STAT_WORDS; w++) {
    if (w !== 6 && stats[i * STAT_WORDS + w] !== shared.stats[j * STAT_WORDS + w]) return false;
  }
  return entries.oids.compare(shared.entries.oids, 20 * j, 20 * j + 20, 20 * i, 20 * i + 20) === 0;
}

/** How the new entries differ from a shared index: by position in each. */
interface SplitDiff {
  /** Shared entries gone. */
  readonly deleted: number[];
  /** Shared entries replaced, and the new entries that replace them (the same order). */
  readonly replacedBase: number[];
  readonly replacedNew: number[];
  /** New entries at paths the shared index lacks. */
  readonly added: number[];
  /** Replacements of another blob or mode: what git counts, with the added, as not shared. */
  readonly changed: number;
}

/** The new entries against the shared index, walked together in index order. */
function diffShared(
  entries: EntryList,
  stats: Uint32Array,
  ext: Uint16Array | undefined,
  shared: IndexFile,
): SplitDiff {
  const diff = {
    deleted: [] as number[],
    replacedBase: [] as number[],
    replacedNew: [] as number[],
  };
  const added: number[] = [];
  let changed = 0;
  const se = shared.entries;
  const n = entries.count;
  const nb = se.count;
  let i = 0;
  let j = 0;
  while (i < n || j < nb) {
    const c =
      i >= n
        ? 1
        : j >= nb
          ? -1
          : entries.paths.compare(
              se.paths,
              se.starts[j]!,
              se.starts[j + 1]! - 1,
              entries.starts[i]!,
              entries.starts[i + 1]! - 1,
            ) || -shared.stages[j]!;
    if (c < 0) added.push(i++);
    else if (c > 0) diff.deleted.push(j++);
    else {
      if (!sameEntry(entries, stats, ext, i, shared, j)) {
        diff.replacedBase.push(j);
        diff.replacedNew.push(i);
        if (
          entries.modes[i] !== se.modes[j] ||
          entries.oids.compare(se.oids, 20 * j, 20 * j + 20, 20 * i, 20 * i + 20) !== 0
        ) {
          changed++;
        }
      }
      i++;
      j++;
    }
  }
  return { ...diff, added, changed };
}

/** The index file's own entries: the replacements (no name) in the shared index's order, then the added. */
function ownEntries(
  entries: EntryList,
  stats: Uint32Array,
  ext: Uint16Array | undefined,
  { replacedNew, added }: SplitDiff,
): { list: EntryList; stats: Uint32Array; extFlags: Uint16Array } {
  const picks = [...replacedNew, ...added];
  const count = picks.length;
  let bytes = 0;
  for (const i of added) bytes += entries.starts[i + 1]! - entries.starts[i]!;
  const paths = Buffer.alloc(replacedNew.length + bytes);
  const starts = new Uint32Array(count + 1);
  const oids = Buffer.allocUnsafe(20 * count);
  const modes = new Uint32Array(count);
  const ownStats = new Uint32Array(count * STAT_WORDS);
  const extFlags = new Uint16Array(count);
  let pos = 0;
  picks.forEach((i, k) => {
    starts[k] = pos;
    if (k < replacedNew.length) pos++;
    else pos += entries.paths.copy(paths, pos, entries.starts[i]!, entries.starts[i + 1]!);
    entries.oids.copy(oids, 20 * k, 20 * i, 20 * i + 20);
    modes[k] = entries.modes[i]!;
    ownStats.set(stats.subarray(i * STAT_WORDS, (i + 1) * STAT_WORDS), k * STAT_WORDS);
    extFlags[k] = ext?.[i] ?? 0;
  });
  starts[count] = pos;
  return { list: new EntryList({ count, paths, oids, modes, starts }), stats: ownStats, extFlags };
}

const NO_ENTRIES = (): EntryList =>
  new EntryList({
    count: 0,
    paths: Buffer.alloc(0),
    oids: Buffer.alloc(0),
    modes: new Uint32Array(0),
  });

/**
 * The files of a split index for `entries` (at stage 0, with `stats`), against the shared
 * index the index read was split with (`origin`; none: a new shared index is written, as
 * when more than splitIndex.maxPercentChange of the entries would not be shared).
 */
export function buildSplitIndex(
  entries: EntryList,
  stats: Uint32Array,
  options: BuildIndexOptions & { extensions: Buffer[] },
  origin: SplitOrigin | undefined,
  config: SplitConfig,
): SplitFiles {
  const shared = origin?.shared ?? null;
  const diff = shared === null ? null : diffShared(entries, stats, options.extFlags, shared);
  const notShared = diff === null ? 0 : diff.added.length + diff.changed;
  const newShared =
    diff === null ||
    config.maxPercentChange === 0 ||
    (config.maxPercentChange < 100 && entries.count * config.maxPercentChange < notShared * 100);
  if (newShared) {
    const file = buildIndex(entries, stats, { ...options, extensions: [] });
    const oid = file.subarray(file.length - 20);
    const main = buildIndex(NO_ENTRIES(), new Uint32Array(0), {
      version: options.version,
      extensions: [linkExtension(oid, [], []), ...options.extensions],
    });
    return { main, shared: file, keptPath: null };
  }
  const own = ownEntries(entries, stats, options.extFlags, diff);
  const main = buildIndex(own.list, own.stats, {
    version: options.version,
    extFlags: own.extFlags,
    extensions: [
      linkExtension(origin!.oid, diff.deleted, diff.replacedBase),
      ...options.extensions,
    ],
  });
  return { main, shared: null, keptPath: origin!.path };
}

/**
 * Writes a new shared index into `gitDir` as git does: a temporary `sharedindex_XXXXXX`, made
 * durable when asked, renamed to `sharedindex.<checksum>`. Returns its path.
 */
export function writeSharedIndex(
  gitDir: string,
  file: Buffer,
  shared: number,
  durable: boolean,
): string {
  const path = join(gitDir, `sharedindex.${file.toString('hex', file.length - 20)}`);
  const temp = join(gitDir, `sharedindex_${randomBytes(4).toString('hex').slice(0, 6)}`);
  let fd: number | undefined;
  try {
    fd = openSync(temp, 'wx', 0o666);
    for (let off = 0; off < file.length;) off += writeSync(fd, file, off, file.length - off);
    if (durable) fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    adjustSharedPerm(temp, shared);
    renameSync(temp, path);
    if (durable) fsyncDir(gitDir);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(temp);
    } catch {
      /* not created, or already renamed */
    }
    throw fromSystem(err, 'write', path);
  }
  return path;
}

/**
 * After an index file naming a new shared index is in place: the other shared indexes in
 * `gitDir` last used (their mtime) at or before `expireBefore` are removed, as git's
 * clean_shared_index_files does; failures are not errors (git only warns).
 */
export function expireSharedIndexes(
  gitDir: string,
  current: string,
  expireBefore: number | null,
): void {
  if (expireBefore === null) return;
  let names: string[];
  try {
    names = readdirSync(gitDir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith('sharedindex.') || join(gitDir, name) === current) continue;
    try {
      if (statSync(join(gitDir, name)).mtimeMs <= expireBefore) unlinkSync(join(gitDir, name));
    } catch {
      /* gone already, or not ours to remove */
    }
  }
}

/** The shared index kept is used again: its mtime says so, so that it does not expire. */
export function freshenSharedIndex(path: string): void {
  try {
    const now = new Date();
    utimesSync(path, now, now);
  } catch {
    /* as git: a failure to freshen is not an error */
  }
}
