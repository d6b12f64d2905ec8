import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * mkdir -p that always ends. Node's `mkdirSync(dir, { recursive: true })` loops forever where
 * mkdir says ENOENT although the parent exists (under /proc, for one), so this one finds the
 * nearest directory that exists, then makes each missing one below it once; any error of
 * those mkdirs is thrown as the system gave it. Returns the first directory it made, or
 * undefined when `dir` was there already (as Node's does).
 */
export function makeDirectories(dir: string): string | undefined {
  const missing: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (isDirectory(d)) break;
    missing.push(d);
    if (dirname(d) === d) break; // the root itself is missing: its mkdir below says why
  }
  for (let k = missing.length - 1; k >= 0; k--) {
    try {
      mkdirSync(missing[k]!);
    } catch (err) {
      // Made meanwhile by someone else: fine when it is a directory.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !isDirectory(missing[k]!)) throw err;
    }
  }
  return missing.at(-1);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
