/** git's path rules in the addon (native/binding/paths.cc over native/plan/path_rules.cc). */

export interface NativePathVerdict {
  index: number;
  rule: string;
  text: string;
}

export interface PathExports {
  /** git's verify_path for one path (exact bytes): null, or the rule that refuses it. */
  verifyPath(path: Buffer, mode: number, protect: number): NativePathVerdict | null;
  /**
   * The first of many NUL-terminated paths (one mode each) git would refuse, or null. With
   * `starts` (count + 1 positions, as an EntryList's), one pass that checks each path from
   * where it leaves the one before.
   */
  verifyPaths(
    paths: Buffer,
    modes: Uint32Array,
    protect: number,
    starts?: Uint32Array,
  ): NativePathVerdict | null;
}
