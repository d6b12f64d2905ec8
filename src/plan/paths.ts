/**
 * git's path rules (its verify_path, with core.protectNTFS and core.protectHFS): which paths may
 * enter an index and a worktree. The rules live in one place, native/plan/path_rules.cc: the tree
 * walk applies them to every entry it returns, and this module applies the same code to paths
 * from anywhere else (an index read from disk, pathspecs) through the addon.
 */
import { EXPECTED_LAYOUT, loadAddon } from '../addon.js';
import { PcheckoutError } from '../errors.js';
import type { GitConfig } from '../repo/config.js';
import type { EntryList } from './entries.js';

export interface PathProtection {
  /** core.protectNTFS: refuse NTFS spellings of .git (git~1, ".git.", ".git::$INDEX_ALLOCATION"). Default true. */
  ntfs: boolean;
  /** core.protectHFS: refuse .git spelled with HFS+ ignorable code points (U+200C …). Default false on Linux. */
  hfs: boolean;
}

export interface PathVerdict {
  /** A stable name: empty, nul, slash, dot, dotdot, dotgit, ntfs-dotgit, hfs-dotgit, symlink-gitmodules, … */
  rule: string;
  /** What the rule forbids, for messages. */
  text: string;
}

export const DEFAULT_PROTECTION: PathProtection = { ntfs: true, hfs: false };

/** git's defaults on Linux, overridden by core.protectNTFS / core.protectHFS. */
export function pathProtection(config: GitConfig): PathProtection {
  return {
    ntfs: config.getBool('core.protectntfs') ?? true,
    hfs: config.getBool('core.protecthfs') ?? false,
  };
}

/** The bits the addon takes: 1 NTFS, 2 HFS. */
export function protectionBits(p: PathProtection): number {
  const { ntfs, hfs } = EXPECTED_LAYOUT.protect;
  return (p.ntfs ? ntfs : 0) | (p.hfs ? hfs : 0);
}

/**
 * Whether git would let `path` (slash-separated, relative) into an index as an entry of `mode`
 * (a symlink is held to more rules: no symlinked .gitmodules): null when it would, else the rule.
 * A string is taken as UTF-8; a Buffer as the path's exact bytes.
 */
export function verifyPath(
  path: string | Buffer,
  opts: Partial<PathProtection> & { mode?: number } = {},
): PathVerdict | null {
  const bytes = typeof path === 'string' ? Buffer.from(path, 'utf8') : path;
  const protect = { ...DEFAULT_PROTECTION, ...opts };
  const verdict = loadAddon().verifyPath(bytes, opts.mode ?? 0o100644, protectionBits(protect));
  return verdict === null ? null : { rule: verdict.rule, text: verdict.text };
}

/** Refuses a list (an index read from disk) holding a path git would refuse. */
export function assertSafePaths(list: EntryList, protect: PathProtection, source: string): void {
  if (list.count === 0) return;
  const bad = loadAddon().verifyPaths(
    list.paths,
    list.modes,
    protectionBits(protect),
    list.starts.subarray(0, list.count + 1),
  );
  if (bad === null) return;
  const path = list.display(bad.index);
  throw new PcheckoutError('ERR_UNSAFE_PATH', `unsafe path '${path}' in ${source}: ${bad.text}`, {
    path,
  });
}
