// Chunks of files written in parallel, one native thread per object reader: each thread takes
// the next chunk nobody has taken and writes it with its own reader (a reader's delta-base
// cache is not shared between threads). No worker isolates: a thread starts in microseconds,
// where a Node worker costs tens of milliseconds of start-up before its first file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "odb/odb.h"
#include "write/writer.h"

namespace pc {

// A chunk's result, or why the whole chunk failed (its root could not be opened, no memory).
struct ChunkOutcome {
  WriteResult result;
  bool failed = false;
  std::string code;
  std::string message;
};

// Writes every chunk; outcomes[k] is chunk k's. `done(k)` is called on the writing thread once
// outcomes[k] is complete (it must be thread-safe). Uses at most readers.size() threads, the
// calling one included, and fewer when the system refuses more. Threads take chunks in list
// order; with `groups` (one per chunk), at most `per_group` chunks of one group at a time
// (write/schedule.h).
void write_parallel(const std::vector<Odb*>& readers, const std::vector<const WriteRequest*>& chunks,
                    std::vector<ChunkOutcome>* outcomes, const std::function<void(size_t)>& done,
                    std::vector<uint32_t> groups = {}, uint32_t per_group = 1);

// True once the process has begun to exit: writers stop before their next file, and exit waits
// (briefly) for the threads still writing, so none runs while the process is torn down.
bool exit_requested();

}  // namespace pc
