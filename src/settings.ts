import { resolve } from 'node:path';
import { PcheckoutError } from './errors.js';
import type { RacyPolicy } from './index/racy.js';
import {
  MAX_WORKERS,
  invalidOption,
  optionalBoolean,
  optionalFunction,
  optionalInteger,
  optionalSignal,
  optionalString,
} from './options.js';
import type { FsyncMode } from './write/durability.js';
import type { Progress } from './run/control.js';

export interface CheckoutOptions {
  /**
   * A revision as `git checkout` takes it (branch, tag, id, `-`, `rev~n`, …; docs/git.md's
   * Revisions); default: HEAD. A tree only for materialize.
   */
  ref?: string;
  /**
   * Overwrite local changes and untracked files in the way, as `git checkout -f`; without a
   * ref, reset the index and worktree to HEAD. Also brings a half-written worktree (a killed
   * checkout) to the exact target.
   */
  force?: boolean;
  /** Make the worktree match the index, as `git checkout-index -a -f` (no ref). */
  restore?: boolean;
  /**
   * Pathspecs (git's syntax, relative to the worktree top): with a ref, as
   * `git checkout <ref> -- <paths>` (HEAD stays; the matching entries are set from the ref);
   * without, as `git checkout -- <paths>` (the matching files restored from the index).
   */
  paths?: string[];
  /**
   * Worker threads for the pool; 0 = one per core. Default: `checkout.workers`, else one per core
   * (16 on a network filesystem, where the threads mostly wait for the server).
   */
  workers?: number;
  /** Use the pool only above this many entries. Default: `checkout.thresholdForParallelism`, else 100. */
  threshold?: number;
  /** Called as the call goes: at each phase, as files finish (per chunk), and at least every 100 ms. */
  onProgress?: (progress: Progress) => void;
  /** Stops handing out work; files written so far stay, no index is written. */
  signal?: AbortSignal;
  /**
   * git trusts an entry's stat data only if the index is from a later second than the file
   * ("racy git"); otherwise it re-reads and hashes the file on its next look. `'auto'` (the
   * default) waits for the clock to leave the second of the newest file (at most ~1 s) only when
   * git's re-hash of the files written in that second would cost more than the wait; `true` /
   * `'always'` always waits, `false` / `'never'` never does.
   */
  racyWait?: boolean | RacyPolicy;
  /** Run the post-checkout hook as git does (not for a restore); default true. */
  hooks?: boolean;
  /**
   * Durability of the worktree before the index is committed: `'none'`, `'file'` (fsync each
   * file and changed directory) or `'batch'` (writeback started per file, one barrier). Default:
   * the `pcheckout.fsync` config key, else `'none'`. See docs/filesystems.md for what each guarantees.
   */
  fsync?: FsyncMode;
  /**
   * Plan only: resolve with what the call would do (`changes`: the paths it would create,
   * update and delete; `stops`: what refuses it, e.g. local changes in the way) and touch
   * nothing: no lock, no file, no index, no target directory made.
   */
  dryRun?: boolean;
  /** Return the paths created, updated and deleted in the summary's `changes` (a dry run always does). */
  changes?: boolean;
  /**
   * A store of worktree-ready files shared by every call that names it (docs/store.md): files
   * it holds are imported (reflink where the filesystem can, else copy_file_range or a copy),
   * the others written from the pack and added. A directory, or `{ dir, maxBytes }` to keep
   * it under a size (the least recently used entries go first).
   */
  store?: string | StoreOption;
}

export interface StoreOption {
  dir: string;
  /** Prune the store to below this many bytes after a call that added to it (default: no bound). */
  maxBytes?: number;
  /**
   * Hard-link files from the store instead of copying them: the tree's files are the store's
   * entries, read-only (an edit in one tree would change every tree). Default false.
   */
  link?: boolean;
}

/** The store option resolved: an absolute directory and its bound (null: none). */
export interface StoreSettings {
  dir: string;
  maxBytes: number | null;
  link: boolean;
}

/** Options of `materialize()`: the same as a checkout's, less what concerns a repository's own worktree. */
/**
 * A materialize's options: a checkout's, less restore and hooks. `force` takes a non-empty
 * directory that holds no pcheckout record (never a git repository).
 */
export type MaterializeOptions = Omit<CheckoutOptions, 'restore' | 'hooks'>;

export interface Settings {
  ref: string | undefined;
  force: boolean;
  restore: boolean;
  paths: string[] | undefined;
  workers: number | undefined;
  threshold: number | undefined;
  onProgress: ((p: Progress) => void) | undefined;
  signal: AbortSignal | undefined;
  racyWait: RacyPolicy;
  hooks: boolean;
  fsync: FsyncMode | undefined;
  dryRun: boolean;
  changes: boolean;
  store: StoreSettings | null;
}

const FSYNC_MODES: readonly FsyncMode[] = ['none', 'file', 'batch'];

/** The fsync option. */
export function fsyncMode(name: string, value: unknown): FsyncMode | undefined {
  if (value === undefined) return undefined;
  if (!FSYNC_MODES.includes(value as FsyncMode)) {
    throw invalidOption(name, "'none', 'file' or 'batch'", value);
  }
  return value as FsyncMode;
}

