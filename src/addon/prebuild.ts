/**
 * Which prebuilt addon fits this machine: node-gyp-build's matching (a directory
 * prebuilds/<platform>-<arch>, then the most specific file whose tags fit: napi, glibc or musl),
 * as scripts/install.cjs finds it at install time. An N-API build serves every Node.js version.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import nodeGypBuild from 'node-gyp-build/node-gyp-build.js';

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** This machine as prebuilds name it: linux-x64 (glibc). */
export function machineName(): string {
  const libc = process.env['LIBC'] ?? (isMusl() ? 'musl' : 'glibc');
  return `${process.platform}-${process.arch} (${libc})`;
}

function isMusl(): boolean {
  // As node-gyp-build tells them apart: Alpine is musl.
  return existsSync('/etc/alpine-release');
}

export interface PrebuildLookup {
  /** The file that fits, if any. */
  file: string | undefined;
  /** The prebuilds the package has (platform-arch/file), for a message when none fits. */
  available: string[];
}

export function findPrebuild(root: string): PrebuildLookup {
  const dir = join(root, 'prebuilds');
  const available = list(dir).flatMap((d) => list(join(dir, d)).map((f) => `${d}/${f}`));
  const tuple = list(dir)
    .map(nodeGypBuild.parseTuple)
    .filter(nodeGypBuild.matchTuple(process.platform, process.arch))
    .sort(nodeGypBuild.compareTuples)[0];
  if (tuple === undefined) return { file: undefined, available };
  const winner = list(join(dir, tuple.name))
    .map(nodeGypBuild.parseTags)
    .filter(nodeGypBuild.matchTags('node', process.versions.modules))
    .sort(nodeGypBuild.compareTags('node'))[0];
  return { file: winner && join(dir, tuple.name, winner.file), available };
}
