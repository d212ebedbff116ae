#!/usr/bin/env bash
# Validates libpm2lat.so on a machine with a real NVIDIA GPU: coverage (every kernel CUPTI
# saw was also seen by a hook, nothing dropped, everything measured) and overhead (wall time
# of the same workload with and without the runtime), for the cuBLAS example and, when
# PyTorch is installed, the PyTorch example (eager, torch.compile, CUDA graphs). Then what
# only real hardware can confirm of what the fake stack reproduces (shim/README.md, "Found by
# reading the runtime against CUDA 13"): torch.profiler started and stopped in the middle of
# a run, torch.cuda.graph capture while kernels are timed with CUDA events, and hook mode
# (with events timing) on this driver, which is the old-driver path when it is older than 12.8.
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

# ---- what the fake CUDA stack reproduces and only a GPU confirms ----------------------------

# Checks a summary (and optionally its warnings) for a run that must be complete.
check_summary() {
  python3 - "$@" <<'PY' || failures=$((failures + 1))
import json, sys
name, path = sys.argv[1], sys.argv[2]
want_warning = sys.argv[3] if len(sys.argv) > 3 else ""
s = json.load(open(path))
c = s["counters"]
problems = []
if c["records"] == 0: problems.append("no kernel records")
if c["measured"] != c["records"]: problems.append(f"{c['records'] - c['measured']} records unmeasured")
if c["timing_lost"]: problems.append(f"{c['timing_lost']} launches lost their timing")
if want_warning and not any(want_warning in w for w in s.get("warnings", [])):
    problems.append(f"no warning mentioning '{want_warning}'")
print(f"{name}: mode {s['mode']}, {c['records']} records, {c['measured']} measured, "
      f"{c['unhooked']} unhooked, {c['timing_lost']} timing lost")
for p in problems: print(f"FAIL: {name}: {p}")
sys.exit(1 if problems else 0)
PY
}

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  cat > "$out/profiler_mid_run.py" <<'PY'
# torch.profiler started and stopped in the middle of a run: kineto registers its own CUPTI
# buffer callbacks, enables kinds and disables them at stop. Prints what the profiler saw.
import torch
from torch.profiler import ProfilerActivity, profile
x = torch.randn(2048, 2048, device="cuda")
def steps(n):
    for _ in range(n):
        y = x @ x
        y = torch.relu(y)
    torch.cuda.synchronize()
steps(50)
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    steps(50)
kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
steps(50)
print(f"profiler_kernels {kernels}")
PY
  cat > "$out/graph_capture_events.py" <<'PY'
# torch.cuda.graph capture (global mode) while earlier kernels are still being timed with
# CUDA events by the runtime's worker thread: the capture must not be invalidated.
import torch
x = torch.randn(4096, 4096, device="cuda")
for _ in range(20):
    y = x @ x
g = torch.cuda.CUDAGraph()
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    with torch.cuda.graph(g):
        z = torch.relu(x @ x)
for _ in range(20):
    g.replay()
torch.cuda.synchronize()
print("capture ok")
PY
  dir="$out/profiler"; mkdir -p "$dir"
  plain="$(python3 "$out/profiler_mid_run.py" | sed -n 's/profiler_kernels //p')"
  under="$(LD_PRELOAD="$lib" PM2LAT_OUT="$dir/" PM2LAT_SUMMARY="$dir/summary.json" \
           python3 "$out/profiler_mid_run.py" | sed -n 's/profiler_kernels //p')"
  note "torch.profiler mid-run: the profiler saw $plain kernels alone, $under under the runtime"
  [[ -n "$under" && "$under" == "$plain" ]] || fail "torch.profiler lost kernels under the runtime"
  check_summary profiler-mid-run "$dir/summary.json" "another CUPTI client"

  # The GPU's copies: CUPTI's MEMCPY records, counted in the summary by kind, and a
  # profiler's own copy records still handed to it.
  cat > "$out/copies.py" <<'PY'
import torch
from torch.profiler import ProfilerActivity, profile
host = torch.randn(1 << 20).pin_memory()
for _ in range(10):
    d = host.to("cuda", non_blocking=True)
    back = (d * 2).cpu()
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    d = host.to("cuda")
    torch.cuda.synchronize()
copies = sum(1 for e in prof.events() if "Memcpy" in e.name)
print(f"profiler_copies {copies}")
PY
  dir="$out/copies"; mkdir -p "$dir"
  seen="$(LD_PRELOAD="$lib" PM2LAT_OUT="$dir/" PM2LAT_SUMMARY="$dir/summary.json" \
          python3 "$out/copies.py" | sed -n 's/profiler_copies //p')"
  [[ "${seen:-0}" -ge 1 ]] || fail "torch.profiler saw no memory copy under the runtime"
  python3 - "$dir/summary.json" <<'PY' || failures=$((failures + 1))
import json, sys
t = {x["kind"]: x for x in json.load(open(sys.argv[1])).get("transfers", [])}
h2d, d2h = t.get("host_to_device", {}), t.get("device_to_host", {})
print(f"copies: host_to_device {h2d.get('count', 0)} ({h2d.get('bytes', 0)} bytes), "
      f"device_to_host {d2h.get('count', 0)} ({d2h.get('bytes', 0)} bytes)")
# 11 copies of 4 MiB in, 10 out (a CUDA context may add copies of its own).
if h2d.get("count", 0) < 11 or h2d.get("bytes", 0) < 11 * 4 << 20 or d2h.get("count", 0) < 10:
    print("FAIL: copies: the summary does not count the program's copies"); sys.exit(1)
