#include "write/parallel_write.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

#include "write/schedule.h"

namespace pc {

namespace {

// Batches running, and whether the process is exiting. Allocated once and never freed, so
// no static destructor can run while a writer still uses it.
struct ExitGate {
  std::atomic<bool> exiting{false};
  std::mutex mu;
  std::condition_variable idle;
  size_t active = 0;
};

void wait_for_writers();

ExitGate& gate() {
  static ExitGate* g = [] {
    auto* made = new ExitGate;
    std::atexit(wait_for_writers);
    return made;
  }();
  return *g;
}

// At exit(): writers stop before their next file; the files in flight are finished (a
// half-written file is never left by a torn-down writer), for at most a few seconds.
void wait_for_writers() {
  ExitGate& g = gate();
  g.exiting.store(true);
  std::unique_lock<std::mutex> lock(g.mu);
  g.idle.wait_for(lock, std::chrono::seconds(5), [&] { return g.active == 0; });
}

// Counts a batch as running for its lifetime.
class Running {
 public:
  Running() {
    std::lock_guard<std::mutex> lock(gate().mu);
    gate().active++;
  }
  ~Running() {
    std::lock_guard<std::mutex> lock(gate().mu);
    if (--gate().active == 0) gate().idle.notify_all();
  }
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;
};

void run_chunks(Odb* reader, const std::vector<const WriteRequest*>& chunks,
                ChunkSchedule* schedule, std::vector<ChunkOutcome>* outcomes,
                const std::function<void(size_t)>& done) {
  for (;;) {
    size_t k = schedule->take();
    if (k == ChunkSchedule::kNone) return;
    ChunkOutcome& out = (*outcomes)[k];
    if (write_cancelled(*chunks[k])) {
      // Stopped: a chunk not started is not reported (nor is the worktree's root opened for
      // it); each would cost the JS thread a result to make and a call before the abort lands.
      out.result.cancelled = true;
      schedule->finished(k);
      continue;
    }
    try {
      write_files(*reader, *chunks[k], &out.result);
    } catch (const Error& e) {
      out.failed = true;
      out.code = code_name(e.code());
      out.message = e.what();
    } catch (const std::bad_alloc&) {
      out.failed = true;
      out.code = code_name(Code::Io);
      out.message = "out of memory";
    }
    // Reported before its group has room again: a group's chunks are reported in order.
    done(k);
    schedule->finished(k);
  }
}

}  // namespace

bool exit_requested() { return gate().exiting.load(std::memory_order_relaxed); }

void write_parallel(const std::vector<Odb*>& readers, const std::vector<const WriteRequest*>& chunks,
                    std::vector<ChunkOutcome>* outcomes, const std::function<void(size_t)>& done,
                    std::vector<uint32_t> groups, uint32_t per_group) {
  Running running;
  outcomes->clear();
  outcomes->resize(chunks.size());
  if (readers.empty() || chunks.empty()) return;
  ChunkSchedule schedule(chunks.size(), std::move(groups), per_group);
  size_t threads = std::min(readers.size(), chunks.size());
  std::vector<std::thread> pool;
  try {
    for (size_t t = 1; t < threads; t++)
      pool.emplace_back(run_chunks, readers[t], std::cref(chunks), &schedule, outcomes,
                        std::cref(done));
  } catch (const std::system_error&) {
    // No more threads: those started and this one share the chunks.
  }
  run_chunks(readers[0], chunks, &schedule, outcomes, done);
  for (std::thread& th : pool) th.join();
}

}  // namespace pc
