// Content conversions between a blob and its worktree file, with git's semantics (convert.c):
// ident ($Id$), end-of-line (text / eol / core.autocrlf) and working-tree-encoding (iconv).
// Checkout order: ident, eol, encoding; check-in ("clean", for hashing a worktree file):
// encoding, eol, ident. External filters are not here (they run outside the pool). Policy —
// which conversion an entry gets — is decided in TypeScript (plan/conversion.ts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pc {

// git's crlf_action after convert_attrs() settled it (CRLF_TEXT and CRLF_AUTO resolved by
// core.autocrlf / core.eol into their _INPUT or _CRLF forms, which the caller does).
enum CrlfAction : uint8_t {
  kCrlfBinary = 0,     // no eol conversion either way
  kCrlfTextInput = 1,  // text, LF in the worktree: CRLF -> LF on check-in only
  kCrlfTextCrlf = 2,   // text, CRLF in the worktree
  kCrlfAutoInput = 3,  // text=auto, LF in the worktree
  kCrlfAutoCrlf = 4,   // text=auto, CRLF in the worktree
};

struct Conversion {
  CrlfAction crlf = kCrlfBinary;
  bool ident = false;
  // git expands $Id$ with one of two routines: the streaming filter for entries it can stream,
  // the in-memory one otherwise (text=auto, an encoding, a filter driver). They differ on odd
  // inputs ("$$Id$", foreign ids), so the caller says which one git would use.
  bool ident_in_core = false;
  std::string encoding;  // working-tree-encoding; empty for none

  bool checkout_is_noop() const {
    return !ident && encoding.empty() && (crlf == kCrlfBinary || crlf == kCrlfTextInput ||
                                          crlf == kCrlfAutoInput);
  }
};

struct TextStats {
  size_t nul = 0, lonecr = 0, lonelf = 0, crlf = 0, printable = 0, nonprintable = 0;
};

TextStats gather_stats(const uint8_t* data, size_t len);
// git's convert_is_binary(): a lone CR, a NUL, or too many non-printable bytes.
bool stats_are_binary(const TextStats& s);
// git's has_crlf_in_index() test on a blob's bytes: text with at least one CRLF.
bool blob_has_crlf(const uint8_t* data, size_t len);

// The blob's bytes as git writes them to the worktree. Returns false when nothing changes (out
// untouched). oid: the blob's id (for $Id$). A failed re-encoding leaves the bytes as they were
// before that step and sets *warning (git prints an error and writes them anyway).
bool to_worktree(const Conversion& c, const uint8_t* oid, const uint8_t* data, size_t len,
                 const std::string& path, std::vector<uint8_t>* out, std::string* warning);

// A worktree file's bytes as git would hash them (git add): encoding back to UTF-8 (validated),
// CRLF -> LF, $Id: ... $ collapsed. index_has_crlf: what blob_has_crlf() says of the index's
// blob (text=auto leaves CRLFs alone then). Returns false when nothing changes.
bool to_git(const Conversion& c, const uint8_t* data, size_t len, bool index_has_crlf,
            const std::string& path, std::vector<uint8_t>* out, std::string* warning);

}  // namespace pc
