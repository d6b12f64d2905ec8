/**
 * The native addon as TypeScript sees it. Its exports are declared per concept in src/addon/,
 * one file beside each glue file of native/binding/ (odb, write, worktree, watch, index-file,
 * rows, paths, convert; layout.ts the layouts and constants both sides use); this module
 * re-exports them all, so every other module imports the addon from here, and loads it:
 * loadAddon() once per thread, checkAddon() refusing an addon whose error codes (the one table,
 * src/errors.ts) or layouts (EXPECTED_LAYOUT) differ from this JavaScript's.
 */
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { PcheckoutError, isErrorCode } from './errors.js';
import type { ConvertExports } from './addon/convert.js';
import type { IndexExports } from './addon/index-file.js';
import { EXPECTED_LAYOUT } from './addon/layout.js';
import { findPrebuild, machineName, type PrebuildLookup } from './addon/prebuild.js';
import type { OdbExports } from './addon/odb.js';
import type { PathExports } from './addon/paths.js';
import type { RowsExports } from './addon/rows.js';
import type { WatchExports } from './addon/watch.js';
import type { WorktreeExports } from './addon/worktree.js';
import type { WriteExports } from './addon/write.js';

export * from './addon/convert.js';
export * from './addon/index-file.js';
export * from './addon/layout.js';
export * from './addon/odb.js';
export * from './addon/paths.js';
export * from './addon/rows.js';
export * from './addon/watch.js';
export * from './addon/worktree.js';
export * from './addon/write.js';

/** Everything the addon exports (native/binding/binding.cc registers it). */
export interface Addon
  extends
    OdbExports,
    WriteExports,
    WorktreeExports,
    WatchExports,
    IndexExports,
    RowsExports,
    PathExports,
    ConvertExports {
  /** Every error code native code can report; each must be in src/errors.ts's table. */
  errorCodes: string[];
  /** The layouts and constants both sides use (checked against EXPECTED_LAYOUT at load). */
  layout: typeof EXPECTED_LAYOUT;
  /**
   * Gives the malloc arenas' free memory back to the system; with `minThreadFree`, only when
   * the threads' arenas (all but the main one) hold at least that many free bytes.
   */
  releaseMemory(minThreadFree?: number): boolean;
  /**
   * Detaches the ArrayBuffer under each view of 2 MiB or more (smaller ones are left), so its
   * memory goes back by the next turn of the event loop, not when the collector finds it; every
   * view of it has length 0 afterwards. Returns the bytes released. Only between phases: never
   * while a native task reads one of them.
   */
  releaseArrays(views: ArrayBufferView[]): number;
  /** The free bytes the threads' malloc arenas hold (glibc's malloc_info; 0 elsewhere). */
  threadArenasFree(): number;
  /**
   * Sets the calling thread's scheduler slice (Linux 6.12+): 0 for the kernel's default, else
   * 100..100000 µs. A thread under another policy than SCHED_OTHER is left alone (`applied`
   * false); `previousUs` is what it had asked for (0: the default); `error` an errno, or 0.
   */
  setThreadSlice(us: number): { applied: boolean; previousUs: number; error: number };
}

/**
 * Refuses an addon built from other sources than this JavaScript: a code missing from the
 * table would reach callers uncoded, a layout that differs would be misread silently.
 */
export function checkAddon(addon: Addon, where: string): void {
  const problems: string[] = [];
  const codes: unknown = addon.errorCodes;
  if (!Array.isArray(codes)) problems.push('it does not list its error codes');
  else {
    const unknown = codes.filter((c) => !isErrorCode(c));
    if (unknown.length > 0) problems.push(`error codes not in the table: ${unknown.join(', ')}`);
  }
  if (!isDeepStrictEqual(addon.layout, EXPECTED_LAYOUT)) {
    problems.push(
      `its layout ${JSON.stringify(addon.layout)} differs from ${JSON.stringify(EXPECTED_LAYOUT)}`,
    );
  }
  if (problems.length > 0) {
    throw new PcheckoutError(
      'ERR_ADDON_LOAD',
      `the native addon at ${where} does not match this version of pcheckout (${problems.join('; ')}); rebuild it: npm rebuild pcheckout`,
    );
  }
}

let cached: Addon | undefined;
let loadMs: number | null = null;

/** How long loading the addon took in this process (dlopen and checks), or null if not yet. */
export function addonLoadMs(): number | null {
  return loadMs;
}

