// Writes a whole index file to a descriptor as it is serialized: a part of entries at a time
// into one reused buffer, hashed (SHA-1) and written, then the checksum. An index of a million
// entries (~120 MB) is then never whole in memory: serialized whole, then copied into a
// Buffer and written, it cost a 1% switch of such a tree ~0.9 s, mostly in page faults of the
// fresh memory and a write from a source far larger than the caches.
#pragma once

#include <cstddef>
#include <cstdint>

#include "index/index_writer.h"

namespace pc {

// 0 once the file (header, entries, extensions, checksum) is written at the descriptor's
// offset; else the errno of the write that failed, or EIO where hashing failed. `in.from` and
// `in.to` are ignored: the whole file is written.
int write_index_file(const IndexWrite& in, int fd);

// Whether the whole file `in` makes is, byte for byte, `file` (len bytes): an index read whose
// checksum the caller verified, so that equal contents mean an equal checksum, which is then
// not computed. (A file that ends in 20 zero bytes, written with index.skipHash, never equals
// one written here.) Compared a part at a time, never whole in memory. With `drop_compared`
// (`file` is a private mapping of the file, never written), the pages compared are dropped from
// the process as it goes: read again from the page cache if touched, where an index of a
// million entries would otherwise count 120 MB more in RSS.
bool index_file_equals(const IndexWrite& in, const uint8_t* file, size_t len, bool drop_compared);

}  // namespace pc
