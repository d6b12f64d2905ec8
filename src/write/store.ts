/**
 * The store of worktree-ready files (the `store` option; docs/store.md): its directory made,
 * the writer's per-chunk counts added up, and its bound kept. The files themselves — names,
 * imports, inserts, the size check — are native/write/store.h's.
 */
import { lstatSync, readdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NativeStoreCounts, StoreMethodName } from '../addon.js';
import { fromSystem } from '../errors.js';
import { makeDirectories } from '../mkdirs.js';
import type { StoreSettings } from '../settings.js';

/** The layout's version: a store made by another layout sits beside this one, untouched. */
const LAYOUT = 'v1';
/** Bytes the store holds, kept only when it has a bound (approximate between prunes). */
const USAGE = 'usage';
/** A temporary file this old is an insert that was killed. */
const STALE_TEMP_MS = 3600_000;
/** A prune goes this far below the bound, so that the next calls do not each prune again. */
const PRUNE_TO = 0.9;

export interface StoreSummary {
  /** The store's directory as given (resolved). */
  dir: string;
  /**
   * How files moved between the store and the tree: `hardlink` (the link mode), `reflink`
   * (shared extents, no bytes copied), `copy` (copy_file_range) or `write` (read and write,
   * e.g. across filesystems);
   * the slowest used when a filesystem refused a faster one part-way; null when nothing moved.
   */
  method: StoreMethodName | null;
  /** Files taken from the store. */
  imported: number;
  /** Entries added (files the store did not hold), and their bytes. */
  inserted: number;
  insertedBytes: number;
  /** Entries found damaged (size not as recorded): removed, the file written from the pack. */
  repaired: number;
  /** Imports or inserts that failed (those files were written from the pack), and the first reason. */
  failed: number;
  error: string | null;
  /** Entries removed to keep the store under its bound. */
  pruned: number;
}

/** A store ready for a call: its settings and its layout directory (the writer's root). */
export type OpenStore = StoreSettings & { root: string };

/** The store's layout directory, made if missing (a store that cannot be made stops the call). */
export function openStore(settings: StoreSettings): OpenStore {
  const root = join(settings.dir, LAYOUT);
  try {
    makeDirectories(join(root, 'tmp'));
  } catch (err) {
    throw fromSystem(err, 'create the store', settings.dir);
  }
  return { ...settings, root };
}

const METHOD_ORDER: readonly StoreMethodName[] = ['hardlink', 'reflink', 'copy', 'write'];

/** The chunks' counts added up as they arrive. */
export class StoreTally {
  private readonly counts = {
    imported: 0,
    inserted: 0,
    insertedBytes: 0,
    repaired: 0,
    failed: 0,
  };
  private error: string | null = null;
  private method: StoreMethodName | null = null;

  add(c: NativeStoreCounts): void {
    this.counts.imported += c.imported;
    this.counts.inserted += c.inserted;
    this.counts.insertedBytes += c.insertedBytes;
    this.counts.repaired += c.repaired;
    this.counts.failed += c.failed;
    if (this.error === null && c.firstError !== '') this.error = c.firstError;
    if (
      c.method !== null &&
      (this.method === null || METHOD_ORDER.indexOf(c.method) > METHOD_ORDER.indexOf(this.method))
    )
      this.method = c.method;
  }

  /** Bytes added to the store so far. */
  get insertedBytes(): number {
    return this.counts.insertedBytes;
  }

  summary(dir: string, pruned: number): StoreSummary {
    return { dir, method: this.method, ...this.counts, error: this.error, pruned };
  }
}

interface Entry {
  path: string;
  size: number;
  mtimeMs: number;
}

/** Every entry under the layout directory; killed inserts' temporary files removed on the way. */
function listEntries(root: string): Entry[] {
  const entries: Entry[] = [];
  const now = Date.now();
  for (const dir of readdirSync(root)) {
    if (dir === 'tmp') {
      for (const name of readdirSync(join(root, dir))) {
        const p = join(root, dir, name);
        try {
          if (now - lstatSync(p).mtimeMs > STALE_TEMP_MS) unlinkSync(p);
        } catch {
          // Renamed into place or removed by another process meanwhile.
        }
      }
      continue;
    }
    if (!/^[0-9a-f]{2}$/.test(dir)) continue;
    for (const name of readdirSync(join(root, dir))) {
      const p = join(root, dir, name);
      try {
        const st = lstatSync(p);
        if (st.isFile()) entries.push({ path: p, size: st.size, mtimeMs: st.mtimeMs });
      } catch {
        // Removed by another process meanwhile.
      }
    }
  }
  return entries;
}

function readUsage(root: string): number | null {
  try {
    const n = Number(readFileSync(join(root, USAGE), 'latin1').trim());
    return Number.isSafeInteger(n) && n >= 0 ? n : null;
  } catch {
    return null;
  }
}

function writeUsage(root: string, bytes: number): void {
  const tmp = join(root, 'tmp', `${USAGE}.${process.pid}.${Date.now()}`);
  writeFileSync(tmp, `${bytes}\n`);
  renameSync(tmp, join(root, USAGE));
}

/**
 * After a call that added `inserted` bytes: the store's usage brought up to date and, past
 * its bound, the least recently used entries removed (an import refreshes an entry's time at
 * most once an hour) until it is below 0.9 of the bound. Several processes may prune at once:
 * each removes what it listed; the usage is recounted by the next prune. Returns the entries
 * removed.
 */
export function keepBound(root: string, maxBytes: number | null, inserted: number): number {
  if (maxBytes === null) return 0;
  const known = readUsage(root);
  let usage: number;
  let entries: Entry[] | null = null;
  if (known === null) {
    entries = listEntries(root);
    usage = entries.reduce((n, e) => n + e.size, 0);
  } else {
    usage = known + inserted;
  }
  let pruned = 0;
  if (usage > maxBytes) {
    entries ??= listEntries(root);
    entries.sort((a, b) => a.mtimeMs - b.mtimeMs);
    usage = entries.reduce((n, e) => n + e.size, 0);
    const goal = Math.floor(maxBytes * PRUNE_TO);
    for (const e of entries) {
      if (usage <= goal) break;
      try {
        unlinkSync(e.path);
        pruned++;
      } catch {
        // Gone already: another process pruned it.
      }
      usage -= e.size;
    }
  }
  writeUsage(root, usage);
  return pruned;
}
