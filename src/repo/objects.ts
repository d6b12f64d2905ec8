import type { NativeOdb } from '../addon.js';
import { PcheckoutError, fromNative } from '../errors.js';

export const ZERO_OID = '0'.repeat(40);

export function isFullHex(s: string): boolean {
  return /^[0-9a-f]{40}$/i.test(s);
}

export function oidBuffer(hex: string): Buffer {
  return Buffer.from(hex, 'hex');
}

export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag';

export interface ParsedObject {
  type: ObjectType;
  data: Buffer;
}

export function readObject(odb: NativeOdb, oid: string): ParsedObject {
  try {
    return odb.read(oidBuffer(oid));
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    if (e?.code === 'ERR_MISSING_OBJECT') {
      // The addon names the object it did not find: this one, or a delta base it needs.
      const what = e.message === oid ? '' : ` (${String(e.message)} is missing)`;
      throw new PcheckoutError('ERR_MISSING_OBJECT', `object ${oid} is missing${what}`, {
        oid,
        cause: err,
      });
    }
    throw fromNative(err, `cannot read object ${oid}`);
  }
}

/** The header lines of a commit or tag (up to the blank line), as key → values. */
function headers(data: Buffer): Map<string, string[]> {
  const end = data.indexOf('\n\n');
  const text = data.toString('latin1', 0, end < 0 ? data.length : end);
  const map = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    if (line.startsWith(' ')) continue; // continuation of a multi-line header (gpgsig)
    const sp = line.indexOf(' ');
    if (sp <= 0) continue;
    const key = line.slice(0, sp);
    const list = map.get(key) ?? [];
    list.push(line.slice(sp + 1));
    map.set(key, list);
  }
  return map;
}

function headerOid(h: Map<string, string[]>, key: string, oid: string, kind: string): string {
  const v = h.get(key)?.[0];
  if (v === undefined || !isFullHex(v)) {
    throw new PcheckoutError('ERR_CORRUPT_OBJECT', `${kind} ${oid} has no valid '${key}' line`, {
      oid,
    });
  }
  return v.toLowerCase();
}

export function commitTree(data: Buffer, oid: string): string {
  return headerOid(headers(data), 'tree', oid, 'commit');
}

export function commitParents(data: Buffer, oid: string): string[] {
  const parents = headers(data).get('parent') ?? [];
  for (const p of parents) {
    if (!isFullHex(p))
      throw new PcheckoutError('ERR_CORRUPT_OBJECT', `commit ${oid} has a bad parent line`, {
        oid,
      });
  }
  return parents.map((p) => p.toLowerCase());
}

export function tagTarget(data: Buffer, oid: string): { target: string; type: string } {
  const h = headers(data);
  return { target: headerOid(h, 'object', oid, 'tag'), type: h.get('type')?.[0] ?? '' };
}
