#!/usr/bin/env bash
# Calibrates the local NVIDIA GPU: checks the machine, shows the plan, runs
# `pm2lat-calibrate run` (resumable: run the same command again after an interruption) and
# writes the profiles into a directory the predictor can load (PM2LAT_PROFILES).
#
#   scripts/calibrate-gpu.sh [--lock-clocks] [-- run options...]
#   e.g. scripts/calibrate-gpu.sh -- --dtypes fp32,bf16 --budget 30m
#
# Environment: BUILD (default build/default), OUT (default calibrated-profiles),
# CUDA_HOME (default /usr/local/cuda). --lock-clocks (root) pins the SM clock to its maximum
# for the run and resets it afterwards; without it the clock the GPU ran at is measured and
# recorded in the profile's provenance.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$root/build/default}"
out="${OUT:-$PWD/calibrated-profiles}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
calibrate="$build/calibrate/pm2lat-calibrate"
lock=0
if [[ "${1:-}" == "--lock-clocks" ]]; then lock=1; shift; fi
if [[ "${1:-}" == "--" ]]; then shift; fi

note() { printf '%s\n' "$*"; }

[[ -x "$calibrate" ]] || { note "missing $calibrate: build first (cmake --preset default && cmake --build build/default)"; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { note "no NVIDIA GPU visible (nvidia-smi -L failed)"; exit 2; }
note "GPU: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -1)"
others="$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)"
[[ "$others" == "0" ]] || note "warning: $others other process(es) use the GPU: their work would be measured too"

# cuBLASLt and CUPTI of the toolkit the calibrator was built with.
export LD_LIBRARY_PATH="$cuda/lib64:$cuda/extras/CUPTI/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

mkdir -p "$out"
cp "$root/calibrate/profiles/devices.json" "$out/"
if (( lock )); then
  sudo nvidia-smi -lgc "$(nvidia-smi --query-gpu=clocks.max.sm --format=csv,noheader,nounits | head -1)"
  trap 'sudo nvidia-smi -rgc >/dev/null' EXIT
fi

"$calibrate" run --dry-run "$@"
# Outputs next to each other in $out: <device>.calibrated-<dtype>.json, the journal, the
# heuristic-candidates table.
(cd "$out" && "$calibrate" run "$@")
note "profiles in $out: use them with PM2LAT_PROFILES=$out (pm2lat eval, pm2lat run, libpm2lat.so)"
