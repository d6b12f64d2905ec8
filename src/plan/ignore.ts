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
import {
  BACKSLASH,
  MATCH,
  SLASH,
  type Token,
  compileGlob,
  isGlobSpecial,
  wild,
} from './wildmatch.js';

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

// How a basename pattern is matched.
const B_EXACT = 0;
const B_SUFFIX = 1;
const B_GLOB = 2;

/** A compiled gitignore-style pattern (dir.c's match_basename / match_pathname rules). */
export interface Pattern {
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

/**
 * One line of an exclude file (already trimmed) as a pattern; null when it can match nothing.
 * Also the pattern part of an attributes line (plan/attributes.ts), which never has a leading '!'.
 */
export function compilePattern(line: string, base: string): Pattern | null {
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
export function parsePatterns(text: string, base: string): Pattern[] {
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
export function matches(p: Pattern, path: string, nameAt: number, isDir: boolean): boolean {
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
