/**
 * A repository whose path is not valid UTF-8 (`git -C $'/srv/r\xff'` works): a JavaScript string
 * cannot spell such a path, so the caller gives its bytes (a Buffer; the CLI reads them from
 * /proc/self/cmdline) and the call works through a directory descriptor instead. The worktree's
 * top is found by walking up the bytes as discovery does, opened, and named `/proc/self/fd/<n>`
 * for the rest of the call: a path every fs call, the native writers and a child's cwd resolve
 * to that directory. The descriptor lives as long as the call; its errors name the directory as
 * the bytes decode (U+FFFD for each byte that is not UTF-8), not by the descriptor.
 *
 * Linux only (it needs /proc), and a `.git` file there must name its git directory by an
 * absolute path (a relative one is resolved textually, which a descriptor path cannot climb).
 */
import { closeSync, constants, lstatSync, openSync, realpathSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { detailsOf, PcheckoutError, type PcheckoutErrorDetails } from '../errors.js';

/** A repository path as a caller gives it: text, or its bytes when they are not UTF-8. */
export type RepoPath = string | Uint8Array;

/** Where a call opens its repository from, and what it holds open to do so. */
export interface StartPath {
  /** The path to open the repository from (a descriptor path for a non-UTF-8 one). */
  path: string;
  /** The same directory as a person reads it, for messages and the call's route. */
  shown: string;
  /** Releases the descriptor, if one was opened. */
  close(): void;
  /** An error of the call with the descriptor path replaced by `shown`. */
  relabel(err: unknown): unknown;
}

const FD_DIR = '/proc/self/fd/';

/** Whether `path` names a directory by a descriptor this module opened. */
export function isDescriptorPath(path: string): boolean {
  return path.startsWith(FD_DIR);
}

/** The call's route (call/threads.ts): the path resolved, its bytes decoded as UTF-8 would read. */
export function routeOf(path: RepoPath): string {
  return resolve(typeof path === 'string' ? path : Buffer.from(path).toString('utf8'));
}

/**
 * What names a file the same for every call of the process: the path, or for one under a
 * descriptor (whose number the next call may not get) its directory's real bytes.
 */
export function stableKey(path: string): string {
  if (!isDescriptorPath(path)) return path;
  try {
    return `bytes:${realpathSync.native(dirname(path), { encoding: 'buffer' }).toString('hex')}/${path.slice(dirname(path).length + 1)}`;
  } catch {
    return path;
  }
}

/**
 * `path` as a child running in `cwd` can use it: a descriptor path means nothing in another
 * process (and ours close at its exec), so one under the child's cwd is given relative to it.
 */
export function forChild(path: string, cwd: string): string {
  if (!isDescriptorPath(path) || !isDescriptorPath(cwd)) return path;
  const rel = relative(cwd, path);
  // As git spells its own (.git/hooks/post-checkout); a bare name would be looked up in PATH.
  if (rel === '') return '.';
  if (rel.startsWith('..')) return path;
  return rel.includes('/') ? rel : `./${rel}`;
}

/** The bytes a descriptor path (`/proc/self/fd/<n>/rest`) names: its directory's, then the rest. */
export function descriptorBytes(path: string): Buffer {
  const m = /^\/proc\/self\/fd\/\d+/.exec(path);
  if (m === null) return Buffer.from(path);
  return Buffer.concat([
    realpathSync.native(m[0], { encoding: 'buffer' }),
    Buffer.from(path.slice(m[0].length)),
  ]);
}

/** `bytes` as UTF-8 text when they are exactly that, else null. */
export function exactUtf8(bytes: Uint8Array): string | null {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = buf.toString('utf8');
  return Buffer.from(text, 'utf8').equals(buf) ? text : null;
}

export function openStartPath(given: RepoPath, env: NodeJS.ProcessEnv = process.env): StartPath {
  const text = typeof given === 'string' ? given : exactUtf8(given);
  if (text !== null) return plain(text);
  const parts = absoluteParts(Buffer.from(given as Uint8Array));
  const shown = `/${parts.map((p) => p.toString('utf8')).join('/')}`;
  // git's discovery walks up to the directory holding .git; GIT_DIR names it instead.
  const top = env['GIT_DIR'] ? parts.length : topOf(parts);
  const rest = parts.slice(top).map((p) => exactUtf8(p));
  if (rest.some((p) => p === null)) {
    throw new PcheckoutError(
      'ERR_NOT_A_REPOSITORY',
      `${shown}: a worktree whose path is not UTF-8 is opened from its top directory, not from below it`,
      { path: shown },
    );
  }
  const topBytes = join(parts.slice(0, top));
  let fd: number;
  try {
    fd = openSync(topBytes, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch {
    throw new PcheckoutError('ERR_NOT_A_REPOSITORY', `${shown} does not exist`, { path: shown });
  }
  const fdPath = `${FD_DIR}${fd}`;
  const topShown = topBytes.toString('utf8');
  let open = true;
  return {
    path: rest.length === 0 ? fdPath : `${fdPath}/${rest.join('/')}`,
    shown,
    close: () => {
      if (open) closeSync(fd);
      open = false;
    },
    relabel: (err) => relabel(err, fdPath, topShown),
  };
}

function plain(path: string): StartPath {
  return { path, shown: path, close: () => {}, relabel: (err) => err };
}

/** The path's components, made absolute against the cwd and with `.` and `..` taken out. */
function absoluteParts(bytes: Buffer): Buffer[] {
  const full = bytes[0] === 0x2f ? bytes : Buffer.concat([Buffer.from(`${process.cwd()}/`), bytes]);
  const parts: Buffer[] = [];
  let from = 0;
  for (let i = 0; i <= full.length; i++) {
    if (i < full.length && full[i] !== 0x2f) continue;
    const part = full.subarray(from, i);
    from = i + 1;
    const name = part.toString('latin1');
    if (name === '' || name === '.') continue;
    if (name === '..') parts.pop();
    else parts.push(part);
  }
  return parts;
}

function join(parts: Buffer[]): Buffer {
  const slash = Buffer.from('/');
  return Buffer.concat(parts.length === 0 ? [slash] : parts.flatMap((p) => [slash, p]));
}

/** How many components the worktree's top has: the nearest directory up with `.git` in it. */
function topOf(parts: Buffer[]): number {
  for (let n = parts.length; n >= 0; n--) {
    if (exists(Buffer.concat([join(parts.slice(0, n)), Buffer.from(n === 0 ? '.git' : '/.git')])))
      return n;
  }
  // None: the start itself, where a bare repository may be (or the error says it is none).
  return parts.length;
}

function exists(path: Buffer): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function relabel(err: unknown, fdPath: string, shown: string): unknown {
  if (!(err instanceof PcheckoutError)) return err;
  // The descriptor's number whole: /proc/self/fd/1 is no prefix of /proc/self/fd/12.
  const at = new RegExp(`${fdPath.replace(/\//g, '\\/')}(?![0-9])`, 'g');
  const swap = (s: string): string => s.replace(at, () => shown);
  const details: PcheckoutErrorDetails = { ...detailsOf(err), cause: err.cause };
  if (err.path !== undefined) details.path = swap(err.path);
  if (err.written !== undefined) details.written = err.written;
  return new PcheckoutError(err.code, swap(err.message), details);
}
