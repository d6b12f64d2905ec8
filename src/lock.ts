import {
  closeSync,
  fstatSync,
  fsyncSync,
  futimesSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
  writevSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { getSystemErrorMap } from 'node:util';
import { PcheckoutError, fromSystem, type ErrorCode } from './errors.js';
import { adjustSharedPerm } from './perms.js';

/**
 * The locks this thread holds. As git's tempfile.c removes its locks at exit, so do we: a
 * process.exit() (or the end of a worker thread) in the middle of a checkout leaves no
 * index.lock or HEAD.lock behind. (A SIGKILL leaves them, as it does git's.)
 */
const held = new Set<LockFile>();
let exitHook = false;

/** Told of every lock this thread takes and lets go (an orchestrator thread tells its caller's). */
let observer: ((path: string, held: boolean) => void) | null = null;

export function setLockObserver(fn: ((path: string, held: boolean) => void) | null): void {
  observer = fn;
}

function hold(lock: LockFile): void {
  held.add(lock);
  observer?.(lock.lockPath, true);
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const l of [...held]) l.rollback();
  });
}

function letGo(lock: LockFile): void {
  if (held.delete(lock)) observer?.(lock.lockPath, false);
}

/**
 * git's lockfile protocol: create `<file>.lock` exclusively, write it, rename it over the file.
 * Whoever holds the lock owns the file; a lock we did not create is never removed.
 */
export class LockFile {
  private fd: number | undefined;
  private done = false;
  readonly lockPath: string;

  /** `shared`: the repository's core.sharedRepository (see perms.ts), applied to the lock. */
  constructor(
    readonly target: string,
    lockedCode: ErrorCode,
    shared = 0,
  ) {
    this.lockPath = `${target}.lock`;
    try {
      // Read and write: an index's checksum is read back before it is committed (tail).
      this.fd = openSync(this.lockPath, 'wx+', 0o666);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new PcheckoutError(
          lockedCode,
          `Unable to create '${this.lockPath}': File exists. Another git process seems to be running in this repository; if not, remove the file and try again.`,
          { path: this.lockPath },
        );
      }
      throw fromSystem(err, 'create', this.lockPath);
    }
    hold(this);
    try {
      adjustSharedPerm(this.lockPath, shared);
    } catch (err) {
      this.rollback();
      throw err;
    }
  }

  write(data: Buffer | string): void {
    if (this.fd === undefined) throw new PcheckoutError('ERR_IO', `${this.lockPath} is not open`);
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    let off = 0;
    try {
      while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
    } catch (err) {
      throw fromSystem(err, 'write', this.lockPath);
    }
  }

  /** Writes several buffers in order, gathered (writev) rather than joined first. */
  writeAll(parts: readonly Buffer[]): void {
    if (this.fd === undefined) throw new PcheckoutError('ERR_IO', `${this.lockPath} is not open`);
    const IOV_MAX = 1024;
    try {
      for (let i = 0; i < parts.length; i += IOV_MAX) {
        let batch = parts.slice(i, i + IOV_MAX);
        let want = batch.reduce((n, b) => n + b.length, 0);
        while (want > 0) {
          let done = writevSync(this.fd, batch);
          want -= done;
          // A short write: carry on from where it stopped.
          while (done > 0 && batch.length > 0) {
            if (done >= batch[0]!.length) {
              done -= batch[0]!.length;
              batch = batch.slice(1);
            } else {
              batch = [batch[0]!.subarray(done), ...batch.slice(1)];
              done = 0;
            }
          }
        }
      }
    } catch (err) {
      throw fromSystem(err, 'write', this.lockPath);
    }
  }

  /**
   * Writes the lock file through `write`, given its descriptor, which returns 0 or the errno
   * of a write that failed (a native writer's), thrown as that error.
   */
  writeThrough(write: (fd: number) => number): void {
    if (this.fd === undefined) throw new PcheckoutError('ERR_IO', `${this.lockPath} is not open`);
    const errno = write(this.fd);
    if (errno === 0) return;
    const [code, text] = getSystemErrorMap().get(-errno) ?? ['EIO', 'i/o error'];
    const err = Object.assign(new Error(`${code}: ${text}, write`), {
      code,
      errno: -errno,
      syscall: 'write',
    });
    throw fromSystem(err, 'write', this.lockPath);
  }

  /** The lock file's modification time, in whole seconds. */
  mtimeSeconds(): number {
    return Number(fstatSync(this.fd!, { bigint: true }).mtimeNs / 1_000_000_000n);
  }

  /** Sets the lock file's times to the current time. */
  touch(): void {
    const now = Date.now() / 1000;
    futimesSync(this.fd!, now, now);
  }

  /**
   * The last `n` bytes written (an index file's checksum), read back through the lock's own
   * descriptor before it is committed; null where there are fewer.
   */
  tail(n: number): Buffer | null {
    if (this.fd === undefined) throw new PcheckoutError('ERR_IO', `${this.lockPath} is not open`);
    const size = fstatSync(this.fd).size;
    if (size < n) return null;
    const out = Buffer.alloc(n);
    return readSync(this.fd, out, 0, n, size - n) === n ? out : null;
  }

  /**
   * Closes the lock and renames it over the target. Durable: the lock is fsynced before the
   * rename and its directory after, so the new file (and only a complete one) survives a crash.
   */
  commit(durable = false): void {
    try {
      if (durable) fsyncSync(this.fd!);
      closeSync(this.fd!);
      this.fd = undefined;
      renameSync(this.lockPath, this.target);
      this.done = true;
      letGo(this);
      if (durable) fsyncDir(dirname(this.target));
    } catch (err) {
      this.rollback();
      throw fromSystem(err, 'rename into place', this.target);
    }
  }

  /** Removes the lock, leaving the target as it was. Safe to call more than once. */
  rollback(): void {
    if (this.done) return;
    this.done = true;
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        /* closing is best effort here */
      }
      this.fd = undefined;
    }
    try {
      unlinkSync(this.lockPath);
    } catch {
      /* already gone */
    }
    letGo(this); // after the unlink: until then the caller's thread may still remove it
  }
}

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
