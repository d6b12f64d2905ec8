import { chmodSync, statSync } from 'node:fs';
import { PcheckoutError } from './errors.js';

/**
 * `core.sharedRepository` as git parses it (git_config_perm): 0 = umask (leave modes alone),
 * a positive mask = bits added (group 0660, all 0664), a negative mask = exact mode (0xxx).
 */
export function parseSharedRepository(value: string | undefined): number {
  if (value === undefined) return 0;
  const v = value.trim().toLowerCase();
  if (v === '' || v === 'umask' || v === 'false' || v === 'no' || v === 'off') return 0;
  if (v === 'group' || v === 'true' || v === 'yes' || v === 'on') return 0o660;
  if (v === 'all' || v === 'world' || v === 'everybody') return 0o664;
  if (!/^[0-7]+$/.test(v)) {
    throw new PcheckoutError('ERR_BAD_CONFIG', `bad core.sharedRepository value '${value}'`);
  }
  const n = parseInt(v, 8);
  if (n === 0) return 0;
  if (n === 1) return 0o660;
  if (n === 2) return 0o664;
  if ((n & 0o600) !== 0o600) {
    throw new PcheckoutError(
      'ERR_BAD_CONFIG',
      `problem with core.sharedRepository filemode value (0${n.toString(8)}): the owner of files must always have read and write permissions`,
    );
  }
  return -(n & 0o666);
}

/** git's calc_shared_perm: the mode a file of mode `mode` gets in a shared repository. */
export function sharedMode(shared: number, mode: number): number {
  let tweak = Math.abs(shared);
  if (!(mode & 0o200)) tweak &= ~0o222;
  if (mode & 0o100) tweak |= (tweak & 0o444) >> 2;
  return shared < 0 ? (mode & ~0o777) | tweak : mode | tweak;
}

/** git's adjust_shared_perm: chmod a file or directory git (or we) just created or wrote. */
export function adjustSharedPerm(path: string, shared: number): void {
  if (shared === 0) return;
  try {
    const st = statSync(path);
    const old = st.mode & 0o7777;
    let mode = sharedMode(shared, old);
    if (st.isDirectory()) {
      mode |= (mode & 0o444) >> 2;
      if (mode & 0o060) mode |= 0o2000; // setgid, so new files inherit the group
    }
    if (mode !== old) chmodSync(path, mode);
  } catch {
    // As git: a failed adjustment does not undo the write it follows.
  }
}
