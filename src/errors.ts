/** Every error pcheckout raises on purpose: one class, one table of codes. */
export const ErrorCodes = {
  ERR_INVALID_OPTION: 'an option has the wrong type or value',
  ERR_BAD_CONFIG: 'a config file is malformed or unreadable, or its includes go too deep',
  ERR_NOT_A_REPOSITORY: 'no git repository was found',
  ERR_UNSUPPORTED: 'the repository uses a feature pcheckout does not support',
  ERR_BAD_REF: 'the revision does not name a commit or tree',
  ERR_AMBIGUOUS_REF: 'an abbreviated object id matches more than one object',
  ERR_MISSING_OBJECT: 'an object the checkout needs is not in the repository',
  ERR_FETCH: "a partial clone's missing blobs could not be fetched from its promisor remote",
  ERR_CORRUPT_OBJECT: 'an object is malformed',
  ERR_CORRUPT_PACK: 'a packfile or pack index is corrupt',
  ERR_UNSAFE_PATH: 'a path in the tree may not be written to a worktree',
  ERR_WOULD_OVERWRITE: 'local changes or untracked files would be overwritten or removed',
  ERR_UNMERGED: 'the index has unmerged entries',
  ERR_PATHSPEC: 'a pathspec is malformed or matches nothing',
  ERR_CORRUPT_INDEX: 'the index file is malformed or fails its checksum',
  ERR_INDEX_LOCKED: 'another process holds the index lock',
  ERR_REF_LOCKED: 'another process holds a ref lock',
  ERR_CONFIG_LOCKED: 'another process holds the config file lock',
  ERR_BRANCH_CHECKED_OUT: 'the branch is checked out in another worktree',
  ERR_WRITE_FAILED: 'files could not be written',
  ERR_IO: 'a filesystem operation failed',
  ERR_TOO_LARGE: 'an object is too large to hold in memory',
  ERR_ABORTED: 'the checkout was aborted',
  ERR_CALLBACK: 'a callback given in the options (onProgress) threw',
  ERR_FILTER_FAILED: 'a required filter driver failed, or a delayed file never came back',
  ERR_ADDON_LOAD: 'the native addon could not be loaded',
  ERR_INTERNAL: "pcheckout's own bug: an internal check failed",
  ERR_BAD_ATTRIBUTE: 'an attribute has a value git refuses',
  ERR_TARGET_NOT_OURS:
    "a materialize target is a git repository, or a non-empty directory without pcheckout's record",
  ERR_DUBIOUS_OWNERSHIP:
    'the repository is owned by another user and safe.directory does not allow it (git exits 128)',
} as const;

export type ErrorCode = keyof typeof ErrorCodes;

export interface PcheckoutErrorDetails {
  path?: string;
  oid?: string;
  /** Every path the error concerns, sorted (e.g. the local changes a switch would overwrite). */
  paths?: string[];
  /** A checkout that stopped after it began to change the worktree: what it had done. */
  written?: WrittenSoFar;
  /** ERR_WOULD_OVERWRITE: the paths in the way by kind, as git's message groups them. */
  overwrite?: Overwrite;
  cause?: unknown;
}

/** What a checkout would overwrite, in git's groups (each sorted). */
export interface Overwrite {
  /** Tracked files with local changes. */
  modified: string[];
  /** Untracked files that would be overwritten or removed, and directories that would lose untracked files. */
  untracked: string[];
  /** `untracked` by git's heading: files overwritten, files removed, directories losing untracked files. */
  overwritten: string[];
  removed: string[];
  directories: string[];
}

/** How far a checkout got in the worktree before it stopped (the index and HEAD unchanged). */
export interface WrittenSoFar {
  /** The step it stopped in. */
  stage: 'remove' | 'directories' | 'files' | 'links' | 'collisions';
  /** Old entries removed. */
  removed: number;
  /** Files and links written, of `total`. */
  files: number;
  total: number;
}

export class PcheckoutError extends Error {
  readonly code: ErrorCode;
  readonly path: string | undefined;
  readonly oid: string | undefined;
  readonly paths: string[] | undefined;
  readonly written: WrittenSoFar | undefined;
  readonly overwrite: Overwrite | undefined;

  constructor(code: ErrorCode, message: string, details: PcheckoutErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'PcheckoutError';
    this.code = code;
    this.path = details.path;
    this.oid = details.oid;
    this.paths = details.paths;
    this.written = details.written;
    this.overwrite = details.overwrite;
  }
}

/** ERR_CALLBACK for an onProgress callback that threw `err` (its cause). */
export function callbackFailure(err: unknown): PcheckoutError {
  return new PcheckoutError(
    'ERR_CALLBACK',
    `the onProgress callback threw: ${(err as Error)?.message ?? String(err)}`,
    { cause: err },
  );
}

/** The same error, carrying how far the worktree got (`message`: a new one, else the old). */
export function withWritten(err: unknown, written: WrittenSoFar, message?: string): unknown {
  if (!(err instanceof PcheckoutError)) return err;
  return new PcheckoutError(err.code, message ?? err.message, {
    ...detailsOf(err),
    written,
    // The same error restated: its cause stays (an abort's reason, a callback's error).
    cause: err.cause ?? err,
  });
}

/** What an error names (path, oid, paths), to carry into one that replaces it. */
export function detailsOf(err: PcheckoutError): PcheckoutErrorDetails {
  return {
    ...(err.path !== undefined ? { path: err.path } : {}),
    ...(err.oid !== undefined ? { oid: err.oid } : {}),
    ...(err.paths !== undefined ? { paths: err.paths } : {}),
    ...(err.overwrite !== undefined ? { overwrite: err.overwrite } : {}),
  };
}

export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ErrorCodes, code);
}

/**
 * Turns an error thrown by the addon (an Error with a `code`, one of the table's: the addon's
 * codes are checked when it loads) into a PcheckoutError. One without a code is a C++
 * exception no native code meant to raise.
 */
export function fromNative(err: unknown, context: string): PcheckoutError {
  if (err instanceof PcheckoutError) return err;
  const e = err as { code?: unknown; message?: unknown };
  const code: ErrorCode = isErrorCode(e?.code) ? e.code : 'ERR_INTERNAL';
  const detail = typeof e?.message === 'string' ? e.message : String(err);
  return new PcheckoutError(code, `${context}: ${detail}`, { cause: err });
}

/**
 * What went wrong in a Node fs error, once: "ENOENT: no such file or directory, open '/x'"
 * becomes "no such file or directory (ENOENT)" — the path is the caller's to name.
 */
export function systemReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const message = String(e?.message ?? err);
  if (typeof e?.code !== 'string') return message;
  const prefix = `${e.code}: `;
  let text = message.startsWith(prefix) ? message.slice(prefix.length) : message;
  if (typeof e.syscall === 'string') {
    const at = text.lastIndexOf(`, ${e.syscall}`);
    if (at >= 0) text = text.slice(0, at);
  }
  return `${text} (${e.code})`;
}

/** Wraps a Node fs error (ENOENT, EACCES, …) with the path it concerns. */
export function fromSystem(err: unknown, action: string, path: string): PcheckoutError {
  return new PcheckoutError('ERR_IO', `cannot ${action} ${path}: ${systemReason(err)}`, {
    path,
    cause: err,
  });
}
