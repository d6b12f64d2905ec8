/**
 * Reading gitattributes files as git's attr.c reads them: the file's bytes (size limit, no
 * symlinks in the tree), its lines, and each line parsed into a pattern or macro and its
 * settings, with git's warnings; the numbering of attribute names one resolution uses.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import type { EntryList } from './entries.js';

/** set (`x`), unset (`-x`), unspecified (`!x`, or nothing), or a value (`x=v`). */
export type AttrValue = true | false | undefined | string;

/** The names the content conversions read (git's convert.c). */
/** git's limits (attr.c): larger files and longer lines are skipped with a warning. */
export const ATTR_MAX_FILE_SIZE = 100 * 1024 * 1024;
export const ATTR_MAX_LINE_LENGTH = 2048;
export const BLANK = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;

export function validName(name: string): boolean {
  if (name.length === 0 || name.charCodeAt(0) === 0x2d) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    const ok =
      c === 0x2d ||
      c === 0x2e ||
      c === 0x5f ||
      (c >= 0x30 && c <= 0x39) ||
      (c >= 0x41 && c <= 0x5a) ||
      (c >= 0x61 && c <= 0x7a);
    if (!ok) return false;
  }
  return true;
}

/**
 * A C-quoted name (`"a b"`, git's unquote_c_style) starting at `at`: the name and where the
 * text after the closing quote starts, or null when it is not well formed.
 */
export function unquoteC(line: string, at: number): { name: string; end: number } | null {
  let out = '';
  let i = at + 1;
  const simple: Record<string, string> = {
    a: '\x07',
    b: '\b',
    f: '\f',
    n: '\n',
    r: '\r',
    t: '\t',
    v: '\v',
    '\\': '\\',
    '"': '"',
  };
  while (i < line.length) {
    const c = line[i]!;
    if (c === '"') return { name: out, end: i + 1 };
    if (c !== '\\') {
      out += c;
      i++;
      continue;
    }
    const e = line[i + 1];
    if (e === undefined) return null;
    if (e in simple) {
      out += simple[e];
      i += 2;
    } else if (e >= '0' && e <= '3' && /^[0-7]{2}$/.test(line.slice(i + 2, i + 4))) {
      out += String.fromCharCode(parseInt(line.slice(i + 1, i + 4), 8));
      i += 4;
    } else {
      return null;
    }
  }
  return null;
}

/**
 * The attribute numbering of one resolution: names get numbers as first seen. With a fixed
 * set of names, settings of other names are dropped at parse time (they cannot change the
 * answer: only macros, which are always kept, act on other names).
 */
export class Names {
  readonly ids = new Map<string, number>();
  readonly list: string[] = [];
  /** Tracked names: every one (null) or these. */
  constructor(readonly only: Set<string> | null) {}

  id(name: string): number {
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.list.length;
      this.ids.set(name, id);
      this.list.push(name);
    }
    return id;
  }

  tracked(name: string, macros: Set<string>): boolean {
    return this.only === null || this.only.has(name) || macros.has(name);
  }
}

export interface ParsedLine {
  macro: string | null;
  pattern: string;
  /** The directory of the file the line comes from ('' for the top and global files). */
  base: string;
  states: { name: string; value: AttrValue }[];
}

/** git's parse_attr_line: null for blank, comment and refused lines (warned as git warns). */
export function parseLine(
  line: string,
  src: string,
  lineno: number,
  macroOk: boolean,
  base: string,
  warn: (m: string) => void,
): ParsedLine | null {
  let cp = 0;
  while (cp < line.length && BLANK(line.charCodeAt(cp))) cp++;
  if (cp >= line.length || line.charCodeAt(cp) === 0x23) return null;
  if (line.length >= ATTR_MAX_LINE_LENGTH) {
    warn(`ignoring overly long attributes line ${lineno}`);
    return null;
  }
  let name: string;
  let statesAt: number;
  const quoted = line.charCodeAt(cp) === 0x22 ? unquoteC(line, cp) : null;
  if (quoted) {
    name = quoted.name;
    statesAt = quoted.end;
  } else {
    let end = cp;
    while (end < line.length && !BLANK(line.charCodeAt(end))) end++;
    name = line.slice(cp, end);
    statesAt = end;
  }
  let macro: string | null = null;
  if (name.length > 6 && name.startsWith('[attr]')) {
    if (!macroOk) {
      // git prints the name as a C string: unquoted, that runs to the end of the line.
      warn(`${quoted ? name : line.slice(cp)} not allowed: ${src}:${lineno}`);
      return null;
    }
    let m = 6;
    const rest = quoted ? name : line.slice(cp);
    while (m < rest.length && BLANK(rest.charCodeAt(m))) m++;
    let e = m;
    while (e < rest.length && !BLANK(rest.charCodeAt(e))) e++;
    macro = rest.slice(m, e);
    if (!validName(macro)) {
      warn(`${macro} is not a valid attribute name: ${src}:${lineno}`);
      return null;
    }
  }
  const states: { name: string; value: AttrValue }[] = [];
  let i = statesAt;
  while (i < line.length && BLANK(line.charCodeAt(i))) i++;
  while (i < line.length) {
    let ep = i;
    while (ep < line.length && !BLANK(line.charCodeAt(ep))) ep++;
    const eq = line.indexOf('=', i);
    const equals = eq >= 0 && eq < ep ? eq : -1;
    let start = i;
    const end = equals >= 0 ? equals : ep;
    const first = line.charCodeAt(i);
    let value: AttrValue;
    if (first === 0x2d || first === 0x21) {
      start++;
      value = first === 0x2d ? false : undefined;
    } else {
      value = equals >= 0 ? line.slice(equals + 1, ep) : true;
    }
    const attr = line.slice(start, Math.max(start, end));
    if (end < start || !validName(attr)) {
      warn(`${attr} is not a valid attribute name: ${src}:${lineno}`);
      return null;
    }
    states.push({ name: attr, value });
    i = ep;
    while (i < line.length && BLANK(line.charCodeAt(i))) i++;
  }
  if (macro === null && name.charCodeAt(0) === 0x21) {
    warn(
      "Negative patterns are ignored in git attributes\nUse '\\!' for literal leading exclamation.",
    );
    return null;
  }
  return { macro, pattern: name, base, states };
}

