#!/bin/sh
# A file-system monitor for tests: git's query-fsmonitor hook, protocol version 2, that answers
# as a watcher would, from snapshots instead of inotify. Each answer saves a listing of the
# worktree (type, mode, size, mtime and ctime in ns, inode of every path but .git) under a new
# token; asked with a token it knows, it prints the paths created, changed or removed since that
# listing (directories with a trailing '/'), else '/' (everything may have changed), as git's
# hooks do for an unknown token. Run by git as `<hook> 2 <token>` from the worktree's top;
# `.git/fsmonitor-calls` counts the queries. POSIX sh with GNU find (a node script cost ~140 ms
# a query, 71 queries in the suite).
#
#   fsmonitor-hook.sh 2 <token>
set -eu
[ "${1-}" = 2 ] || exit 1
token=${2-}
state=.git/fsmonitor-test
mkdir -p "$state"
calls=.git/fsmonitor-calls
n=1
[ -f "$calls" ] && n=$(( $(cat "$calls") + 1 ))
printf %s "$n" > "$calls"
# One line per path: "<listing fields> <path>"; a directory's path ends in '/'.
find . -mindepth 1 -path ./.git -prune -o -printf '%y %m %s %T@ %C@ %i %P\n' |
  awk '{ if ($1 == "d") print $0 "/"; else print }' | LC_ALL=C sort > "$state/$n"
printf 'pcfsm:%s\0' "$n"
old=
case $token in
  pcfsm:*) old="$state/${token#pcfsm:}" ;;
esac
if [ -n "$old" ] && [ -f "$old" ]; then
  # Lines in one listing only; the path is what follows the six fields.
  LC_ALL=C comm -3 "$old" "$state/$n" | sed 's/^\t//' | cut -d' ' -f7- | LC_ALL=C sort -u |
    tr '\n' '\0'
else
  printf '/\0'
fi
