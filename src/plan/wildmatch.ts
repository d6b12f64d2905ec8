/**
 * git's wildmatch (the glob matcher of gitignore patterns and `:(glob)` pathspecs), compiled
 * once per pattern, with git's early-give-up rules so that every answer equals git's. Text and
 * patterns are latin1 strings holding the bytes.
 */
export const SLASH = 0x2f;
export const BACKSLASH = 0x5c;

// Wildmatch results: a match, no match at this position, or "no later position can match
// either" (lets a surrounding `*` give up early, exactly where git's matcher gives up).
export const MATCH = 0;
const NOMATCH = 1;
const ABORT_ALL = 2;
const ABORT_TO_STARSTAR = 3;

// Token kinds of a compiled glob.
const T_LIT = 0; // one given byte
const T_NEVER = 1; // a backslash ending the pattern: matches no byte
const T_ANY = 2; // `?`
const T_SET = 3; // `[...]`
const T_BROKEN = 4; // a malformed `[...]`: reaching it fails the whole match
const T_STAR = 5; // a run of `*`

export interface Token {
  kind: number;
  /** T_LIT: the byte. T_STAR: the literal byte right after the run (a hint), or -1. */
  ch: number;
  /** T_SET: membership of each byte, negation applied. */
  set: Uint8Array | null;
  /** T_STAR: the run may match '/' (`**` in a valid position, or any star in basename mode). */
  slash: boolean;
  /** T_STAR: `**` followed by an unescaped '/': first try matching zero directories. */
  zeroDirs: boolean;
  /** T_STAR: a one-segment star directly followed by an unescaped '/'. */
  toSlash: boolean;
  /** T_STAR: the run ends the pattern. */
  last: boolean;
}

function token(kind: number, ch = -1, set: Uint8Array | null = null): Token {
  return { kind, ch, set, slash: false, zeroDirs: false, toSlash: false, last: false };
}

/** `*`, `?`, `[` and `\`: the bytes git's glob code treats as special. */
export function isGlobSpecial(c: number): boolean {
  return c === 0x2a || c === 0x3f || c === 0x5b || c === BACKSLASH;
}

// git's ASCII-only character classes (locale-independent; bytes >= 0x80 belong to none).
const isUpper = (c: number): boolean => c >= 0x41 && c <= 0x5a;
const isLower = (c: number): boolean => c >= 0x61 && c <= 0x7a;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isAlpha = (c: number): boolean => isUpper(c) || isLower(c);
const isPrint = (c: number): boolean => c >= 0x20 && c <= 0x7e;
const CLASSES: Record<string, (c: number) => boolean> = {
  alnum: (c) => isAlpha(c) || isDigit(c),
  alpha: isAlpha,
  blank: (c) => c === 0x20 || c === 0x09,
  cntrl: (c) => c < 0x20 || c === 0x7f,
  digit: isDigit,
  graph: (c) => c > 0x20 && c <= 0x7e,
  lower: isLower,
  print: isPrint,
  punct: (c) => isPrint(c) && c !== 0x20 && !isAlpha(c) && !isDigit(c),
  // git's isspace: space, \t, \n, \r (not \v or \f).
  space: (c) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d,
  upper: isUpper,
  xdigit: (c) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66),
};

/**
 * Parses the bracket expression opening at `start` (the '['). Returns the token and the index
 * of its closing ']', or a T_BROKEN token and the pattern's end when it is malformed
 * (unterminated, a dangling backslash, an unknown [:class:]) — git then matches nothing.
 */
function compileSet(pat: string, start: number, pathname: boolean): [Token, number] {
  const n = pat.length;
  const at = (i: number): number => (i < n ? pat.charCodeAt(i) : 0);
  const broken: [Token, number] = [token(T_BROKEN), n];
  const member = new Uint8Array(256);
  let p = start + 1;
  let c = at(p);
  if (c === 0x5e) c = 0x21; // '^' negates like '!'
  const negated = c === 0x21;
  if (negated) c = at(++p);
  let prev = 0;
  // The first byte is always a member, even ']'; the set ends at the next unescaped ']'.
  for (;;) {
    if (c === 0) return broken;
    if (c === BACKSLASH) {
      c = at(++p);
      if (c === 0) return broken;
      member[c] = 1;
    } else if (c === 0x2d && prev !== 0 && p + 1 < n && at(p + 1) !== 0x5d) {
      // A range prev-c (bounds compared as unsigned bytes).
      c = at(++p);
      if (c === BACKSLASH) {
        c = at(++p);
        if (c === 0) return broken;
      }
      for (let b = prev; b <= c && b < 256; b++) member[b] = 1;
      c = 0; // a range cannot start another range
    } else if (c === 0x5b && at(p + 1) === 0x3a) {
      // "[:name:]"; without a ":]" before the next ']', "[" and ":" are plain members.
      const nameStart = p + 2;
      let q = nameStart;
      while (q < n && at(q) !== 0x5d) q++;
      if (q >= n) return broken;
      if (q - nameStart < 1 || at(q - 1) !== 0x3a) {
        member[0x5b] = 1; // and go on with the ':'
      } else {
        const name = pat.slice(nameStart, q - 1);
        const test = Object.hasOwn(CLASSES, name) ? CLASSES[name] : undefined;
        if (test === undefined) return broken;
        for (let b = 0; b < 256; b++) if (test(b)) member[b] = 1;
        p = q;
        c = 0;
      }
    } else {
      member[c] = 1;
    }
    prev = c;
    c = at(++p);
    if (c === 0x5d) break;
  }
  const set = new Uint8Array(256);
  for (let b = 0; b < 256; b++) set[b] = (member[b] === 1) !== negated ? 1 : 0;
  if (pathname) set[SLASH] = 0; // with WM_PATHNAME a set never matches '/'
  return [token(T_SET, -1, set), p];
}

