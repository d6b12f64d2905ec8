/** The addon's content conversions (native/binding/convert.cc over native/convert/). */

/** A content conversion (native/convert/convert.h): crlf 0 binary, 1 text-input, 2 text-crlf, 3 auto-input, 4 auto-crlf. */
export interface NativeConversion {
  crlf: number;
  ident: boolean;
  identInCore: boolean;
  encoding: string | null;
}

/** A conversion's output: null data when the bytes do not change; git's complaint, if any. */
export interface NativeConverted {
  data: Buffer | null;
  warning?: string;
}

export interface ConvertExports {
  /** A blob's bytes as git checks them out with `conversion` (ident, eol, encoding). */
  convertToWorktree(
    data: Buffer,
    conversion: NativeConversion,
    oid: Buffer,
    path: string,
  ): NativeConverted;
  /** A file's bytes as git hashes them with `conversion` (encoding, eol, ident). */
  convertToGit(
    data: Buffer,
    conversion: NativeConversion,
    indexHasCrlf: boolean,
    path: string,
  ): NativeConverted;
  /** Whether a blob is text with CRLFs (git then leaves text=auto files' CRLFs alone). */
  blobHasCrlf(data: Buffer): boolean;
}
