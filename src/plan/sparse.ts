/**
 * Sparse checkout: which index entries are checked out, the others getting the skip-worktree
 * bit and no file.
 *
 * Cone mode (core.sparseCheckoutCone, git-sparse-checkout(1) "INTERNALS — CONE PATTERN SET"):
 * the patterns in $GIT_DIR/info/sparse-checkout name directories whose whole content is
 * checked out (recursive) and their parents, whose files directly inside are checked out too;
 * files at the top are always in. A file with a line that is not a cone pattern is read as
 * non-cone patterns instead, with git's warnings, as git 2.39 does.
 *
 * Without core.sparseCheckoutCone the patterns are gitignore-style patterns read as git's
 * unpack-trees.c clear_ce_flags reads them: a path is in when the last pattern matching it is
 * positive, out when it is negative; a path no pattern matches takes the decision of its
 * nearest parent directory that one matches (matched as a directory), and is out when none is.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Repo } from '../repo/repo.js';
import { matches, parsePatterns, type Pattern } from './ignore.js';

export interface Cone {
  /** Directories checked out whole (latin1, no trailing slash). */
  recursive: Set<string>;
  /** Directories whose immediate files are checked out. */
  parents: Set<string>;
  // Cone mode with the all-top-level pattern but not the one that takes directories out after
  // it: every path is in.
  all?: boolean;
  /** Non-cone mode: the patterns, in file order (then `recursive`, `parents` are unused). */
  patterns?: Pattern[];
  /** Non-cone mode: the decision per directory (1 in, 0 out), filled as asked. */
  dirs?: Map<string, number>;
}

/** Undoes git's escaping of glob characters in cone patterns ("\\*" for a '*' in a name). */
function unescape(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/**
 * The cone of a repository, or null when sparse checkout is off. In cone mode a pattern that
 * is not a cone pattern makes git warn and read the whole file as non-cone patterns; `warn`
 * gets git's two warnings.
 */
export function readCone(repo: Repo, warn: (message: string) => void = () => {}): Cone | null {
  if (repo.config.getBool('core.sparsecheckout') !== true) return null;
  const file = join(repo.gitDir, 'info', 'sparse-checkout');
  let text: string;
  try {
    text = readFileSync(file, 'latin1');
  } catch {
    // git with no pattern file checks out nothing but the top-level files.
    text = '/*\n!/*/\n';
  }
  const nonCone = (): Cone => ({
    recursive: new Set(),
    parents: new Set(),
    patterns: parsePatterns(text, ''),
    dirs: new Map(),
  });
  if (repo.config.getBool('core.sparsecheckoutcone') !== true) return nonCone();
  const why = coneMismatch(text);
  if (why === null) return parseCone(text);
  warn(`unrecognized pattern: '${why}'`);
  warn('disabling cone pattern matching');
  return nonCone();
}

/** The first line (as git names it) that is not part of a cone pattern set, or null. */
function coneMismatch(text: string): string | null {
  const lines = coneLines(text);
  for (const [k, line] of lines.entries()) {
    if (line === '/*' || line === '!/*/') continue;
    const m = CONE_LINE.exec(line);
    if (!m || (m[1] === '!') !== (m[3] !== undefined)) return line.replace(/\/$/, '');
    if (m[1] === '!' && !lines.slice(0, k).includes(`/${m[2]}/`)) return line.replace(/\/$/, '');
  }
  return null;
}

const CONE_LINE = /^(!?)\/(.+?)\/(\*\/)?$/;

function coneLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '' && !l.startsWith('#'));
}

/** A cone pattern set (coneMismatch found nothing wrong in it). */
function parseCone(text: string): Cone {
  const lines = coneLines(text);
  const dirs = new Set<string>();
  const parents = new Set<string>();
  // "/*" without "!/*/" after it takes every directory in, as in git.
  const all = lines.includes('/*') && !lines.includes('!/*/');
  for (const line of lines) {
    if (line === '/*' || line === '!/*/') continue;
    const m = CONE_LINE.exec(line)!;
    const dir = unescape(m[2]!);
    if (m[1] === '!') parents.add(dir);
    else dirs.add(dir);
  }
  const recursive = new Set<string>();
  for (const d of dirs) if (!parents.has(d)) recursive.add(d);
  return { recursive, parents, all };
}

/** Non-cone mode: 1 when the last pattern matching `path` is positive, 0 negative, -1 none. */
function decide(patterns: Pattern[], path: string, isDir: boolean): number {
  const nameAt = path.lastIndexOf('/') + 1;
  for (let k = patterns.length - 1; k >= 0; k--) {
    const p = patterns[k]!;
    if (matches(p, path, nameAt, isDir)) return p.negative ? 0 : 1;
  }
  return -1;
}

/** Non-cone mode: a directory's decision, inherited from its parents where no pattern decides. */
function dirDecision(cone: Cone, dir: string): number {
  if (dir === '') return 0;
  const known = cone.dirs!.get(dir);
  if (known !== undefined) return known;
  let d = decide(cone.patterns!, dir, true);
  if (d < 0) d = dirDecision(cone, dir.slice(0, Math.max(dir.lastIndexOf('/'), 0)));
  cone.dirs!.set(dir, d);
  return d;
}

/** Whether a path (latin1) is inside the cone (non-cone mode: selected by the patterns). */
export function inCone(cone: Cone, path: string): boolean {
  if (cone.patterns) {
    const d = decide(cone.patterns, path, false);
    return (d < 0 ? dirDecision(cone, path.slice(0, Math.max(path.lastIndexOf('/'), 0))) : d) === 1;
  }
  const slash = path.lastIndexOf('/');
  if (slash < 0 || cone.all) return true;
  const dir = path.slice(0, slash);
  if (cone.parents.has(dir) || cone.recursive.has(dir)) return true;
  for (let s = dir.lastIndexOf('/'); s > 0; s = dir.lastIndexOf('/', s - 1)) {
    if (cone.recursive.has(dir.slice(0, s))) return true;
  }
  return false;
}