/**
 * Compiles a glob for matching whole (relative) paths (`pathname`: `*`, `?` and sets stop at
 * '/', `**` crosses directories where valid) or basenames (every star matches anything).
 */
export function compileGlob(pat: string, pathname: boolean): Token[] {
  const out: Token[] = [];
  const n = pat.length;
  for (let i = 0; i < n; i++) {
    const c = pat.charCodeAt(i);
    if (c === BACKSLASH) {
      if (i + 1 < n) out.push(token(T_LIT, pat.charCodeAt(++i)));
      else out.push(token(T_NEVER));
    } else if (c === 0x3f) {
      out.push(token(T_ANY));
    } else if (c === 0x5b) {
      const [t, end] = compileSet(pat, i, pathname);
      out.push(t);
      i = end;
    } else if (c === 0x2a) {
      let j = i;
      while (j < n && pat.charCodeAt(j) === 0x2a) j++;
      const next = j < n ? pat.charCodeAt(j) : -1;
      const t = token(T_STAR);
      if (!pathname) {
        t.slash = true;
      } else if (
        j - i >= 2 &&
        (i === 0 || pat.charCodeAt(i - 1) === SLASH) &&
        (next === -1 ||
          next === SLASH ||
          (next === BACKSLASH && j + 1 < n && pat.charCodeAt(j + 1) === SLASH))
      ) {
        t.slash = true;
        t.zeroDirs = next === SLASH;
      }
      t.toSlash = !t.slash && next === SLASH;
      t.last = next === -1;
      t.ch = next !== -1 && !isGlobSpecial(next) ? next : -1;
      out.push(t);
      i = j - 1;
    } else {
      out.push(token(T_LIT, c));
    }
  }
  return out;
}

/** Matches toks[ti..] against text[si..]; one of MATCH, NOMATCH, ABORT_*. */
export function wild(
  toks: Token[],
  ti: number,
  text: string,
  si: number,
  pathname: boolean,
): number {
  const n = text.length;
  for (; ti < toks.length; ti++, si++) {
    const t = toks[ti]!;
    if (t.kind !== T_STAR) {
      if (si >= n) return ABORT_ALL;
      const c = text.charCodeAt(si);
      switch (t.kind) {
        case T_LIT:
          if (c !== t.ch) return NOMATCH;
          continue;
        case T_ANY:
          if (pathname && c === SLASH) return NOMATCH;
          continue;
        case T_SET:
          if (c > 255 || t.set![c] === 0) return NOMATCH;
          continue;
        case T_NEVER:
          return NOMATCH;
        default:
          return ABORT_ALL;
      }
    }
    // `**/` may stand for no directory at all: try the rest after the '/' right here.
    if (t.zeroDirs && wild(toks, ti + 2, text, si, pathname) === MATCH) return MATCH;
    if (t.last) {
      if (!t.slash && text.indexOf('/', si) >= 0) return NOMATCH;
      return MATCH;
    }
    if (t.toSlash) {
      // A one-segment star before '/' can only end at the next '/'.
      const k = text.indexOf('/', si);
      if (k < 0) return NOMATCH;
      si = k;
      ti++; // the loop steps over the '/' token and the '/' byte together
      continue;
    }
    let c = si < n ? text.charCodeAt(si) : -1;
    while (si < n) {
      if (t.ch >= 0) {
        // The star is followed by a literal byte: skip ahead to its next occurrence.
        while (si < n) {
          c = text.charCodeAt(si);
          if (!t.slash && c === SLASH) break;
          if (c === t.ch) break;
          si++;
        }
        if (si >= n || c !== t.ch) return NOMATCH;
      }
      const r = wild(toks, ti + 1, text, si, pathname);
      if (r !== NOMATCH) {
        if (!t.slash || r !== ABORT_TO_STARSTAR) return r;
      } else if (!t.slash && c === SLASH) {
        return ABORT_TO_STARSTAR;
      }
      si++;
      c = si < n ? text.charCodeAt(si) : -1;
    }
    return ABORT_ALL;
  }
  return si < n ? NOMATCH : MATCH;
}

/** Whether `text` matches the compiled glob; `pathname`: `*` and `?` do not match '/'. */
export function wildmatch(toks: Token[], text: string, pathname: boolean): boolean {
  return wild(toks, 0, text, 0, pathname) === MATCH;
}
