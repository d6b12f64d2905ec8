#!/usr/bin/env bash
# npm run fuzz -- [seconds] [target...]
# Builds every libFuzzer target in fuzz/ with ASan + UBSan against the parsers in native/ (the
# real sources, compiled once into fuzz/out/) and runs each, one after the other, for that
# many seconds (default 60). Corpora: fuzz/seeds/<target> (committed, small) and the inputs
# fuzz/seed.mjs generates with git into fuzz/out/seeds/<target>; what a run finds goes to
# fuzz/out/corpus/<target> (kept between runs, not committed), crashes to fuzz/out/crashes/,
# logs to fuzz/out/logs/. (Not under build/: node-gyp rebuild wipes that.)
# Needs clang (Debian: apt-get install clang). Exits non-zero if any target found a problem.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
out="$root/fuzz/out"
mkdir -p "$out/obj" "$out/bin" "$out/logs"

cxx=${FUZZ_CXX:-clang++}
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz: $cxx not found; install clang (Debian: apt-get install clang)" >&2
  exit 1
fi
san=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
cflags=(-std=c++17 -g -O1 -Wall -Wextra "${san[@]}" -I"$root/native")
deflate=()
if [ "$(CXX=$cxx node "$root/scripts/detect-libdeflate.cjs")" = true ]; then
  deflate=(-DPCHECKOUT_LIBDEFLATE)
fi

# The parsers and what they stand on (not the binding, which needs Node's headers), by their
# path under native/; each compiles to fuzz/out/obj/<file name>.o (the names are unique).
natives=(base/common base/mapped_file base/huge_buffer base/huge_pages odb/pack_index odb/pack odb/delta odb/inflate odb/base_cache
  odb/decode_stats odb/loose odb/odb plan/tree plan/path_rules index/index_entries index/cache_tree
  index/index_lender)
compile() {  # <source> <object> [flags...]
  local src=$1 obj=$2
  shift 2
  if [ ! -e "$obj" ] || [ -n "$(find "$root/native" -newer "$obj" -name '*.h' -print -quit)" ] ||
    [ "$src" -nt "$obj" ]; then
    "$cxx" "${cflags[@]}" "$@" -c "$src" -o "$obj"
  fi
}
echo "fuzz: building with $("$cxx" --version | head -1)${deflate:+, libdeflate}"
pids=()
for n in "${natives[@]}"; do
  compile "$root/native/$n.cc" "$out/obj/${n##*/}.o" -fsanitize=fuzzer-no-link "${deflate[@]}" &
  pids+=($!)
  if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
# The zlib fallback of the inflate wrapper, for a second inflate target when libdeflate is used.
if [ ${#deflate[@]} -gt 0 ]; then
  compile "$root/native/odb/inflate.cc" "$out/obj/inflate_zlib.o" -fsanitize=fuzzer-no-link
fi
for p in "${pids[@]}"; do wait "$p"; done

libs=(-lz)
[ ${#deflate[@]} -gt 0 ] && libs+=(-ldeflate)
link() {  # <target> <harness source> <native objects, by file name...>
  local name=$1 src=$2
  shift 2
  local objs=()
  for o in "$@"; do objs+=("$out/obj/$o.o"); done
  "$cxx" "${cflags[@]}" "${deflate[@]}" -fsanitize=fuzzer "$src" "${objs[@]}" "${libs[@]}" \
    -o "$out/bin/$name"
}
odb=(common mapped_file pack_index pack delta inflate base_cache decode_stats loose odb)
link pack_index "$root/fuzz/pack_index.cc" common mapped_file pack_index
link pack_entry "$root/fuzz/pack_entry.cc" common mapped_file pack_index pack base_cache
link pack_read "$root/fuzz/pack_read.cc" "${odb[@]}"
link delta "$root/fuzz/delta.cc" common delta
link inflate "$root/fuzz/inflate.cc" inflate
targets=(pack_index pack_entry pack_read delta inflate)
if [ ${#deflate[@]} -gt 0 ]; then
  link inflate_zlib "$root/fuzz/inflate.cc" inflate_zlib
  targets+=(inflate_zlib)
fi
link tree "$root/fuzz/tree.cc" "${odb[@]}" tree path_rules huge_buffer huge_pages
link index_entries "$root/fuzz/index_entries.cc" common index_entries
link path_rules "$root/fuzz/path_rules.cc" path_rules
link cache_tree "$root/fuzz/cache_tree.cc" "${odb[@]}" tree path_rules cache_tree index_lender huge_buffer huge_pages
targets+=(tree index_entries path_rules cache_tree)
if [ $# -gt 0 ]; then targets=("$@"); fi

if [ ! -d "$out/seeds" ]; then
  echo "fuzz: generating seed corpora with git (fuzz/seed.mjs)"
  node "$root/fuzz/seed.mjs" "$out/seeds"
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=()
summary=()
for t in "${targets[@]}"; do
  corpus="$out/corpus/$t"
  crashes="$out/crashes/$t"
  mkdir -p "$corpus" "$crashes"
  seeds=()
  for d in "$root/fuzz/seeds/$t" "$out/seeds/$t"; do [ -d "$d" ] && seeds+=("$d"); done
  extra=()
  # A few hundred bytes of trees can name each other so that they expand to billions of paths
  # (as they would for git): kept small, tree inputs find bugs instead of that.
  [ "$t" = tree ] && extra=(-max_len=1024)
  scratch=${TMPDIR:-/tmp}
  [ -w /dev/shm ] && scratch=/dev/shm
  tmp_dir=$(mktemp -d "$scratch/pcheckout-fuzz-run.XXXXXX")
  log="$out/logs/$t.log"
  echo "fuzz: $t for ${seconds}s (log: ${log#"$root"/})"
  status=0
  PCHECKOUT_FUZZ_TMP=$tmp_dir "$out/bin/$t" -max_total_time="$seconds" -timeout=20 \
    -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$crashes/" "${extra[@]}" \
    "$corpus" "${seeds[@]}" >"$log" 2>&1 || status=$?
  rm -rf "$tmp_dir"
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)
  runs=$(grep -E '^Done [0-9]+ runs' "$log" | tail -1 || true)
  if [ "$status" -ne 0 ]; then
    failed+=("$t")
    summary+=("$t: FAILED (exit $status): $(grep -m1 -E 'ERROR|runtime error|invariant failed' "$log" || true)")
    grep -E 'ERROR|SUMMARY|runtime error|invariant failed|Test unit written' "$log" | head -8 >&2 || true
  else
    summary+=("$t: ${runs:-?} | ${done_line:-?}")
  fi
done

echo
echo "fuzz summary (${seconds}s per target):"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: problems found by: ${failed[*]} (inputs in fuzz/out/crashes/)" >&2
  exit 1
fi