/** The lines of a file read as git's strbuf_getline does: CRLF or LF ends a line. */
export function fileLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l, n) => {
    let line = l.endsWith('\r') ? l.slice(0, -1) : l;
    if (n === 0 && line.startsWith('\xef\xbb\xbf')) line = line.slice(3); // a UTF-8 BOM
    const nul = line.indexOf('\0');
    return nul >= 0 ? line.slice(0, nul) : line; // a C string
  });
}

/** The lines of a blob as git reads one from the index: up to the first NUL, split at LF. */
export function blobLines(text: string): string[] {
  const nul = text.indexOf('\0');
  const body = nul >= 0 ? text.slice(0, nul) : text;
  if (body === '') return [];
  const lines = body.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * A file's bytes as a latin1 string; null when it is missing or unreadable (warned unless
 * absent), or too large (warned, not read). `noFollow`: in-tree files are never read through a
 * symlink, as git opens them with O_NOFOLLOW.
 */
export function readAttrFile(
  file: string | Buffer,
  shown: string,
  noFollow: boolean,
  warn: (m: string) => void,
): string | null {
  let fd: number;
  try {
    // Most directories have no such file: a failed open costs a thrown error (~14 µs in Node),
    // an lstat that may find nothing ~4 µs. A checkout reads one per directory it writes to.
    if (lstatSync(file, { throwIfNoEntry: false }) === undefined) return null;
    fd = openSync(file, constants.O_RDONLY | (noFollow ? constants.O_NOFOLLOW : 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') {
      warn(`unable to access '${shown}': ${describeErrno(err)}`);
    }
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (st.size >= ATTR_MAX_FILE_SIZE) {
      warn(`ignoring overly large gitattributes file '${shown}'`);
      return null;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    const buf = Buffer.allocUnsafe(Math.min(Math.max(st.size + 1, 4096), 1 << 20));
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch {
        break; // a directory reads as nothing, as for git
      }
      if (n === 0) break;
      total += n;
      if (total >= ATTR_MAX_FILE_SIZE) {
        warn(`ignoring overly large gitattributes file '${shown}'`);
        return null;
      }
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
    return Buffer.concat(chunks).toString('latin1');
  } finally {
    closeSync(fd);
  }
}

/** strerror-like wording of a Node error, as git's warnings print errno. */
export function describeErrno(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  const words: Record<string, string> = {
    ELOOP: 'Too many levels of symbolic links',
    EACCES: 'Permission denied',
    EISDIR: 'Is a directory',
  };
  return (code && words[code]) ?? (err as Error).message;
}

/** Entries named `.gitattributes`, by directory ('' for the top), found without a string per entry. */
export function attributeFiles(list: EntryList): Map<string, number> {
  const out = new Map<string, number>();
  const { paths, starts } = list;
  const base = Buffer.from('.gitattributes\0', 'latin1');
  for (let at = paths.indexOf(base); at >= 0; at = paths.indexOf(base, at + 1)) {
    if (at !== 0 && paths[at - 1] !== 0x2f && paths[at - 1] !== 0) continue;
    const i = entryAt(starts, at);
    const name = list.name(i);
    const dir = name.length === 14 ? '' : name.slice(0, -15);
    // A path name ends at a NUL, so this match is the whole last component.
    if (!out.has(dir)) out.set(dir, i);
  }
  return out;
}

/** The entry whose path contains byte offset `pos`. */
function entryAt(starts: Uint32Array, pos: number): number {
  let lo = 0;
  let hi = starts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
