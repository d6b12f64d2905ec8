/**
 * A list of entries (a tree walked flat, or an index) in index order. Paths are kept as bytes (git paths need not
 * be UTF-8); `name(i)` gives a byte-preserving latin1 string for keys and fs calls.
 */
export class EntryList {
  readonly count: number;
  readonly paths: Buffer;
  readonly oids: Buffer;
  readonly modes: Uint32Array;
  /** Start of each path in `paths`; starts[count] is one past the last NUL. */
  readonly starts: Uint32Array;

  constructor(list: { count: number; paths: Buffer; oids: Buffer; modes: Uint32Array }) {
    this.count = list.count;
    this.paths = list.paths;
    this.oids = list.oids;
    this.modes = list.modes;
    this.starts = new Uint32Array(list.count + 1);
    let pos = 0;
    for (let i = 0; i < list.count; i++) {
      this.starts[i] = pos;
      pos = list.paths.indexOf(0, pos) + 1;
    }
    this.starts[list.count] = pos;
  }

  /** The path's bytes without its NUL. */
  pathBytes(i: number): Buffer {
    return this.paths.subarray(this.starts[i]!, this.starts[i + 1]! - 1);
  }

  /** The path as a latin1 string: one char per byte, so it round-trips exactly. */
  name(i: number): string {
    return this.paths.toString('latin1', this.starts[i]!, this.starts[i + 1]! - 1);
  }

  /** The path for people to read. */
  display(i: number): string {
    return this.pathBytes(i).toString('utf8');
  }

  oid(i: number): Buffer {
    return this.oids.subarray(20 * i, 20 * i + 20);
  }

  oidHex(i: number): string {
    return this.oids.toString('hex', 20 * i, 20 * i + 20);
  }

  /** The entries whose latin1 name passes `keep`, as a new list. */
  filter(keep: (name: string) => boolean): EntryList {
    const picked: number[] = [];
    let bytes = 0;
    for (let i = 0; i < this.count; i++) {
      if (!keep(this.name(i))) continue;
      picked.push(i);
      bytes += this.starts[i + 1]! - this.starts[i]!;
    }
    const paths = Buffer.allocUnsafe(bytes);
    const oids = Buffer.allocUnsafe(20 * picked.length);
    const modes = new Uint32Array(picked.length);
    let pos = 0;
    picked.forEach((i, k) => {
      pos += this.paths.copy(paths, pos, this.starts[i]!, this.starts[i + 1]!);
      this.oids.copy(oids, 20 * k, 20 * i, 20 * i + 20);
      modes[k] = this.modes[i]!;
    });
    return new EntryList({ count: picked.length, paths, oids, modes });
  }
}
