/**
 * The worktree as a directory handle: every operation resolves its (relative) path from the
 * root's descriptor in the addon, never as an absolute path and never through a symlink in a
 * leading component. A deep tree under a long worktree path works wherever git's relative
 * operations do (an absolute path would pass PATH_MAX first), and a link planted in the
 * worktree cannot redirect a mkdir, an unlink or a removal outside it. Failures come back as
 * errno names; deciding what they mean is the caller's.
 */
import { closeSync, writeSync } from 'node:fs';
import { getSystemErrorMap, getSystemErrorName } from 'node:util';
import type { Addon, NativeWorktree } from './addon.js';
import { PcheckoutError, fromNative } from './errors.js';
import { STAT_WORDS } from './index/write.js';

/** An errno name ('EEXIST', 'ELOOP', …), or null for success. */
export type Errno = string | null;

/** Latin1 paths as the addon takes a list of them: each one's bytes, NUL-terminated, concatenated. */
export const pathList = (rels: readonly string[]): Buffer =>
  Buffer.from(rels.map((r) => `${r}\0`).join(''), 'latin1');

const name = (errno: number): Errno => (errno === 0 ? null : getSystemErrorName(-errno));

/** The system's words for an errno name, e.g. 'no such file or directory'. */
function describeErrno(code: string): string {
  for (const [, [n, message]] of getSystemErrorMap()) if (n === code) return message;
  return code;
}

/** Paths are latin1 strings holding their exact bytes (EntryList's convention). */
const bytes = (rel: string): Buffer => Buffer.from(rel, 'latin1');
const display = (rel: string): string => Buffer.from(rel, 'latin1').toString('utf8');

export class WorktreeDir {
  private readonly native: NativeWorktree;
  private readonly words = new Uint32Array(STAT_WORDS);

  constructor(
    addon: Addon,
    readonly root: string,
  ) {
    try {
      this.native = new addon.Worktree(root);
    } catch (err) {
      throw fromNative(err, `cannot open the worktree ${root}`);
    }
  }

  close(): void {
    this.native.close();
  }

  /** An ERR_IO naming the path (relative, short) and the errno once. */
  error(code: string, action: string, rel: string): PcheckoutError {
    return new PcheckoutError(
      'ERR_IO',
      `cannot ${action} ${display(rel)}: ${describeErrno(code)} (${code})`,
      { path: display(rel) },
    );
  }

  mkdir(rel: string): Errno {
    return name(this.native.mkdir(bytes(rel)));
  }

  /**
   * Makes each directory (parents first) unless a real one is there, in one native call: null
   * for those done, the errno of the others (EEXIST: something else is there).
   */
  ensureDirs(rels: readonly string[]): Errno[] {
    if (rels.length === 0) return [];
    const paths = Buffer.from(`${rels.join('\0')}\0`, 'latin1');
    return [...this.native.ensureDirs(paths)].map(name);
  }

  /** mkdir of many independent directories on native threads (one depth at a time). */
  mkdirMany(rels: string[], threads: number): Errno[] {
    return [...this.native.mkdirMany(pathList(rels), threads)].map(name);
  }

  /** unlink of files (no directories) on up to `threads` threads, for a network filesystem. */
  unlinkMany(rels: string[], threads: number): Errno[] {
    return [...this.native.unlinkMany(pathList(rels), threads)].map(name);
  }

  unlink(rel: string): Errno {
    return name(this.native.unlink(bytes(rel)));
  }

  rmdir(rel: string): Errno {
    return name(this.native.rmdir(bytes(rel)));
  }

  /** rm -rf, links removed and never followed; nothing there is success. */
  removeTree(rel: string): Errno {
    return name(this.native.removeTree(bytes(rel)));
  }

  symlink(target: Buffer, rel: string): Errno {
    return name(this.native.symlink(target, bytes(rel)));
  }

  /** lstat into `out` (STAT_WORDS words, index-entry order, mode word = st_mode). */
  lstatInto(rel: string, out: Uint32Array): Errno {
    return name(this.native.lstat(bytes(rel), out));
  }

  /** The st_mode of rel, or its errno name. */
  lstatMode(rel: string): number | string {
    const err = this.lstatInto(rel, this.words);
    return err ?? this.words[6]!;
  }

  readlink(rel: string): Buffer | string {
    const r = this.native.readlink(bytes(rel));
    return typeof r === 'number' ? name(r)! : r;
  }

  /**
   * Per path of `paths` (NUL-terminated, concatenated): 1 when it is a regular file whose blob
   * id (its bytes as they are, read without following a symlink) is the one at 20 * i of
   * `oids`; hashed on up to `threads` native threads.
   */
  sameBlobs(paths: Buffer, oids: Buffer, threads: number): Uint8Array {
    return this.native.sameBlobs(paths, oids, threads);
  }

  /** The entries of directory rel ('' for the root), or its errno name. */
  list(rel: string): { name: string; dir: boolean }[] | string {
    const r = this.native.list(bytes(rel));
    if (typeof r === 'number') return name(r)!;
    const out: { name: string; dir: boolean }[] = [];
    let pos = 0;
    for (let i = 0; i < r.dirs.length; i++) {
      const end = r.names.indexOf(0, pos);
      out.push({ name: r.names.toString('latin1', pos, end), dir: r.dirs[i] === 1 });
      pos = end + 1;
    }
    return out;
  }

  /** A descriptor to read rel (a final symlink is refused), or its errno name. */
  openRead(rel: string): number | string {
    const fd = this.native.open(bytes(rel), 'read', 0);
    return fd >= 0 ? fd : name(-fd)!;
  }

  /** Creates rel (exclusively, `perm` less the umask) holding `data`; or an errno name. */
  writeNew(rel: string, data: Buffer, perm: number): Errno {
    const fd = this.native.open(bytes(rel), 'create', perm);
    if (fd < 0) return name(-fd);
    try {
      for (let off = 0; off < data.length;) off += writeSync(fd, data, off);
    } catch (err) {
      closeSync(fd);
      this.unlink(rel);
      return (err as NodeJS.ErrnoException).code ?? 'EIO';
    }
    closeSync(fd);
    return null;
  }
}