PY

  dir="$out/graph-capture-events"; mkdir -p "$dir"
  if LD_PRELOAD="$lib" PM2LAT_TIMING=events PM2LAT_OUT="$dir/" PM2LAT_SUMMARY="$dir/summary.json" \
      python3 "$out/graph_capture_events.py" | grep -q "capture ok"; then
    check_summary graph-capture-events "$dir/summary.json"
  else
    fail "torch.cuda.graph capture failed while the runtime timed kernels with CUDA events"
  fi
else
  note "PyTorch with CUDA not available: profiler and graph-capture checks skipped"
fi

# Hook mode with events timing: the path of a driver without CUPTI callbacks, and, on a driver
# older than 12.8 (r535, r550), the entry points asked for at the driver's own version.
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
if [[ -x "$gemm" ]]; then
  dir="$out/hooks-events"; mkdir -p "$dir"
  LD_PRELOAD="$lib" PM2LAT_LAUNCH_SOURCE=hooks PM2LAT_TIMING=events PM2LAT_OUT="$dir/" \
    PM2LAT_SUMMARY="$dir/summary.json" "$gemm" 50 >/dev/null
  check_summary "hooks-events (driver $driver)" "$dir/summary.json"
  python3 - "$dir" <<'PY' || failures=$((failures + 1))
import glob, json, sys
names = 0
for path in glob.glob(sys.argv[1] + "/records.*.jsonl"):
    with open(path) as f:
        next(f)
        names += sum(1 for line in f if json.loads(line)["name"])
print(f"hooks-events: {names} named records")
sys.exit(0 if names else 1)
PY
fi

# A program on the second GPU (cuda:1): every record must say device 1 and be scored against
# that device's GPU, not device 0's (the fake stack's FAKE_CUDA_DEVICE=H100,A100 machine shows
# it; shim/README.md, "Known limits"). CUDA_DEVICE_ORDER=PCI_BUS_ID numbers the devices as
# nvidia-smi lists them.
gpu_names="$(nvidia-smi --query-gpu=name --format=csv,noheader)"
if [[ $(wc -l <<<"$gpu_names") -ge 2 ]] &&
   python3 -c "import torch; assert torch.cuda.device_count() >= 2" 2>/dev/null; then
  cat > "$out/second_device.py" <<'PY'
import torch
torch.cuda.set_device(1)
x = torch.randn(2048, 2048, device="cuda:1")
for _ in range(20):
    y = torch.relu(x @ x)
torch.cuda.synchronize()
PY
  dir="$out/second-device"; mkdir -p "$dir"
  CUDA_DEVICE_ORDER=PCI_BUS_ID LD_PRELOAD="$lib" PM2LAT_OUT="$dir/" \
    PM2LAT_SUMMARY="$dir/summary.json" python3 "$out/second_device.py"
  check_summary second-device "$dir/summary.json"
  python3 - "$dir" "$(sed -n 1p <<<"$gpu_names")" "$(sed -n 2p <<<"$gpu_names")" <<'PY' \
    || failures=$((failures + 1))
import glob, json, sys
d, name0, name1 = sys.argv[1:4]
devices, gpus, device0_gpu = set(), set(), None
for path in glob.glob(d + "/records.*.jsonl"):
    with open(path) as f:
        device0_gpu = json.loads(next(f)).get("gpu")
        for line in f:
            r = json.loads(line)
            devices.add(r["device"])
            gpus.add(r["gpu"])
print(f"second-device: records on devices {sorted(devices)}, scored on {sorted(gpus)}; "
      f"device 0 ({name0}) is {device0_gpu}, device 1 is {name1}")
ok = devices == {1} and len(gpus) == 1 and "" not in gpus
if ok and name0 != name1 and gpus == {device0_gpu}:
    print(f"FAIL: second-device: {name1}'s kernels scored on device 0's GPU")
    ok = False
elif not ok:
    print("FAIL: second-device: records not all on device 1 with one known GPU")
sys.exit(0 if ok else 1)
PY
else
  note "fewer than two GPUs (or no PyTorch): the second-device check skipped"
fi

# A program on a MIG partition: its records must name the partition (the driver's device name
# reads "<GPU> MIG <profile>"; the fake's FAKE_CUDA_DEVICE=A100MIG is such a device), scored as
# its share of the whole GPU, said once in the warnings.
mig_uuid="$(nvidia-smi -L 2>/dev/null | grep -oE 'UUID: MIG-[^)]+' | head -1 | cut -d' ' -f2 || true)"
if [[ -n "$mig_uuid" ]] && python3 -c "import torch" 2>/dev/null; then
  dir="$out/mig"; mkdir -p "$dir"
  CUDA_VISIBLE_DEVICES="$mig_uuid" LD_PRELOAD="$lib" PM2LAT_OUT="$dir/" \
    PM2LAT_SUMMARY="$dir/summary.json" python3 -c "
import torch
x = torch.randn(2048, 2048, device='cuda')
for _ in range(20):
    y = torch.relu(x @ x)
torch.cuda.synchronize()"
  check_summary mig "$dir/summary.json"
  python3 - "$dir" <<'PY' || failures=$((failures + 1))
import glob, json, sys
d = sys.argv[1]
gpus = set()
for path in glob.glob(d + "/records.*.jsonl"):
    with open(path) as f:
        gpus.add(json.loads(next(f)).get("gpu"))
warnings = json.load(open(d + "/summary.json")).get("warnings", [])
said = [w for w in warnings if "is a MIG partition of" in w]
print(f"mig: records name {sorted(gpus)}; {said[0] if said else 'no partition warning'}")
ok = len(gpus) == 1 and " MIG " in next(iter(gpus)) and len(said) == 1
if not ok:
    print("FAIL: mig: the partition is not what its kernels were scored as")
sys.exit(0 if ok else 1)
PY
else
  note "no MIG partition (or no PyTorch): the MIG check skipped"
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
