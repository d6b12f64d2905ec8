/**
 * The worktree side of planning: what is at each path, and whether a tracked file still
 * matches its index entry (git's ie_match_stat, then a content hash where stat data cannot
 * decide). The lstats run as one native batch, spread over native threads above the threshold
 * (as git's preload-index does): no worker start-up and no copying of requests between
 * isolates, which a Piscina task would pay for a job of microseconds per path.
 */
import { createHash } from 'node:crypto';
import { closeSync, readFileSync } from 'node:fs';
import type { WorktreeDir } from '../worktree.js';
import { STAT_ABSENT, STAT_PRESENT, VERDICT_DIRTY, VERDICT_HASH, type Addon } from '../addon.js';
import { STAT_WORDS } from '../index/write.js';
import {
  CRLF_AUTO_CRLF,
  CRLF_AUTO_INPUT,
  type CheckinConversions,
  type Conversion,
} from './conversion.js';

/** What lstat found at a path. */
export const KIND_ABSENT = 0;
export const KIND_FILE = 1;
export const KIND_SYMLINK = 2;
export const KIND_DIR = 3;
export const KIND_OTHER = 4;
/** lstat failed with something other than ENOENT/ENOTDIR (EACCES, EIO, …). */
export const KIND_ERROR = 5;

export interface ProbeRequest {
  root: string;
  /** NUL-terminated relative paths, concatenated. */
  paths: Buffer;
  /** Where each path starts in `paths`; starts[n] is one past the last NUL. */
  starts: Uint32Array;
  /** Per path: 1 = compare with the index entry below, 0 = only report what is there. */
  compare: Uint8Array;
  /** Per path (used where compare = 1): the index entry's mode, id and stat words. */
  modes: Uint32Array;
  oids: Buffer;
  stats: Uint32Array;
  /** The index file's mtime in seconds: entries stamped that second or later are racy. */
  racySeconds: number;
  /** core.filemode: whether the executable bit counts. */
  fileMode: boolean;
  /** core.symlinks: false takes a plain file for a symlink entry (git writes links so). */
  symlinks?: boolean;
  /** Stat data changed (git's whole seconds) means dirty: checkouts git runs without a refresh. */
  statChangeIsDirty?: boolean;
  /** Native threads for the lstat batch. */
  threads: number;
  /** At least this many paths for each of them (absent: the addon's default, for a local disk). */
  perThread?: number;
  /** Per path: the index entry it is compared with (-1: none); absent when path k is entry k. */
  entries?: Int32Array;
}

export interface ProbeResult {
  /** What is at path k: KIND_* (read from the stat data when asked: most are never asked). */
  kind(k: number): number;
  /** Per path: 1 when the worktree matches the index entry (compare = 1 only). */
  clean: Uint8Array;
  /** Per path: 1 when clean was decided by hashing the content (the fresh stat is then good). */
  hashed: Uint8Array;
  /** STAT_WORDS per path, fresh from lstat. */
  stats: Uint32Array;
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;

function kindOf(mode: number): number {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return KIND_FILE;
    case S_IFLNK:
      return KIND_SYMLINK;
    case S_IFDIR:
      return KIND_DIR;
    default:
      return KIND_OTHER;
  }
}

/** git's blob id of `data`. */
export function blobId(data: Buffer): Buffer {
  return createHash('sha1').update(`blob ${data.length}\0`).update(data).digest();
}

function hashLink(wt: WorktreeDir, rel: string): Buffer | undefined {
  const target = wt.readlink(rel);
  return typeof target === 'string' ? undefined : blobId(target);
}

/**
 * The blob id git would give a file through its conversion (git's index_fd with its clean
 * direction, convert_to_git): the whole file read, through its clean filter first (an external
 * driver), then encoding, eol and ident natively, hashed. Undefined when unreadable.
 */
