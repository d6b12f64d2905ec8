import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  statSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Repo } from '../repo/repo.js';

/*
 * git's exclude rules (gitignore(5)), answered the way `git check-ignore --no-index` answers:
 *
 * - Sources, highest precedence first: the .gitignore of the path's own directory, then those
 *   of its parent directories up to the worktree top, then $GIT_COMMON_DIR/info/exclude, then
 *   core.excludesFile ($XDG_CONFIG_HOME/git/ignore by default). Within one source the last
 *   matching pattern decides; a `!` pattern that decides means "not ignored".
 * - A path inside an excluded directory is excluded whatever comes after: each parent
 *   directory is checked (as a directory, against the sources above it) before its own
 *   .gitignore is read, and a .gitignore inside an excluded directory is never read.
 * - Patterns are matched byte for byte (paths are latin1 strings holding the path's bytes),
 *   case-sensitively, with git's wildmatch semantics, quirks included.
 */

/** Files larger than this are skipped, as git does. */
const MAX_PATTERN_FILE = 100 * 1024 * 1024;

const SLASH = 0x2f;
const BACKSLASH = 0x5c;

// Wildmatch results: a match, no match at this position, or "no later position can match
// either" (lets a surrounding `*` give up early, exactly where git's matcher gives up).
const MATCH = 0;
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

