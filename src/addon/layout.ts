/**
 * The layouts and constants both sides of the addon use, as TypeScript assumes them; the addon
 * exports its own (native/binding/binding.cc) and checkAddon (src/addon.ts) refuses one that
 * differs.
 */

/** Stat words per entry, in index-entry order (see native/worktree/stat.h). */
export const STAT_WORDS = 10;

/**
 * What TypeScript assumes about the addon's data: the stat words (index-entry order), the
 * per-file and per-path statuses, verdicts, write flags, sync modes and path-protection bits.
 * The addon exports its own; loadAddon() refuses one that differs (built from other sources).
 */
export const EXPECTED_LAYOUT = {
  statWords: STAT_WORDS,
  statFields: [
    'ctimeSec',
    'ctimeNsec',
    'mtimeSec',
    'mtimeNsec',
    'dev',
    'ino',
    'mode',
    'uid',
    'gid',
    'size',
  ],
  fileStatus: { written: 0, collided: 1, failed: 2 },
  statStatus: { present: 0, absent: 1, failed: 2 },
  // none 0 and clean 1: the probe takes a copy of the verdicts as its clean flags (probe.ts).
  verdict: { none: 0, clean: 1, dirty: 2, hash: 3 },
  writeFlags: { replace: 1 },
  sync: { none: 0, file: 1, start: 2 },
  protect: { ntfs: 1, hfs: 2 },
  sameEntry: { indexTarget: 1, indexHead: 2, headTarget: 4 },
};

export const FILE_COLLIDED = EXPECTED_LAYOUT.fileStatus.collided;
export const FILE_FAILED = EXPECTED_LAYOUT.fileStatus.failed;
export const WRITE_REPLACE = EXPECTED_LAYOUT.writeFlags.replace;
export const STAT_PRESENT = EXPECTED_LAYOUT.statStatus.present;
export const STAT_ABSENT = EXPECTED_LAYOUT.statStatus.absent;
export const STAT_FAILED = EXPECTED_LAYOUT.statStatus.failed;
export const VERDICT_CLEAN = EXPECTED_LAYOUT.verdict.clean;
export const VERDICT_DIRTY = EXPECTED_LAYOUT.verdict.dirty;
export const VERDICT_HASH = EXPECTED_LAYOUT.verdict.hash;
