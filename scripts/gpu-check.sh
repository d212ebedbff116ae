#!/usr/bin/env bash
# Validates libpm2lat.so on a machine with a real NVIDIA GPU: coverage (every kernel CUPTI
# saw was also seen by a hook, nothing dropped, everything measured) and overhead (wall time
# of the same workload with and without the runtime), for the cuBLAS example and, when
# PyTorch is installed, the PyTorch example (eager, torch.compile, CUDA graphs).
#
#   scripts/gpu-check.sh [build-dir]        (default: build/default)
#
# Needs: an NVIDIA driver and GPU, the CUDA toolkit (CUPTI), a build configured with
# -DPM2LAT_BUILD_EXAMPLES=ON, python3. Exits non-zero when a check fails.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build/default}"
lib="$build/shim/libpm2lat.so"
gemm="$build/examples/pm2lat_example_cublas_gemm"
out="$(mktemp -d -t pm2lat-gpu-check-XXXXXX)"
max_overhead_pct="${PM2LAT_MAX_OVERHEAD_PCT:-5}"
failures=0

note() { printf '%s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*"; failures=$((failures + 1)); }

command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { note "no NVIDIA GPU visible (nvidia-smi -L failed)"; exit 2; }
[[ -f "$lib" ]] || { note "missing $lib: build first"; exit 2; }
note "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
note "outputs in $out"

# Runs "$@" three times without and three times with the runtime; the workload prints
# "... time_s <seconds> ...". Checks the summary's counters and the overhead of the medians.
check_workload() {
  local name="$1"; shift
  local dir="$out/$name" times_off=() times_on=()
  mkdir -p "$dir"
  for i in 1 2 3; do
    times_off+=("$("$@" | sed -n 's/.*time_s \([0-9.]*\).*/\1/p')")
  done
  for i in 1 2 3; do
    rm -rf "$dir/run"; mkdir -p "$dir/run"
    times_on+=("$(LD_PRELOAD="$lib" PM2LAT_OUT="$dir/run/" PM2LAT_SUMMARY="$dir/run/summary.json" \
                  PM2LAT_TARGETS="${PM2LAT_TARGETS:-H100,A100}" "$@" | sed -n 's/.*time_s \([0-9.]*\).*/\1/p')")
  done
  python3 - "$name" "$dir/run/summary.json" "$max_overhead_pct" "${times_off[*]}" "${times_on[*]}" <<'PY' || failures=$((failures + 1))
import json, statistics, sys
name, summary_path, max_pct, off, on = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
s = json.load(open(summary_path))
c = s["counters"]
problems = []
if c["records"] == 0: problems.append("no kernel records")
if c["unhooked"]: problems.append(f"{c['unhooked']} kernels seen by CUPTI but by no hook (coverage gap)")
if c["dropped"] or c["cupti_dropped"]: problems.append(f"dropped: rings {c['dropped']}, CUPTI {c['cupti_dropped']}")
if c["measured"] != c["records"]: problems.append(f"{c['records'] - c['measured']} records unmeasured")
t_off = statistics.median(float(x) for x in off.split())
t_on = statistics.median(float(x) for x in on.split())
pct = 100.0 * (t_on - t_off) / t_off
print(f"{name}: mode {s['mode']}, {c['records']} records, {c['unhooked']} unhooked, "
      f"{c['dropped']} dropped; time {t_off:.3f}s -> {t_on:.3f}s ({pct:+.1f}%)")
for f in s["families"]:
    err = f.get("source_error", {}).get("total_error_pct")
    print(f"    {f['family']:<18} {f['count']:>8} kernels {f['measured_ms']:>10.3f} ms measured"
          + (f", prediction {err:+.1f}% on this GPU" if err is not None else ""))
if pct > max_pct: problems.append(f"overhead {pct:.1f}% above {max_pct}%")
for p in problems: print(f"FAIL: {name}: {p}")
sys.exit(1 if problems else 0)
PY
}

if [[ -x "$gemm" ]]; then
  check_workload cublas "$gemm" 200
else
  fail "$gemm not built (configure with -DPM2LAT_BUILD_EXAMPLES=ON)"
fi

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  check_workload pytorch-eager python3 "$root/examples/pytorch_train.py" --steps 50
  check_workload pytorch-compile python3 "$root/examples/pytorch_train.py" --steps 50 --compile
  check_workload pytorch-graphs python3 "$root/examples/pytorch_train.py" --steps 50 --graphs
else
  note "PyTorch with CUDA not available: PyTorch checks skipped"
fi

if [[ -x "$build/shim/pm2lat_launch_path_bench" ]]; then
  note "launch-path overhead (hook + record, no I/O):"
  "$build/shim/pm2lat_launch_path_bench" --benchmark_counters_tabular=true 2>/dev/null | tail -4
fi

if ((failures)); then
  note "$failures check(s) failed"
  exit 1
fi
note "all checks passed"
