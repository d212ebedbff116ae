#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#   1. the ci preset (release build): clang-tidy on the C++ files the change touches
#      (scripts/tidy.sh), then every unit and integration test;
#   2. the asan-ubsan preset: every test under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the tsan preset: the threaded tests under ThreadSanitizer (its build preset builds only
#      those tests and what they run);
#   4. the fuzz preset: each libFuzzer target for a short run (PM2LAT_FUZZ_SECONDS, default 20),
#      one per job at a time.
# The sanitizer presets compile the libraries the tests spend their time in at -O1, the rest
# at -Og (ASan+UBSan) or -O0 (TSan), with line tables only (CMakeLists.txt, above
# pm2lat_optimize_under_sanitizers): the suite must fit CI's 90 minutes.
# Set PM2LAT_TEST_PRESETS to run a subset, e.g. "ci" or "ci asan-ubsan".
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${PM2LAT_JOBS:-$(nproc)}
presets=${PM2LAT_TEST_PRESETS:-"ci asan-ubsan tsan fuzz"}
fuzz_seconds=${PM2LAT_FUZZ_SECONDS:-20}

for preset in $presets; do
  echo "=== $preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  if [ "$preset" = fuzz ]; then
    # A fuzzer is one process: as many run at once as there are jobs. Each prints its last
    # line, or all it wrote when it failed; xargs fails when any of them does.
    printf '%s\n' build/fuzz/*/fuzz/*_fuzzer | xargs -P "$jobs" -I{} bash -c '
      fuzzer=$1 seconds=$2
      name=$(basename "$fuzzer" _fuzzer)
      corpus=$(dirname "${fuzzer/build\/fuzz\//}")/corpus/$name
      work=$(mktemp -d)
      trap "rm -rf \"$work\"" EXIT
      rc=0
      out=$("$fuzzer" -max_total_time="$seconds" -print_final_stats=0 "$work" "$corpus" 2>&1) || rc=$?
      if [ "$rc" -eq 0 ]; then out=$(printf "%s\n" "$out" | tail -1); fi
      printf -- "--- %s (%ss)\n%s\n" "$name" "$seconds" "$out"
      exit "$rc"' _ {} "$fuzz_seconds"
  else
    if [ "$preset" = ci ]; then scripts/tidy.sh build/ci; fi
    ctest --preset "$preset" -j "$jobs"
  fi
done
echo "=== all tests passed"
