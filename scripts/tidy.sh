#!/usr/bin/env bash
# clang-tidy (.clang-tidy) on the C++ sources a change touches. CI runs it from
# scripts/test.sh after the ci build.
#
#   scripts/tidy.sh [BUILD_DIR]          (default build/ci; needs its compile_commands.json)
#
# What "changed" means: the .cpp/.h files that differ between a base commit and the working
# tree (uncommitted edits included), deleted files aside. The base is
#   1. $PM2LAT_TIDY_BASE when set (any commit: PM2LAT_TIDY_BASE=main~5);
#   2. else where the branch left main (merge base with origin/main, else with main), when
#      HEAD is a branch of its own: everything the branch changes;
#   3. else HEAD~1: on main itself (or a clean clone of it), the last commit;
#   4. else (a clone with one commit) nothing is compared and nothing checked.
# A changed header is checked through the changed sources that include it (HeaderFilterRegex
# limits diagnostics to project headers); sources outside the build (fuzz targets of another
# preset, CUDA files) are skipped. Exit status 1 when any check fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${1:-build/ci}
jobs=${PM2LAT_JOBS:-$(nproc)}
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
[ -n "$tidy" ] || { echo "tidy: clang-tidy not installed (scripts/setup.sh)" >&2; exit 1; }
db=$build/compile_commands.json
[ -f "$db" ] || { echo "tidy: $db missing (configure $build first)" >&2; exit 1; }
# Tests, tools and libraries may be unity builds (PM2LAT_UNITY_*, top-level CMakeLists.txt): the
# database then names only the batch files, which include the sources. Each source gets its
# batch's command, so that clang-tidy checks it on its own, as a build without unity compiles it.
if grep -q '/Unity/unity_' "$db"; then
  expanded=$(mktemp -d)
  trap 'rm -rf "$expanded"' EXIT
  python3 - "$db" "$expanded/compile_commands.json" <<'PY'
import json, re, sys
entries = []
for e in json.load(open(sys.argv[1])):
    batch = e["file"]
    if "/Unity/unity_" not in batch:
        entries.append(e)
        continue
    with open(batch) as f:
        sources = re.findall(r'^#include "([^"]+)"', f.read(), re.M)
    for source in sources:
        c = dict(e, file=source)
        if "command" in c:
            c["command"] = c["command"].replace(batch, source)
        if "arguments" in c:
            c["arguments"] = [source if a == batch else a for a in c["arguments"]]
        entries.append(c)
with open(sys.argv[2], "w") as f:
    json.dump(entries, f, indent=0)
PY
  build=$expanded
  db=$expanded/compile_commands.json
fi

base=${PM2LAT_TIDY_BASE:-}
if [ -z "$base" ]; then
  for main in origin/main main; do
    if git rev-parse -q --verify "$main^{commit}" >/dev/null; then
      fork=$(git merge-base HEAD "$main" || true)
      if [ -n "$fork" ] && [ "$fork" != "$(git rev-parse HEAD)" ]; then base=$fork; fi
      break
    fi
  done
fi
if [ -z "$base" ] && git rev-parse -q --verify 'HEAD~1^{commit}' >/dev/null; then base=HEAD~1; fi
if [ -z "$base" ]; then
  echo "tidy: no base commit to compare with: nothing to check"
  exit 0
fi

mapfile -t changed < <(git diff --name-only --diff-filter=d "$base" -- '*.cpp' '*.h' | sort -u)
# Sources in the compilation database; a changed header adds nothing of its own.
mapfile -t sources < <(
  for f in "${changed[@]}"; do
    [[ "$f" == *.cpp ]] && grep -qF "\"file\": \"$root/$f\"" "$db" && echo "$f"
  done || true)
echo "tidy: ${#changed[@]} C++ files changed since $(git rev-parse --short "$base"), ${#sources[@]} sources to check"
[ ${#sources[@]} -gt 0 ] || exit 0
# The compiler flags are GCC's: clang does not know -Wno-restrict, and under -Wpedantic it
# rejects the anonymous struct inside an anonymous union of CUDA 13's cupti_callbacks.h (line
# 611), which GCC accepts; neither is this project's code.
printf '%s\n' "${sources[@]}" |
  xargs -P "$jobs" -I{} sh -c '"$0" -p "$1" --quiet --extra-arg=-Wno-unknown-warning-option --extra-arg=-Wno-nested-anon-types "$2" 2>/dev/null || { echo "tidy: $2 fails"; exit 1; }' \
    "$tidy" "$build" {} ||
  { echo "tidy: failed (see above)" >&2; exit 1; }
echo "tidy: clean"