/** Why the dynamic loader refused an addon file, in words that say what to do. */
export function explainLoadError(err: unknown): string {
  const message = String((err as Error)?.message ?? err);
  const version = /NODE_MODULE_VERSION (\d+)/.exec(message);
  if (version) {
    return `it was built for another Node.js (NODE_MODULE_VERSION ${version[1]}; Node.js ${process.version} needs ${process.versions.modules}): rebuild it with this Node.js`;
  }
  const library = /([^\s:]+): cannot open shared object file/.exec(message);
  if (library) {
    const hint = library[1]!.startsWith('libdeflate')
      ? ' (Debian: apt-get install libdeflate0)'
      : '';
    return `a shared library it needs is missing: ${library[1]}${hint}; install it, or rebuild the addon on this machine`;
  }
  if (
    /invalid ELF header|wrong ELF class|ELFCLASS|Exec format error|file too short/.test(message)
  ) {
    return `it is not a Linux ${process.arch} binary (built for another platform or architecture): rebuild it on this machine`;
  }
  const symbol = /undefined symbol: (\S+)/.exec(message);
  if (symbol) {
    return `it needs ${symbol[1]}, which this Node.js or a library does not provide (built elsewhere?): rebuild it on this machine`;
  }
  return message.split('\n')[0]!;
}

/** Where the addon this thread loaded came from: a source build, the prebuild, PCHECKOUT_ADDON. */
export interface AddonSource {
  kind: 'build' | 'prebuild' | 'env';
  file: string;
}

let source: AddonSource | undefined;

/** The addon file loaded in this thread, or undefined if none is yet. */
export function addonSource(): AddonSource | undefined {
  return source;
}

const BUILD_TOOLS =
  'a C++ compiler, make, python3 and the zlib headers (Debian: apt-get install g++ make python3 zlib1g-dev libdeflate-dev)';

/**
 * Loads the addon once per thread, and checks that it matches this JavaScript: a build from
 * source (build/Release, build/Debug: there only when the install built one, as asked or for
 * want of a prebuild that fits), else the package's prebuild for this machine
 * (prebuilds/<platform>-<arch>/, see src/addon/prebuild.ts). If none loads, says what was
 * tried, why each failed, and how to fix it. PCHECKOUT_ADDON names the one file to load (no
 * fallback: a sanitizer run must not silently test another build).
 */
export function loadAddon(): Addon {
  if (cached) return cached;
  const started = performance.now();
  if (process.platform !== 'linux') {
    throw new PcheckoutError(
      'ERR_ADDON_LOAD',
      `pcheckout runs on Linux only (this is ${process.platform}); its native addon uses Linux system calls (openat2, syncfs)`,
    );
  }
  const require = createRequire(import.meta.url);
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const chosen = process.env['PCHECKOUT_ADDON'];
  const candidates: AddonSource[] = [];
  let prebuilds: PrebuildLookup | undefined;
  if (chosen !== undefined && chosen !== '') candidates.push({ kind: 'env', file: chosen });
  else {
    for (const config of ['Release', 'Debug']) {
      const file = join(root, 'build', config, 'pcheckout.node');
      if (existsSync(file)) candidates.push({ kind: 'build', file });
    }
    prebuilds = findPrebuild(root);
    if (prebuilds.file !== undefined) candidates.push({ kind: 'prebuild', file: prebuilds.file });
  }
  const failures: string[] = [];
  let missing = 0;
  for (const candidate of candidates) {
    if (!existsSync(candidate.file)) {
      failures.push(`${candidate.file}: not found`);
      missing++;
      continue;
    }
    let loaded: Addon;
    try {
      loaded = require(candidate.file) as Addon;
    } catch (err) {
      failures.push(`${candidate.file}: ${explainLoadError(err)}`);
      continue;
    }
    checkAddon(loaded, candidate.file);
    cached = loaded;
    source = candidate;
    loadMs = Math.round((performance.now() - started) * 10) / 10;
    return cached;
  }
  const rebuild = `"npm rebuild pcheckout" (or "npx node-gyp rebuild" in ${root})`;
  let lines: string[];
  if (prebuilds !== undefined && candidates.length === 0) {
    // Neither a build nor a prebuild that fits: the install built nothing.
    const has =
      prebuilds.available.length > 0
        ? `the package's prebuilds (${prebuilds.available.join(', ')}) are not for this machine, ${machineName()}`
        : `the package has no prebuilt addon (${join(root, 'prebuilds')} is empty or absent)`;
    lines = [
      `pcheckout could not load its native addon: ${has}, and it was not built from source in ${join(root, 'build')}.`,
      'The install scripts were skipped (npm install --ignore-scripts, or pnpm, which runs no',
      "dependency's build unless allowed: pnpm approve-builds / onlyBuiltDependencies), so nothing",
      `was built. Build it with ${BUILD_TOOLS}:`,
      `${rebuild}.`,
    ];
  } else {
    lines = [
      'pcheckout could not load its native addon. Tried:',
      ...failures.map((f) => `  - ${f}`),
      ...(missing === candidates.length
        ? [`It was never built: install ${BUILD_TOOLS}, then run`, `${rebuild}.`]
        : [`To build it from source on this machine: ${rebuild}.`]),
    ];
  }
  throw new PcheckoutError('ERR_ADDON_LOAD', lines.join('\n'));
}
