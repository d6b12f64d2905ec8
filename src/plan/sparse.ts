/**
 * Cone-mode sparse checkout (git-sparse-checkout(1) "INTERNALS — CONE PATTERN SET"): the
 * patterns in $GIT_DIR/info/sparse-checkout name directories whose whole content is checked
 * out (recursive) and their parents, whose files directly inside are checked out too; files
 * at the top are always in. Everything else gets the skip-worktree bit and no file. Non-cone
 * patterns are refused rather than misread.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PcheckoutError } from '../errors.js';
import type { Repo } from '../repo/repo.js';

export interface Cone {
  /** Directories checked out whole (latin1, no trailing slash). */
  recursive: Set<string>;
  /** Directories whose immediate files are checked out. */
  parents: Set<string>;
}

function unsupported(why: string): PcheckoutError {
  return new PcheckoutError(
    'ERR_UNSUPPORTED',
    `sparse checkout: ${why}; pcheckout supports cone mode only (git sparse-checkout set --cone)`,
  );
}

/** Undoes git's escaping of glob characters in cone patterns ("\\*" for a '*' in a name). */
function unescape(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/** The cone of a repository, or null when sparse checkout is off. */
export function readCone(repo: Repo): Cone | null {
  if (repo.config.getBool('core.sparsecheckout') !== true) return null;
  if (repo.config.getBool('core.sparsecheckoutcone') !== true) {
    throw unsupported('core.sparseCheckout is on without core.sparseCheckoutCone');
  }
  const file = join(repo.gitDir, 'info', 'sparse-checkout');
  let text: string;
  try {
    text = readFileSync(file, 'latin1');
  } catch {
    // git with no pattern file checks out nothing but the top-level files.
    text = '/*\n!/*/\n';
  }
  const lines = text
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '' && !l.startsWith('#'));
  if (lines[0] !== '/*' || lines[1] !== '!/*/') {
    throw unsupported(`${file} does not start with the cone patterns "/*" and "!/*/"`);
  }
  const dirs = new Set<string>();
  const parents = new Set<string>();
  for (const line of lines.slice(2)) {
    const m = /^(!?)\/(.+?)\/(\*\/)?$/.exec(line);
    if (!m || (m[1] === '!') !== (m[3] !== undefined)) {
      throw unsupported(`'${line}' in ${file} is not a cone pattern`);
    }
    const dir = unescape(m[2]!);
    if (m[1] === '!') parents.add(dir);
    else dirs.add(dir);
  }
  const recursive = new Set<string>();
  for (const d of dirs) if (!parents.has(d)) recursive.add(d);
  for (const p of parents) {
    if (!dirs.has(p)) throw unsupported(`'!/${p}/*/' in ${file} has no '/${p}/' before it`);
  }
  return { recursive, parents };
}

/** Whether a path (latin1) is inside the cone. */
export function inCone(cone: Cone, path: string): boolean {
  const slash = path.lastIndexOf('/');
  if (slash < 0) return true;
  const dir = path.slice(0, slash);
  if (cone.parents.has(dir) || cone.recursive.has(dir)) return true;
  for (let s = dir.lastIndexOf('/'); s > 0; s = dir.lastIndexOf('/', s - 1)) {
    if (cone.recursive.has(dir.slice(0, s))) return true;
  }
  return false;
}
