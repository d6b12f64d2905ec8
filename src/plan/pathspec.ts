/**
 * git's pathspecs (gitglossary(7) "pathspec"), as `git checkout <rev> -- <paths>` matches them
 * against index and tree entries: a path matches itself and everything under it; `*`, `?` and
 * `[...]` are globs that also match '/' by default; magic `:(top)` / `:/`, `:(literal)`,
 * `:(glob)` (`*` stays within a component, `**` crosses them), `:(icase)` and
 * `:(exclude)` / `:!` / `:^`. Paths are latin1 strings holding the path's bytes, relative to the
 * worktree top.
 */
import { PcheckoutError } from '../errors.js';
import { compileGlob, isGlobSpecial, wildmatch, type Token } from './wildmatch.js';

interface Item {
  /** As the user wrote it, for messages. */
  raw: string;
  exclude: boolean;
  icase: boolean;
  /** The path (latin1), '' for the whole tree. */
  path: string;
  /** Bytes before the first wildcard (the whole path when there is none). */
  fixed: number;
  toks: Token[] | null;
  pathname: boolean;
  matched: boolean;
}

const MAGIC_WORDS = new Set(['top', 'literal', 'glob', 'icase', 'exclude', 'attr']);

function fail(raw: string, why: string): PcheckoutError {
  return new PcheckoutError('ERR_PATHSPEC', `pathspec '${raw}': ${why}`, { path: raw });
}

/** Resolves `.` and `..` against `prefix` (the cwd's path below the top); refuses escaping it. */
function normalize(raw: string, path: string): string {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) throw fail(raw, 'is outside the repository');
      out.pop();
    } else {
      out.push(part);
    }
  }
  const joined = out.join('/');
  return path.endsWith('/') && joined !== '' ? `${joined}/` : joined;
}

function parseItem(raw: string, prefix: string): Item {
  let rest = raw;
  const magic = new Set<string>();
  if (rest.startsWith(':(')) {
    const close = rest.indexOf(')');
    if (close < 0) throw fail(raw, 'missing ")" at the end of the magic');
    for (const word of rest.slice(2, close).split(',')) {
      const w = word.trim();
      if (w === '') continue;
      if (w === 'exclude') magic.add('exclude');
      else if (MAGIC_WORDS.has(w) && w !== 'attr') magic.add(w);
      else throw fail(raw, `magic '${w}' is not supported`);
    }
    rest = rest.slice(close + 1);
  } else if (rest.startsWith(':')) {
    let i = 1;
    for (; i < rest.length; i++) {
      const c = rest[i]!;
      if (c === '/') magic.add('top');
      else if (c === '!' || c === '^') magic.add('exclude');
      else if (c === ':') {
        i++;
        break;
      } else break;
    }
    rest = rest.slice(i);
  }
  if (magic.has('literal') && magic.has('glob')) throw fail(raw, "'literal' and 'glob' conflict");
  const bytes = Buffer.from(rest, 'utf8').toString('latin1');
  const path = normalize(
    raw,
    magic.has('top') ? bytes : prefix === '' ? bytes : `${prefix}/${bytes}`,
  );
  const icase = magic.has('icase');
  const subject = icase ? path.toLowerCase() : path;
  let fixed = subject.length;
  if (!magic.has('literal')) {
    for (let i = 0; i < subject.length; i++) {
      if (isGlobSpecial(subject.charCodeAt(i))) {
        fixed = i;
        break;
      }
    }
  }
  const pathname = magic.has('glob');
  return {
    raw,
    exclude: magic.has('exclude'),
    icase,
    path: subject,
    fixed,
    toks: fixed < subject.length ? compileGlob(subject, pathname) : null,
    pathname,
    matched: false,
  };
}

function itemMatches(item: Item, name: string): boolean {
  const path = item.icase ? name.toLowerCase() : name;
  const p = item.path;
  if (p === '') return true;
  if (item.toks === null) {
    if (p.endsWith('/')) return path.startsWith(p);
    return path === p || (path.startsWith(p) && path.charCodeAt(p.length) === 0x2f);
  }
  // The literal part must agree before the glob is tried (git's nowildcard_len).
  if (path.length < item.fixed || path.slice(0, item.fixed) !== p.slice(0, item.fixed))
    return false;
  return wildmatch(item.toks, path, item.pathname);
}

export class Pathspec {
  private readonly positive: Item[];
  private readonly negative: Item[];

  /** `prefix`: where relative pathspecs start (the cwd below the worktree top, latin1). */
  constructor(specs: readonly string[], prefix = '') {
    const items = specs.map((s) => {
      if (s === '') throw fail(s, 'empty string is not a valid pathspec');
      return parseItem(s, prefix);
    });
    this.positive = items.filter((i) => !i.exclude);
    this.negative = items.filter((i) => i.exclude);
    // Only exclusions: they exclude from everything, as in git.
    if (this.positive.length === 0) this.positive.push(parseItem(':(top)', ''));
  }

  /** Whether the path is selected; remembers which items matched something. */
  matches(path: string): boolean {
    let hit = false;
    for (const item of this.positive) {
      if (itemMatches(item, path)) {
        item.matched = true;
        hit = true;
      }
    }
    if (!hit) return false;
    for (const item of this.negative) if (itemMatches(item, path)) return false;
    return true;
  }

  /**
   * A matcher with git's `seen` shortcut, used when it writes the files of a checkout of paths:
   * an item that matched a path exactly (the whole pattern equal to the path) is not tried on
   * later paths.
   */
  worktreeMatcher(): (path: string) => boolean {
    const done = new Set<Item>();
    return (name) => {
      let hit = false;
      for (const item of this.positive) {
        if (done.has(item) || !itemMatches(item, name)) continue;
        hit = true;
        if ((item.icase ? name.toLowerCase() : name) === item.path) done.add(item);
      }
      if (!hit) return false;
      for (const item of this.negative) if (itemMatches(item, name)) return false;
      return true;
    };
  }

  /** Refuses, as git does, when a positive pathspec matched nothing. */
  assertAllMatched(): void {
    const missed = this.positive.filter((i) => !i.matched).map((i) => i.raw);
    if (missed.length === 0) return;
    throw new PcheckoutError(
      'ERR_PATHSPEC',
      missed.map((m) => `pathspec '${m}' did not match any file(s) known to git`).join('\n'),
      { paths: missed, ...(missed.length === 1 ? { path: missed[0]! } : {}) },
    );
  }
}
