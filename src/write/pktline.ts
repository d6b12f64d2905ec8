/**
 * git's pkt-line framing (gitprotocol-common): four hex digits giving the packet's length
 * including themselves, then the data; "0000" is a flush packet. Used by the long-running
 * filter protocol (write/filters.ts).
 */
import type { Readable } from 'node:stream';

/** The most data one packet carries (git's LARGE_PACKET_DATA_MAX). */
export const MAX_PACKET_DATA = 65520 - 4;

export const FLUSH = Buffer.from('0000', 'latin1');

/** One data packet (a string is latin1: one char per byte, as paths are kept here). */
export function packet(data: Buffer | string): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
  if (body.length > MAX_PACKET_DATA) throw new RangeError(`packet of ${body.length} bytes`);
  const head = Buffer.from((body.length + 4).toString(16).padStart(4, '0'), 'latin1');
  return Buffer.concat([head, body]);
}

/** A text packet as git writes them: the line (latin1: one char per byte) and a newline. */
export function textPacket(line: string): Buffer {
  return packet(`${line}\n`);
}

/** Content split into packets of at most MAX_PACKET_DATA bytes (none for empty content). */
export function contentPackets(content: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < content.length; at += MAX_PACKET_DATA) {
    out.push(packet(content.subarray(at, Math.min(at + MAX_PACKET_DATA, content.length))));
  }
  return out;
}

/** The protocol broke: a malformed length, or the stream ended inside the conversation. */
export class ProtocolError extends Error {}

/**
 * Reads packets from a stream as they arrive. As git reads them, a packet of no data
 * ("0004"), a delimiter ("0001") and a response end ("0002") end a list or content like a
 * flush does.
 */
export class PacketReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private ended = false;
  private failure: Error | null = null;
  private wake: (() => void) | null = null;

  constructor(stream: Readable) {
    stream.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      this.notify();
    });
    stream.on('end', () => {
      this.ended = true;
      this.notify();
    });
    stream.on('error', (err) => this.fail(err));
  }

  /** The stream's source failed (the process could not start): reads fail from now on. */
  fail(err: Error): void {
    this.failure ??= err;
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private async fill(n: number): Promise<void> {
    while (this.buffered < n) {
      if (this.failure) throw new ProtocolError(`cannot read: ${this.failure.message}`);
      if (this.ended) throw new ProtocolError('the filter closed its output');
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return out;
  }

  /** The next packet's data, or null for a flush (or anything git reads as one). */
  async read(): Promise<Buffer | null> {
    await this.fill(4);
    const head = this.take(4).toString('latin1');
    if (!/^[0-9a-fA-F]{4}$/.test(head)) {
      throw new ProtocolError(`bad line length character: ${JSON.stringify(head)}`);
    }
    const len = parseInt(head, 16);
    if (len === 0 || len === 1 || len === 2) return null;
    if (len < 4 || len > MAX_PACKET_DATA + 4) throw new ProtocolError(`bad line length ${len}`);
    if (len === 4) return null;
    await this.fill(len - 4);
    return Buffer.from(this.take(len - 4));
  }

  /** The next packet as a line (latin1) without its trailing newline, or null for a flush. */
  async readLine(): Promise<string | null> {
    const data = await this.read();
    if (data === null) return null;
    const end = data.length > 0 && data[data.length - 1] === 0x0a ? data.length - 1 : data.length;
    return data.toString('latin1', 0, end);
  }

  /** Lines up to the next flush. */
  async readList(): Promise<string[]> {
    const lines: string[] = [];
    for (let line = await this.readLine(); line !== null; line = await this.readLine()) {
      lines.push(line);
    }
    return lines;
  }

  /** Data packets up to the next flush, joined. */
  async readContent(): Promise<Buffer> {
    const parts: Buffer[] = [];
    for (let data = await this.read(); data !== null; data = await this.read()) parts.push(data);
    return Buffer.concat(parts);
  }
}
