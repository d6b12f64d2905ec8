import {
  EXPECTED_LAYOUT,
  loadAddon,
  type Addon,
  type NativePathList,
  type NativeRows,
} from '../addon.js';
import { EntryList } from './entries.js';

/** The planner's join (its layout is the addon's: see NativeRows). */
export type Rows = NativeRows;

/** Bits of Rows.same: index and target, index and HEAD, HEAD and target are the same. */
export const SAME_IM = EXPECTED_LAYOUT.sameEntry.indexTarget;
export const SAME_IH = EXPECTED_LAYOUT.sameEntry.indexHead;
export const SAME_HM = EXPECTED_LAYOUT.sameEntry.headTarget;

const nativeList = (l: EntryList | null): NativePathList | null =>
  l === null || l.count === 0
    ? null
    : { paths: l.paths, starts: l.starts, count: l.count, oids: l.oids, modes: l.modes };

export function joinRows(
  index: EntryList | null,
  stages: Uint8Array | null,
  head: EntryList | null,
  target: EntryList | null,
): Rows {
  // The merge itself is native: a Buffer.compare per path and list was ~90 ms of a switch of
  // the Linux tree, calls into C++ one at a time.
  return loadAddon().joinRows(nativeList(index), stages, nativeList(head), nativeList(target));
}

/**
 * The list whose entry k is entry idx[k] of I (src[k] 0) or M (src[k] 1): gathered natively, a
 * copy per run of consecutive entries (a loop per entry here cost ~10 ms of a one-shot switch).
 */
export function gatherEntries(
  src: Uint8Array,
  idx: Int32Array,
  I: EntryList | null,
  M: EntryList | null,
): EntryList {
  if (src.length === 0) {
    return new EntryList({
      count: 0,
      paths: Buffer.alloc(0),
      oids: Buffer.alloc(0),
      modes: new Uint32Array(0),
      starts: new Uint32Array(1),
    });
  }
  const gathered = loadAddon().gatherEntries(nativeList(I), nativeList(M), src, idx);
  if (gathered === null) return src[0] === 0 ? I! : M!; // one of them, whole
  if (gathered === 1) return M!; // the target's entries, some of them taken from the index
  return new EntryList(gathered);
}

/**
 * The rows of a switch to decide one at a time (see NativeRows): the others hold the same
 * entry in the index, HEAD and the target, not racy, and are kept in bulk.
 */
export function rowsToDecide(rows: Rows, stats: Uint32Array, racySeconds: number): Int32Array {
  return loadAddon().rowsToDecide(rows, stats, racySeconds);
}

/**
 * The stat data of a gathered result (see the addon's gatherStats), in memory of huge pages
 * when large: one native pass, as the write phase begins (its writers fill in the rest).
 */
export function gatherStats(
  result: Parameters<Addon['gatherStats']>[0],
  old: Uint32Array,
  fresh: Uint32Array,
): Uint32Array {
  return loadAddon().gatherStats(result, old, fresh);
}

/**
 * The directories the selected entries of a list need (select[k] 1; null: all), each once,
 * parents first, as latin1 names: found natively (a loop per entry here was ~25 ms of a fresh
 * checkout of the Linux tree).
 */
export function dirsOf(list: EntryList, select: Uint8Array | null): string[] {
  if (list.count === 0) return [];
  const names = loadAddon().dirsOf(nativeList(list)!, select).toString('latin1');
  return names === '' ? [] : names.slice(0, -1).split('\0');
}