/** The pcheckout.fsync config value: a bad one is the repository's fault, not the caller's. */
export function fsyncFromConfig(value: string | undefined): FsyncMode | undefined {
  if (value === undefined) return undefined;
  if (!FSYNC_MODES.includes(value as FsyncMode)) {
    throw new PcheckoutError(
      'ERR_BAD_CONFIG',
      `bad pcheckout.fsync value '${value}' (expected none, file or batch)`,
    );
  }
  return value as FsyncMode;
}

function racyPolicy(value: unknown): RacyPolicy {
  if (value === undefined || value === 'auto') return 'auto';
  if (value === true || value === 'always') return 'always';
  if (value === false || value === 'never') return 'never';
  throw invalidOption('racyWait', "a boolean or 'auto', 'always', 'never'", value);
}

const CHECKOUT_KEYS = new Set([
  'ref',
  'force',
  'restore',
  'paths',
  'workers',
  'threshold',
  'onProgress',
  'signal',
  'racyWait',
  'hooks',
  'fsync',
  'dryRun',
  'changes',
  'store',
]);

/** The store option: a directory (resolved against the caller's cwd now), with an optional bound. */
export function storeOption(value: unknown): StoreSettings | null {
  if (value === undefined) return null;
  const o =
    typeof value === 'string'
      ? { dir: value }
      : value !== null && typeof value === 'object' && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : null;
  if (o === null || typeof o['dir'] !== 'string' || o['dir'] === '' || o['dir'].includes('\0')) {
    throw invalidOption('store', 'a directory or { dir, maxBytes }', value);
  }
  for (const key of Object.keys(o)) {
    if (key !== 'dir' && key !== 'maxBytes' && key !== 'link') {
      throw new PcheckoutError(
        'ERR_INVALID_OPTION',
        `Unknown store option '${key}' (known: dir, maxBytes, link)`,
      );
    }
  }
  const maxBytes = optionalInteger('store.maxBytes', o['maxBytes'], 1);
  const link = optionalBoolean('store.link', o['link']) ?? false;
  return { dir: resolve(o['dir']), maxBytes: maxBytes ?? null, link };
}

function optionalPaths(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  // An empty list names nothing: not a restore of everything (git: "you must specify path(s)").
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    value.some((p) => typeof p !== 'string' || p === '')
  ) {
    throw invalidOption('paths', 'a non-empty array of non-empty strings', value);
  }
  return [...(value as string[])];
}

export function validate(
  repoPath: unknown,
  options: unknown,
  allowed: ReadonlySet<string> = CHECKOUT_KEYS,
): Settings {
  // Bytes (a Buffer) for a path that is not valid UTF-8; no NUL, which no path holds.
  const bytes = repoPath instanceof Uint8Array;
  if (
    !(typeof repoPath === 'string' || bytes) ||
    repoPath.length === 0 ||
    (bytes ? repoPath.includes(0) : repoPath.includes('\0'))
  ) {
    throw new PcheckoutError(
      'ERR_INVALID_OPTION',
      `Expected a non-empty string or Buffer for repoPath but received ${String(repoPath)}`,
    );
  }
  if (options === null || typeof options !== 'object') {
    throw new PcheckoutError('ERR_INVALID_OPTION', 'Expected an object for options');
  }
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!allowed.has(key)) {
      throw new PcheckoutError(
        'ERR_INVALID_OPTION',
        `Unknown option '${key}' (known: ${[...allowed].join(', ')})`,
      );
    }
  }
  const settings: Settings = {
    ref: optionalString('ref', o['ref']),
    force: optionalBoolean('force', o['force']) ?? false,
    restore: optionalBoolean('restore', o['restore']) ?? false,
    paths: optionalPaths(o['paths']),
    workers: optionalInteger('workers', o['workers'], 0, MAX_WORKERS),
    threshold: optionalInteger('threshold', o['threshold'], 0),
    onProgress: optionalFunction<(p: Progress) => void>('onProgress', o['onProgress']),
    signal: optionalSignal('signal', o['signal']),
    racyWait: racyPolicy(o['racyWait']),
    hooks: optionalBoolean('hooks', o['hooks']) ?? true,
    fsync: fsyncMode('fsync', o['fsync']),
    dryRun: optionalBoolean('dryRun', o['dryRun']) ?? false,
    changes: optionalBoolean('changes', o['changes']) ?? false,
    store: storeOption(o['store']),
  };
  if (settings.restore && settings.ref !== undefined) {
    throw new PcheckoutError(
      'ERR_INVALID_OPTION',
      `Expected no ref with option restore (it restores from the index) but received '${settings.ref}'`,
    );
  }
  return settings;
}

const MATERIALIZE_KEYS = new Set(
  [...CHECKOUT_KEYS].filter((k) => k !== 'restore' && k !== 'hooks'),
);

export function validateMaterialize(
  repoPath: unknown,
  target: unknown,
  options: unknown,
): Settings {
  if (typeof target !== 'string' || target === '') {
    throw new PcheckoutError(
      'ERR_INVALID_OPTION',
      `Expected a non-empty string for targetDir but received ${String(target)}`,
    );
  }
  return validate(repoPath, options, MATERIALIZE_KEYS);
}
