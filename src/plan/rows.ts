import { EXPECTED_LAYOUT, loadAddon } from '../addon.js';
import type { EntryList } from './entries.js';

/**
 * The union of the paths of the current index (I), the tree HEAD points at (H) and the target
 * tree (M), in index order: one row per path with the position of the path in each list (-1
 * where it is absent). Unmerged index entries (stages 1–3) collapse into one row.
 */
export interface Rows {
  count: number;
  i: Int32Array;
  h: Int32Array;
  m: Int32Array;
  /** 1 where the index has the path only as unmerged stages. */
  unmerged: Uint8Array;
  /** Per row, which of its entries have the same mode and id (SAME_IM, SAME_IH, SAME_HM). */
  same: Uint8Array;
}

/** Bits of Rows.same: index and target, index and HEAD, HEAD and target are the same. */
export const SAME_IM = EXPECTED_LAYOUT.sameEntry.indexTarget;
export const SAME_IH = EXPECTED_LAYOUT.sameEntry.indexHead;
export const SAME_HM = EXPECTED_LAYOUT.sameEntry.headTarget;

export function joinRows(
  index: EntryList | null,
  stages: Uint8Array | null,
  head: EntryList | null,
  target: EntryList | null,
): Rows {
  // The merge itself is native: a Buffer.compare per path and list was ~90 ms of a switch of
  // the Linux tree, calls into C++ one at a time.
  const list = (l: EntryList | null) =>
    l === null || l.count === 0
      ? null
      : { paths: l.paths, starts: l.starts, count: l.count, oids: l.oids, modes: l.modes };
  return loadAddon().joinRows(list(index), stages, list(head), list(target));
}