async function hashConverted(
  addon: Addon,
  wt: WorktreeDir,
  rel: string,
  clean: CheckinConversions,
  entry: number,
  c: Conversion,
): Promise<Buffer | undefined> {
  const fd = wt.openRead(rel);
  if (typeof fd === 'string') return undefined;
  let data: Buffer;
  try {
    data = readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
  data = await clean.filtered(entry, c, data);
  const auto = c.crlf === CRLF_AUTO_INPUT || c.crlf === CRLF_AUTO_CRLF;
  const { crlf, ident, identInCore, encoding } = c;
  const out = addon.convertToGit(
    data,
    { crlf, ident, identInCore, encoding },
    auto && clean.indexHasCrlf(entry),
    clean.path(entry),
  );
  return blobId(out.data ?? data);
}

export async function probe(
  addon: Addon,
  req: ProbeRequest,
  wt: WorktreeDir,
  checkin?: CheckinConversions,
): Promise<ProbeResult> {
  const { stats, status, verdict } = addon.statFiles({
    root: req.root,
    paths: req.paths,
    threads: req.threads,
    ...(req.perThread !== undefined ? { perThread: req.perThread } : {}),
    expect: {
      compare: req.compare,
      modes: req.modes,
      stats: req.stats,
      racySeconds: req.racySeconds,
      fileMode: req.fileMode,
      symlinks: req.symlinks ?? true,
      statChangeIsDirty: req.statChangeIsDirty ?? false,
    },
  });
  // No loop over every path here: a one-shot process runs such a loop in V8's interpreter
  // (~8 ms per 78,000 paths); the verdicts that are not "clean" are few and found by the
  // builtin indexOf. A copy of the verdicts is the clean flags (none 0, clean 1: see
  // EXPECTED_LAYOUT) once the dirty and undecided ones are cleared.
  const clean = verdict.slice();
  for (let i = clean.indexOf(VERDICT_DIRTY); i >= 0; i = clean.indexOf(VERDICT_DIRTY, i + 1))
    clean[i] = 0;
  for (let i = clean.indexOf(VERDICT_HASH); i >= 0; i = clean.indexOf(VERDICT_HASH, i + 1)) {
    clean[i] = 0;
    hashCandidates.push(i);
  }
  const hashed = new Uint8Array(status.length);
  const kind = (i: number): number => {
    const st = status[i]!;
    if (st === STAT_PRESENT) return kindOf(stats[i * STAT_WORDS + 6]!);
    return st === STAT_ABSENT ? KIND_ABSENT : KIND_ERROR;
  };
  // Only a hash can tell for these (racy, or times changed but not the size): few, usually.
  if (hashCandidates.length > 0) {
    const { starts } = req;
    const oidOf = (i: number): Buffer => req.oids.subarray(20 * i, 20 * i + 20);
    const matched = (i: number): void => {
      clean[i] = 1;
      hashed[i] = 1;
    };
    const match = (i: number, id: Buffer | undefined): void => {
      if (id !== undefined && id.equals(oidOf(i))) matched(i);
    };
    // Files hashed as they are go to native threads in one batch; links and files with a
    // conversion (attributes, a clean filter) are hashed here.
    const plain: number[] = [];
    // Taken: a clean filter awaited below lets another probe run meanwhile.
    const candidates = hashCandidates.splice(0);
    const entryOf = (i: number): number => (req.entries ? req.entries[i]! : i);
    if (checkin) {
      const files = candidates.filter((i) => entryOf(i) >= 0 && kind(i) !== KIND_SYMLINK);
      checkin.prepare(files.map(entryOf).sort((a, b) => a - b));
    }
    for (const i of candidates) {
      const rel = req.paths.toString('latin1', starts[i]!, starts[i + 1]! - 1);
      const entry = entryOf(i);
      if (kind(i) === KIND_SYMLINK) {
        match(i, hashLink(wt, rel));
        continue;
      }
      const c = checkin && entry >= 0 ? checkin.conversionOf(entry) : null;
      if (c === null) plain.push(i);
      else match(i, await hashConverted(addon, wt, rel, checkin!, entry, c));
    }
    if (plain.length > 0) {
      const paths = Buffer.concat(plain.map((i) => req.paths.subarray(starts[i]!, starts[i + 1]!)));
      const oids = Buffer.concat(plain.map(oidOf));
      const same = wt.sameBlobs(paths, oids, req.threads);
      plain.forEach((i, k) => {
        if (same[k] === 1) matched(i);
      });
    }
  }
  return { kind, clean, hashed, stats };
}

const hashCandidates: number[] = [];
