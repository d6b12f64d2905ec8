import { EXPECTED_LAYOUT, loadAddon, type NativeRows } from '../addon.js';
import type { EntryList } from './entries.js';

/** The planner's join (its layout is the addon's: see NativeRows). */
export type Rows = NativeRows;

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