interface Token {
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
function isGlobSpecial(c: number): boolean {
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
function compileGlob(pat: string, pathname: boolean): Token[] {
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
function wild(toks: Token[], ti: number, text: string, si: number, pathname: boolean): number {
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

// How a basename pattern is matched.
const B_EXACT = 0;
const B_SUFFIX = 1;
const B_GLOB = 2;

interface Pattern {
  negative: boolean;
  dirOnly: boolean;
  /** No '/' (other than a trailing one): matched against the basename at any depth. */
  basename: boolean;
  /** Basename patterns: B_EXACT, B_SUFFIX (`*literal`) or B_GLOB. */
  how: number;
  /** B_EXACT: the name; B_SUFFIX: the suffix; path patterns: the literal leading part. */
  literal: string;
  /** Basename B_GLOB: the whole pattern; path patterns: the glob after `literal` (null: none). */
  toks: Token[] | null;
  /** Path patterns: the directory of the file the pattern comes from ('' or 'a/b'). */
  base: string;
}

/** git's trailing-space trimming: unescaped trailing spaces (not tabs) go. */
function trimTrailingSpaces(s: string): string {
  let lastSpace = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x20) {
      if (lastSpace < 0) lastSpace = i;
    } else if (c === BACKSLASH) {
      if (++i >= s.length) return s;
      lastSpace = -1;
    } else {
      lastSpace = -1;
    }
  }
  return lastSpace >= 0 ? s.slice(0, lastSpace) : s;
}

/** One line of an exclude file (already trimmed) as a pattern; null when it can match nothing. */
function compilePattern(line: string, base: string): Pattern | null {
  let s = line;
  const negative = s.charCodeAt(0) === 0x21;
  if (negative) s = s.slice(1);
  let len = s.length;
  const dirOnly = len > 0 && s.charCodeAt(len - 1) === SLASH;
  if (dirOnly) len--;
  const body = s.slice(0, len);
  if (body === '') return null; // "", "!", "/": git keeps them, but they match nothing
  let literalLen = 0;
  while (literalLen < len && !isGlobSpecial(body.charCodeAt(literalLen))) literalLen++;
  const p: Pattern = {
    negative,
    dirOnly,
    basename: body.indexOf('/') < 0,
    how: B_GLOB,
    literal: '',
    toks: null,
    base,
  };
  if (p.basename) {
    if (literalLen === len) {
      p.how = B_EXACT;
      p.literal = body;
    } else if (body.charCodeAt(0) === 0x2a && !/[*?[\\]/.test(body.slice(1))) {
      p.how = B_SUFFIX;
      p.literal = body.slice(1);
    } else {
      p.toks = compileGlob(body, false);
    }
    return p;
  }
  // Anchored to `base`; a leading '/' only marks the anchoring. The literal leading part is
  // compared as is and the rest is a glob of its own (so a `**` right after the literal part
  // counts as leading, as it does for git).
  let rest = body;
  if (rest.charCodeAt(0) === SLASH) {
    rest = rest.slice(1);
    literalLen--;
  }
  p.literal = rest.slice(0, literalLen);
  const glob = rest.slice(literalLen);
  p.toks = glob === '' ? null : compileGlob(glob, true);
  return p;
}

/** Parses an exclude file's bytes (as a latin1 string) into its patterns, in file order. */
function parsePatterns(text: string, base: string): Pattern[] {
  const out: Pattern[] = [];
  let start = text.startsWith('\xef\xbb\xbf') ? 3 : 0; // a UTF-8 BOM is skipped
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    let line = text.slice(start, end);
    start = end + 1;
    if (line === '' || line.charCodeAt(0) === 0x23) continue; // blank line, or a # comment
    if (line.endsWith('\r')) line = line.slice(0, -1);
    const nul = line.indexOf('\0');
    if (nul >= 0) line = line.slice(0, nul); // git reads a line as a C string
    const p = compilePattern(trimTrailingSpaces(line), base);
    if (p) out.push(p);
  }
  return out;
}

/** Reads an exclude file; null when it is missing, unreadable, not a regular file or too big. */
function readPatternFile(file: string | Buffer, base: string, noFollow: boolean): Pattern[] | null {
  let fd: number;
  try {
    // Look first: most directories have no .gitignore, and a failed open() costs an exception.
    const st = noFollow
      ? lstatSync(file, { throwIfNoEntry: false })
      : statSync(file, { throwIfNoEntry: false });
    if (st === undefined || !st.isFile() || st.size > MAX_PATTERN_FILE) return null;
    // O_NOFOLLOW as git does, in case the file was replaced by a symlink since the lstat.
    fd = openSync(file, constants.O_RDONLY | (noFollow ? (constants.O_NOFOLLOW ?? 0) : 0));
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_PATTERN_FILE) return null;
    const patterns = parsePatterns(readFileSync(fd).toString('latin1'), base);
    return patterns.length > 0 ? patterns : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Does `p` match `path`, whose basename starts at `nameAt`? */
function matches(p: Pattern, path: string, nameAt: number, isDir: boolean): boolean {
  if (p.dirOnly && !isDir) return false;
  if (p.basename) {
    const lit = p.literal;
    switch (p.how) {
      case B_EXACT:
        return path.length - nameAt === lit.length && path.startsWith(lit, nameAt);
      case B_SUFFIX:
        return path.length - nameAt >= lit.length && path.endsWith(lit);
      default:
        return wild(p.toks!, 0, path, nameAt, false) === MATCH;
    }
  }
  // The path relative to the pattern's directory.
  let at = 0;
  if (p.base !== '') {
    at = p.base.length + 1;
    if (path.length < at || path.charCodeAt(at - 1) !== SLASH || !path.startsWith(p.base)) {
      return false;
    }
  } else if (path.length === 0) {
    return false;
  }
  if (p.literal !== '') {
    if (!path.startsWith(p.literal, at)) return false;
    at += p.literal.length;
  }
  if (p.toks === null) return at === path.length;
  return wild(p.toks, 0, path, at, true) === MATCH;
}

/** The last pattern of `list` that matches, or undefined. */
function lastMatch(
  list: Pattern[],
  path: string,
  nameAt: number,
  isDir: boolean,
): Pattern | undefined {
  for (let i = list.length - 1; i >= 0; i--) {
    const p = list[i]!;
    if (matches(p, path, nameAt, isDir)) return p;
  }
  return undefined;
}

/** What is known about one worktree directory. */
interface DirState {
  /** The directory, or one of its parents, is excluded: everything inside is. */
  excluded: boolean;
  /** This directory's .gitignore patterns (null: none). */
  patterns: Pattern[] | null;
  /** The parent directory's state (null for the worktree top). */
  parent: DirState | null;
}

const EXCLUDED: DirState = { excluded: true, patterns: null, parent: null };

export class Excludes {
  private readonly worktree: string;
  /** info/exclude then core.excludesFile: the lists below the per-directory ones. */
  private readonly fileLists: Pattern[][] = [];
  private readonly dirs = new Map<string, DirState>();

  /**
   * Reads $GIT_COMMON_DIR/info/exclude and core.excludesFile (default
   * $XDG_CONFIG_HOME/git/ignore, XDG_CONFIG_HOME defaulting to $HOME/.config; a leading "~/"
   * expanded) once; per-directory .gitignore files of the worktree are read lazily, once each,
   * as directories are asked about.
   */
  constructor(repo: Repo) {
    this.worktree = repo.worktree;
    const info = readPatternFile(join(repo.commonDir, 'info', 'exclude'), '', false);
    if (info) this.fileLists.push(info);
    const file = excludesFile(repo);
    const global = file === undefined ? null : readPatternFile(file, '', false);
    if (global) this.fileLists.push(global);
  }

  /**
   * git's answer for a worktree path ('/'-separated, relative to the worktree, the path's bytes
   * as a latin1 string); isDir says whether the path is a directory.
   */
  isIgnored(path: string, isDir: boolean): boolean {
    while (path.endsWith('/')) {
      path = path.slice(0, -1);
      isDir = true;
    }
    if (path === '') return false;
    const slash = path.lastIndexOf('/');
    const dir = this.dirState(slash < 0 ? '' : path.slice(0, slash));
    if (dir.excluded) return true;
    const p = this.decide(dir, path, slash + 1, isDir);
    return p !== undefined && !p.negative;
  }

  /** The deciding pattern for `path`, the sources tried in precedence order. */
  private decide(dir: DirState, path: string, nameAt: number, isDir: boolean): Pattern | undefined {
    for (let d: DirState | null = dir; d !== null; d = d.parent) {
      if (d.patterns === null) continue;
      const p = lastMatch(d.patterns, path, nameAt, isDir);
      if (p !== undefined) return p;
    }
    for (const list of this.fileLists) {
      const p = lastMatch(list, path, nameAt, isDir);
      if (p !== undefined) return p;
    }
    return undefined;
  }

  private dirState(dir: string): DirState {
    const known = this.dirs.get(dir);
    if (known !== undefined) return known;
    let state: DirState;
    if (dir === '') {
      state = { excluded: false, patterns: this.readGitignore(''), parent: null };
    } else {
      const slash = dir.lastIndexOf('/');
      const parent = this.dirState(slash < 0 ? '' : dir.slice(0, slash));
      const p = parent.excluded ? undefined : this.decide(parent, dir, slash + 1, true);
      if (parent.excluded || (p !== undefined && !p.negative)) {
        state = EXCLUDED;
      } else {
        state = { excluded: false, patterns: this.readGitignore(dir), parent };
      }
    }
    this.dirs.set(dir, state);
    return state;
  }

  /** `dir`/.gitignore, never through a symlink (git opens it with O_NOFOLLOW). */
  private readGitignore(dir: string): Pattern[] | null {
    const rel = dir === '' ? '.gitignore' : `${dir}/.gitignore`;
    const file = Buffer.concat([Buffer.from(`${this.worktree}/`), Buffer.from(rel, 'latin1')]);
    return readPatternFile(file, dir, true);
  }
}

/** core.excludesFile, or its default $XDG_CONFIG_HOME/git/ignore; undefined when there is none. */
function excludesFile(repo: Repo): string | undefined {
  const home = process.env['HOME'];
  const configured = repo.config.get('core.excludesfile');
  if (configured === undefined) {
    const xdg = process.env['XDG_CONFIG_HOME'];
    if (xdg) return join(xdg, 'git', 'ignore');
    return home === undefined ? undefined : join(home, '.config', 'git', 'ignore');
  }
  if (configured === '') return undefined;
  let file = configured;
  if (file === '~' || file.startsWith('~/')) file = join(home ?? homedir(), file.slice(1));
  // git runs at the worktree top, so a relative path is relative to it.
  return resolve(repo.worktree, file);
}
