/**
 * How the regular files are cut into chunks for the writing threads, and which chunks may not
 * run at once.
 *
 * On a local disk a create costs microseconds, so chunks are runs of pack order of about equal
 * weight and the threads take them in turn. On a network filesystem (and FUSE) every create is
 * a round trip made while the kernel holds the parent directory's lock: writers in one
 * directory queue behind each other whatever their number. There the files are grouped by
 * directory; big directories come first, cut into pieces of which at most `perDir` are written
 * at a time (spread across time, not threads), and small directories are packed together into
 * chunks of their own, so that the threads at any moment are in different directories.
 */
import type { EntryList } from '../plan/entries.js';
import type { FileTask } from '../plan/locate.js';

export interface Schedule {
  chunks: FileTask[][];
  /** Per chunk, its directory group (null: no constraint, plain list order). */
  groups: Uint32Array | null;
  /** With groups: chunks of one group written at a time. */
  perDir: number;
}

// A file costs about as much as inflating and writing this many bytes (syscalls, inode).
const PER_FILE_WEIGHT = 32 * 1024;
const MAX_FILES_PER_CHUNK = 4096;
const SLASH = 0x2f;

/** Splits files (already in pack order) into runs of roughly equal weight. */
export function makeChunks(files: readonly FileTask[], parts: number): FileTask[][] {
  let total = 0;
  for (const f of files) total += f.size + PER_FILE_WEIGHT;
  const target = Math.max(total / Math.max(parts, 1), PER_FILE_WEIGHT);
  const chunks: FileTask[][] = [];
  let current: FileTask[] = [];
  let weight = 0;
  for (const f of files) {
    current.push(f);
    weight += f.size + PER_FILE_WEIGHT;
    if (weight >= target || current.length >= MAX_FILES_PER_CHUNK) {
      chunks.push(current);
      current = [];
      weight = 0;
    }
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** The files grouped by parent directory, groups in order of first appearance (pack order). */
export function byDirectory(entries: EntryList, files: readonly FileTask[]): FileTask[][] {
  const groups = new Map<string, FileTask[]>();
  const { paths, starts } = entries;
  for (const f of files) {
    const start = starts[f.index]!;
    const slash = paths.lastIndexOf(SLASH, starts[f.index + 1]! - 2);
    // latin1: one character per byte, so any path's bytes make a distinct key.
    const dir = slash < start ? '' : paths.toString('latin1', start, slash);
    let group = groups.get(dir);
    if (group === undefined) groups.set(dir, (group = []));
    group.push(f);
  }
  return [...groups.values()];
}

export interface SpreadSettings {
  /** Writing threads. */
  threads: number;
  /** Chunks of one directory written at a time. */
  perDir: number;
}

/**
 * Chunks that keep concurrent creates in different directories: the directories with more
 * files than one piece holds first (largest first: each is written by at most `perDir` threads
 * at a time, so the largest is the longest to finish), cut into pieces that share their
 * directory's group; then the small directories, packed whole into chunks of their own.
 */
export function spreadByDirectory(
  entries: EntryList,
  files: readonly FileTask[],
  settings: SpreadSettings,
): Schedule {
  const threads = Math.max(settings.threads, 1);
  // Pieces small enough that a directory's share and the threads' balance stay fine-grained,
  // large enough that a big tree is not thousands of requests more than its chunks would be.
  const piece = Math.min(32, Math.max(2, Math.round(files.length / (threads * 8))));
  const dirs = byDirectory(entries, files);
  const big = dirs.filter((d) => d.length > piece).sort((a, b) => b.length - a.length);
  const chunks: FileTask[][] = [];
  const groups: number[] = [];
  for (const dir of big) {
    const group = chunks.length; // below the number of chunks, as the writer requires
    for (let at = 0; at < dir.length; at += piece) {
      chunks.push(dir.slice(at, at + piece));
      groups.push(group);
    }
  }
  let current: FileTask[] = [];
  const flush = (): void => {
    if (current.length === 0) return;
    groups.push(chunks.length); // a group of its own: no other chunk has its directories
    chunks.push(current);
    current = [];
  };
  for (const dir of dirs) {
    if (dir.length > piece) continue;
    if (current.length + dir.length > piece) flush();
    current.push(...dir);
  }
  flush();
  return { chunks, groups: Uint32Array.from(groups), perDir: Math.max(1, settings.perDir) };
}

/**
 * Directory paths of one depth reordered so that neighbours have different parents: the
 * threads making them take neighbouring paths, and siblings would wait for the parent's lock.
 */
export function interleaveByParent(dirs: readonly string[]): string[] {
  const byParent = new Map<string, string[]>();
  for (const dir of dirs) {
    const slash = dir.lastIndexOf('/');
    const parent = slash < 0 ? '' : dir.slice(0, slash);
    let list = byParent.get(parent);
    if (list === undefined) byParent.set(parent, (list = []));
    list.push(dir);
  }
  const out: string[] = [];
  let live = [...byParent.values()];
  for (let round = 0; live.length > 0; round++) {
    for (const list of live) out.push(list[round]!);
    live = live.filter((list) => list.length > round + 1);
  }
  return out;
}
