/**
 * The EWAH bitmaps of a split index's `link` extension (gitformat-index, "Split index"; the
 * layout of git's ewah/ewah_io.c): a 32-bit count of bits, a 32-bit count of 64-bit words, the
 * words, and the 32-bit position of the last run-length word. The words are groups of one
 * run-length word (bit 0: the bit a run repeats; bits 1-32: how many words of it; bits 33-63:
 * how many literal words follow) and its literal words, whose bit k is bit 64·w + k.
 */

/** A bitmap read: the positions of its set bits in increasing order, and where it ended. */
export interface EwahRead {
  readonly bits: number[];
  readonly end: number;
}

/**
 * The bitmap at `pos` in `buf` (ending by `end`); null when it is malformed — it runs past
 * `end`, or a bit is set at `limit` or above (git's reader checks no more: the bit count is
 * not needed to read the bits).
 */
export function readEwah(buf: Buffer, pos: number, end: number, limit: number): EwahRead | null {
  if (end - pos < 8) return null;
  const words = buf.readUInt32BE(pos + 4);
  pos += 8;
  if (words > Math.floor((end - pos - 4) / 8)) return null;
  const bits: number[] = [];
  let bit = 0;
  let w = 0;
  while (w < words) {
    const at = pos + 8 * w;
    const hi = buf.readUInt32BE(at);
    const lo = buf.readUInt32BE(at + 4);
    const runBit = lo & 1;
    const runWords = (lo >>> 1) + (hi & 1) * 0x80000000;
    const literals = hi >>> 1;
    w++;
    if (runBit === 1) {
      if (bit + runWords * 64 > limit) return null;
      for (let k = 0; k < runWords * 64; k++) bits.push(bit + k);
    }
    bit += runWords * 64;
    if (literals > words - w) return null;
    for (let l = 0; l < literals; l++, w++) {
      const lat = pos + 8 * w;
      const halves = [buf.readUInt32BE(lat + 4), buf.readUInt32BE(lat)];
      for (let h = 0; h < 2; h++) {
        let v = halves[h]!;
        while (v !== 0) {
          const k = 31 - Math.clz32(v & -v);
          v &= v - 1;
          const at = bit + 32 * h + k;
          if (at >= limit) return null;
          bits.push(at);
        }
      }
      bit += 64;
    }
  }
  pos += 8 * words;
  // The last run-length word's position (for appending to the bitmap) is not needed to read it.
  return { bits, end: pos + 4 };
}

/**
 * The bitmap whose set bits are `positions` (increasing), serialized: runs of empty words are
 * counted, not written; an empty bitmap is one run-length word of nothing, as git writes one.
 */
export function writeEwah(positions: readonly number[]): Buffer {
  // Each word as [hi, lo]; words[rlw] is the run-length word of the group being written.
  const words: [number, number][] = [[0, 0]];
  let rlw = 0; // index of the current run-length word
  let run = 0; // empty words counted in it
  let literals = 0; // literal words after it
  let nextWord = 0; // the bitmap word the next literal would be
  const setRlw = (): void => {
    words[rlw] = [
      ((literals << 1) | Math.floor(run / 0x80000000)) >>> 0,
      ((run % 0x80000000) * 2) >>> 0,
    ];
  };
  for (let i = 0; i < positions.length;) {
    const word = Math.floor(positions[i]! / 64);
    const gap = word - nextWord;
    if (gap > 0) {
      if (literals > 0) {
        setRlw();
        words.push([0, 0]);
        rlw = words.length - 1;
        run = 0;
        literals = 0;
      }
      run += gap;
    }
    let hi = 0;
    let lo = 0;
    for (; i < positions.length && Math.floor(positions[i]! / 64) === word; i++) {
      const k = positions[i]! % 64;
      if (k < 32) lo = (lo | (1 << k)) >>> 0;
      else hi = (hi | (1 << (k - 32))) >>> 0;
    }
    words.push([hi, lo]);
    literals++;
    nextWord = word + 1;
  }
  setRlw();
  const bitSize = positions.length === 0 ? 0 : positions[positions.length - 1]! + 1;
  const out = Buffer.alloc(8 + 8 * words.length + 4);
  out.writeUInt32BE(bitSize, 0);
  out.writeUInt32BE(words.length, 4);
  words.forEach(([hi, lo], k) => {
    out.writeUInt32BE(hi, 8 + 8 * k);
    out.writeUInt32BE(lo, 12 + 8 * k);
  });
  out.writeUInt32BE(rlw, 8 + 8 * words.length);
  return out;
}
