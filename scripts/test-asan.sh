#!/usr/bin/env bash
# Builds the addon with AddressSanitizer + UndefinedBehaviorSanitizer in a scratch copy (the
# normal build stays as it is) and runs the test suite against it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$root/binding.gyp" "$root/native" "$root/scripts" "$work/"
ln -s "$root/node_modules" "$work/node_modules"
# node-gyp run directly does not see npm's config; hand it the headers npm is set to use.
nodedir=${npm_config_nodedir:-$(npm config get nodedir 2>/dev/null || true)}
gyp_args=(rebuild --debug)
if [ -n "$nodedir" ] && [ "$nodedir" != "undefined" ]; then gyp_args+=("--nodedir=$nodedir"); fi
(cd "$work" && PCHECKOUT_SANITIZE=1 "$root/node_modules/.bin/node-gyp" "${gyp_args[@]}" >/dev/null)
export PCHECKOUT_ADDON="$work/build/Debug/pcheckout.node"
# git, which the tests run hundreds of times, is not what this run checks: a shim first on PATH
# runs it without the sanitizer runtimes (preloaded into git they only slow it down).
mkdir "$work/bin"
real_git=$(command -v git)
printf '#!/bin/sh\nunset LD_PRELOAD\nexec %s "$@"\n' "$real_git" >"$work/bin/git"
chmod +x "$work/bin/git"
export PATH="$work/bin:$PATH"
LD_PRELOAD="$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libubsan.so)"
export LD_PRELOAD
# V8 keeps allocations alive past exit; leaks are not what this run hunts.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Tests skip their speed bounds under the sanitizers.
export PCHECKOUT_SANITIZED=1
echo "sanitized addon: $PCHECKOUT_ADDON"
node --test --test-concurrency=1 "${@:-$root/test/}"
