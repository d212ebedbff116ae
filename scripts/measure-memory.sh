#!/usr/bin/env bash
# Resident memory libpm2lat.so adds to a program in a launch storm: GNU time's maximum
# resident set size of tests/programs/many_threads on the fake CUDA stack (16 threads, 8M
# launches in all, records off, 4 target GPUs), alone, with the library, and with the
# library but no profiles (the runtime without the predictor's data), and with the library
# over a few launches only (the peak of loading the profiles, without the storm's rings and
# pending launches); and, for each run with the library, what it dropped (launches from full
# rings, records CUPTI dropped, launches whose record never came). Goal: the library adds at
# most 64 MB. The predictor's heap and its peak while loading: BM_LoadShippedProfiles, by
# model BM_PredictorMemoryBreakdown, in build/ci/predictor/bench/pm2lat_predict_benchmark.
# The machine's other load moves the peaks (a worker kept from running holds more): run it
# on an otherwise idle machine.
#
#   scripts/measure-memory.sh [BUILD_DIR] [THREADS] [LAUNCHES_PER_THREAD]
#
# PM2LAT_MEMORY_RUNS (default 3): storms run with the library; each one's peak is printed and
# the median is the figure (a storm's peak varies with how the threads were scheduled).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/ci}
threads=${2:-16}
launches=${3:-500000}
targets=${PM2LAT_MEMORY_TARGETS:-H100,A100,L4,T4}
runs=${PM2LAT_MEMORY_RUNS:-3}
program=$build/test-programs/many_threads
shim=$build/shim/libpm2lat.so
for f in "$program" "$shim" /usr/bin/time; do
  [ -x "$f" ] || [ -f "$f" ] || { echo "error: $f missing (build the ci preset; scripts/setup.sh)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/no-profiles"

# Maximum resident set size in kB of one run of LAUNCHES per thread; the environment comes
# from the other arguments.
peak_kb() {
  local n=$1
  shift
  env LD_LIBRARY_PATH="$build/fake-cuda" FAKE_CUDA_BASE_NS=4000 "$@" \
    /usr/bin/time -v "$program" "$threads" "$n" >"$work/out" 2>"$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/err"
}
library=(LD_PRELOAD="$shim" PM2LAT_OUT=none PM2LAT_SUMMARY="$work/summary.json"
         PM2LAT_TARGETS="$targets" PM2LAT_PROFILES="$root/calibrate/profiles")

# Launches recorded, dropped from full rings, records CUPTI dropped, timing lost: the last run.
lost() {
  python3 -c "import json; c=json.load(open('$work/summary.json'))['counters']; print(c['launches'], c['dropped'], c['cupti_dropped'], c['timing_lost'])"
}

alone=$(peak_kb "$launches")
peaks=()
with_lost=()
for ((i = 0; i < runs; ++i)); do
  peaks+=("$(peak_kb "$launches" "${library[@]}")")
  with_lost+=("$(lost)")
done
with=$(printf '%s\n' "${peaks[@]}" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
runtime_only=$(peak_kb "$launches" "${library[@]}" PM2LAT_PROFILES="$work/no-profiles")
runtime_lost=$(lost)
load_only=$(peak_kb 1000 "${library[@]}")

mb() { awk -v kb="$1" 'BEGIN { printf "%.1f", kb / 1024 }'; }
echo "many_threads: $threads threads x $launches launches, targets $targets, records off"
echo "  program alone:                  $(mb "$alone") MB resident (peak)"
echo "  with libpm2lat.so:              $(mb "$with") MB  (library adds $(mb $((with - alone))) MB; goal <= 64; median of $runs)"
echo "    each run adds:                $(for p in "${peaks[@]}"; do printf '%s ' "$(mb $((p - alone)))"; done)MB"
echo "  with libpm2lat.so, no profiles: $(mb "$runtime_only") MB  (runtime alone adds $(mb $((runtime_only - alone))) MB)"
echo "  with libpm2lat.so, 1000 launches: $(mb "$load_only") MB  (library adds $(mb $((load_only - alone))) MB: the profiles' load peak, no storm)"
echo "  launches recorded, dropped, CUPTI records dropped, timing lost:"
for l in "${with_lost[@]}"; do echo "    with libpm2lat.so:              $l"; done
echo "    no profiles:                    $runtime_lost"
