/**
 * The planner's row work in the addon (native/binding/rows.cc over native/plan/): the join of
 * the index, HEAD's tree and the target tree, the result list gathered from them, the
 * directories its entries need.
 */

/** A sorted path list as the native join reads it: path k is paths[starts[k], starts[k+1] - 1). */
export interface NativePathList {
  paths: Buffer;
  starts: Uint32Array;
  count: number;
  oids: Buffer;
  modes: Uint32Array;
}

/**
 * The union of the paths of the current index (I), the tree HEAD points at (H) and the target
 * tree (M), in index order: one row per path with the position of the path in each list (-1
 * where it is absent). Unmerged index entries (stages 1–3) collapse into one row.
 */
export interface NativeRows {
  count: number;
  i: Int32Array;
  h: Int32Array;
  m: Int32Array;
  /** 1 where the index has the path only as unmerged stages. */
  unmerged: Uint8Array;
  /** Per row, layout.sameEntry bits: which of its entries have the same mode and id. */
  same: Uint8Array;
}

export interface RowsExports {
  /**
   * The planner's join of the index, HEAD's tree and the target tree (see plan/rows.ts): one
   * row per path, its position in each list or -1; an index path's stages form one row.
   */
  joinRows(
    index: NativePathList | null,
    stages: Uint8Array | null,
    head: NativePathList | null,
    target: NativePathList | null,
  ): NativeRows;
  /**
   * The planner's result: entry k is entry idx[k] of the index (src 0) or the target (src 1);
   * null when that is one of the lists whole and in order; 1 when it holds, entry for entry,
   * what the target holds (kept entries of the index that are the target's: the target is the
   * result, not a copy of it).
   */
  gatherEntries(
    index: NativePathList | null,
    target: NativePathList | null,
    src: Uint8Array,
    idx: Int32Array,
  ): NativePathList | null | 1;
  /**
   * The stat data of that result, STAT_WORDS a position: none for entries from the target or
   * written; the probe's fresh words (`fresh`, by slot) where freshSlot >= 0; else the old
   * index's, the size zeroed where smudge is 1.
   */
  gatherStats(
    result: {
      src: Uint8Array;
      idx: Int32Array;
      write: Uint8Array;
      freshSlot: Int32Array;
      smudge: Uint8Array;
    },
    old: Uint32Array,
    fresh: Uint32Array,
  ): Uint32Array;
  /** `count` zeroed stat records (STAT_WORDS words each), in memory of huge pages when large. */
  newStats(count: number): Uint32Array;
  /**
   * The directories of a list's entries (those with select[k] 1; null: all) and all their
   * ancestors, each once, parents first: NUL-terminated names.
   */
  dirsOf(list: NativePathList, select: Uint8Array | null): Buffer;
  /**
   * The rows a switch decides one by one: all but those whose index entry is merged, the same
   * as HEAD's and the target's, and not racy (mtime seconds below racySeconds; 0: none racy).
   */
  rowsToDecide(
    rows: Pick<NativeRows, 'i' | 'unmerged' | 'same'>,
    stats: Uint32Array,
    racySeconds: number,
  ): Int32Array;
}
