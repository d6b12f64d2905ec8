/**
 * The planner's probe list: the worktree paths a plan looks at, gathered row by row and sent as
 * one batch (see probe.ts).
 */
import { STAT_WORDS } from '../index/write.js';
import { KIND_ABSENT, type ProbeRequest, type ProbeResult } from './probe.js';
import type { CurrentIndex } from './plan.js';

/**
 * The probe list: paths to look at, each either an index entry (compared with its stat data)
 * or a bare path. Built into flat arrays in one pass once complete.
 */
export class ProbeList {
  private readonly entries: number[] = []; // index entry, or -1 for a bare path
  private readonly bare: Buffer[] = [];
  /** Set by addAll: entries 0 … whole - 1 in order, nothing else. */
  private whole = 0;

  /** Every entry of an index of `count` entries, slot k for entry k. */
  addAll(count: number): void {
    this.whole = count;
  }

  addEntry(i: number): number {
    this.entries.push(i);
    return this.entries.length - 1;
  }

  addPath(path: Buffer): number {
    this.entries.push(-1 - this.bare.length);
    this.bare.push(path);
    return this.entries.length - 1;
  }

  get size(): number {
    return this.whole + this.entries.length;
  }

  request(
    root: string,
    index: CurrentIndex | null,
    racySeconds: number,
    fileMode: boolean,
    threads: number,
  ): ProbeRequest {
    const n = this.size;
    const list = index?.entries;
    const all = this.whole > 0 || (this.bare.length === 0 && this.entries[n - 1] === n - 1);
    if (list && n === list.count && all) {
      // Every index entry in order (a restore, a forced checkout): the index's own arrays.
      return {
        root,
        paths: list.paths.subarray(0, list.starts[n]!),
        starts: list.starts.subarray(0, n + 1),
        compare: new Uint8Array(n).fill(1),
        modes: list.modes.subarray(0, n),
        oids: list.oids.subarray(0, 20 * n),
        stats: index!.stats.subarray(0, n * STAT_WORDS),
        racySeconds,
        fileMode,
        threads,
      };
    }
    let bytes = 0;
    for (const e of this.entries)
      bytes += e >= 0 ? list!.starts[e + 1]! - list!.starts[e]! : this.bare[-1 - e]!.length + 1;
    const paths = Buffer.allocUnsafe(bytes);
    const starts = new Uint32Array(n + 1);
    const compare = new Uint8Array(n);
    const modes = new Uint32Array(n);
    const oids = Buffer.alloc(20 * n);
    const stats = new Uint32Array(n * STAT_WORDS);
    let pos = 0;
    for (let k = 0; k < n;) {
      const e = this.entries[k]!;
      if (e < 0) {
        starts[k] = pos;
        pos += this.bare[-1 - e]!.copy(paths, pos);
        paths[pos++] = 0;
        k++;
        continue;
      }
      // A run of consecutive index entries (a restore is one run) is copied in one go.
      let end = k + 1;
      while (end < n && this.entries[end] === e + (end - k)) end++;
      const last = e + (end - k);
      for (let j = k; j < end; j++) starts[j] = pos + list!.starts[e + j - k]! - list!.starts[e]!;
      pos += list!.paths.copy(paths, pos, list!.starts[e]!, list!.starts[last]!);
      compare.fill(1, k, end);
      modes.set(list!.modes.subarray(e, last), k);
      list!.oids.copy(oids, 20 * k, 20 * e, 20 * last);
      stats.set(index!.stats.subarray(e * STAT_WORDS, last * STAT_WORDS), k * STAT_WORDS);
      k = end;
    }
    starts[n] = pos;
    const entries = Int32Array.from(this.entries, (e) => (e >= 0 ? e : -1));
    return {
      root,
      paths,
      starts,
      compare,
      modes,
      oids,
      stats,
      racySeconds,
      fileMode,
      threads,
      entries,
    };
  }
}

export const EMPTY_PROBE: ProbeResult = {
  kind: () => KIND_ABSENT,
  clean: new Uint8Array(0),
  hashed: new Uint8Array(0),
  stats: new Uint32Array(0),
};
