#!/usr/bin/env bash
# Forecasts of real runs, out of sample (the figures the real-run goals are stated in):
#
#  1. every profiler trace of $DATA/traces on its own GPU, leave one trace out: the
#     trace-calibrated profiles (*.traces-kernel.json) rebuilt from the OTHER traces, then the
#     held-out trace replayed. Per trace: whole-trace error, per-kernel median APE, the worst
#     family with >= 5 % of kernel time (predicted/measured), coverage and the rest by reason,
#     band coverage (share of kernels inside their own-GPU error band, with a band table
#     estimated without the trace), and per family error and ratio;
#     1b. the same with every trace of the held-out trace's GPU left out (no trace calibration
#     of its GPU at all, as for a trace of a GPU only kernel tables timed): whole-trace error,
#     per-kernel median APE and the families off by more than 2x;
#  2. the small operators (< 1 MB of operands and results) of the NeuSight table, held-out 20 %
#     of shapes, profiles built from the other 80 % (call time, as NeuSight measured it);
#  3. every kernel of every trace and every table row predicted on every catalogue GPU against
#     its physical bounds (`pm2lat eval bounds`);
#  4. whether each trace kernel's forecasts for several GPUs are in the GPUs' order
#     (scripts/cross-gpu-consistency.py), the model's and, apart, those anchored to the
#     measurement.
#
#   scripts/eval-real-runs.sh [BUILD_DIR] [OUT_DIR]
#
# DATA: $PM2LAT_DATA, else ../shared/data next to the project. OUT_DIR keeps the JSON of
# every step (default: a temporary directory, removed at the end).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/ci}
data=${PM2LAT_DATA:-$root/../shared/data}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${2:-$work/out}
mkdir -p "$out/traces"
export PM2LAT_DATA=$data
pm2lat=$build/reports/pm2lat
calibrate=$build/calibrate/pm2lat-calibrate

# 1. Traces, leave one out. scripts/build-error-bands.sh replays every trace with the
#    trace-calibrated profiles rebuilt from the OTHER traces and keeps those predictions; each
#    trace is then judged with an error-band table estimated without it (NeuSight held-out
#    rows and the other traces' predictions), beside its leave-one-out profiles.
#    PM2LAT_BANDS_KEEP=DIR reuses the predictions a `scripts/build-error-bands.sh BUILD OUT DIR`
#    run kept there (same build and data), instead of making them again.
bands=${PM2LAT_BANDS_KEEP:-$work/bands}
[ -n "${PM2LAT_BANDS_KEEP:-}" ] ||
  "$root/scripts/build-error-bands.sh" "$build" "$work/bands_all.json" "$bands" >/dev/null
for held in "$data"/traces/*.json.gz; do
  name=$(basename "$held" .json.gz)
  loo=$bands/loo/$name
  others=()
  for r in "$bands"/loo/*/records/records.*.jsonl "$bands"/logo/*/records/records.*.jsonl; do
    case "$r" in "$loo"/* | "$bands/logo/$name"/*) ;; *) others+=(--records "$r") ;; esac
  done
  rm -rf "$work/p" && cp -r "$loo/profiles" "$work/p"
  python3 "$root/scripts/build-error-bands.py" --out "$work/p/error_bands.json" \
    --rows "$bands/rows/*.csv" "${others[@]}" --source "all but $name"
  "$pm2lat" replay "$held" --profiles "$work/p" --json "$out/traces/$name.json" >/dev/null
  # 1b. The same trace as if its GPU had no trace calibration at all (every trace of its GPU
  #     left out, not only this one), judged with the same band table: how a trace is
  #     forecast on a GPU whose kernels were timed only in kernel tables or not at all (a
  #     V100, an A100-80GB, a B200 trace).
  mkdir -p "$out/traces-gpu-out"
  gpu=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['traces'][0]['gpu'] or '')" \
    "$out/traces/$name.json")
  [ -n "$gpu" ] && rm -f "$work/p/$gpu.traces-kernel.json"
  "$pm2lat" replay "$held" --profiles "$work/p" --json "$out/traces-gpu-out/$name.json" >/dev/null
done
# NeuSight held-out shapes: each half of the shapes judged by a table estimated without it.
python3 "$root/scripts/build-error-bands.py" --out "$work/bands_folds.json" \
  --rows "$bands/rows/*.csv" --records "$bands/loo/*/records/records.*.jsonl" \
  --records "$bands/logo/*/records/records.*.jsonl" \
  --judge-folds 2 --coverage-json "$out/band_coverage_rows.json"

# 2. NeuSight small operators, held-out shapes.
. "$root/scripts/neusight-held-out.sh"
neusight_held_out_profiles "$calibrate" "$work/ns" "$work/train.csv.gz" "$work/test.csv.gz" \
  >/dev/null
"$pm2lat" eval kernels --data "$work/test.csv.gz" --profiles "$work/ns" --max-bytes 1048576 \
  --json "$out/small_ops.json" >/dev/null

# 3. Physical bounds of every prediction (shipped profiles, every catalogue GPU).
gemm_tables=()
for f in "$data"/aiconfigurator/gemm_*.csv.gz; do gemm_tables+=(--gemm "$f"); done
"$pm2lat" eval bounds --traces "$data/traces" --neusight "$data/neusight/kernels.csv.gz" \
  "${gemm_tables[@]}" --attention "$data/aiconfigurator/attention_bf16.csv.gz" \
  --json "$out/bounds.json" >/dev/null

python3 - "$out" <<'PY'
import glob, json, math, os, sys
out = sys.argv[1]
def f(v, fmt="{:.1f}"):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)
print("1. traces on their own GPU, leave one trace out")
print(f'{"trace":<34} {"gpu":<15} {"shapes%":>7} {"error%":>7} {"medAPE%":>7} '
      f'{"worst family (ratio, share%)":<34} {"covered%":>8} {"band%":>5}  not covered')
banded = inside = 0
for path in sorted(glob.glob(os.path.join(out, "traces", "*.json"))):
    whole = json.load(open(path))
    t = whole["traces"][0]
    if whole.get("band_coverage_pct") is not None:
        banded += whole["banded_kernels"]
        inside += whole["banded_kernels"] * whole["band_coverage_pct"] / 100
    w = t.get("worst_major_family")
    worst = f'{w["family"]} ({w["ratio"]:.2f}x, {w["share_pct"]:.0f})' if w else "-"
    reasons = t.get("coverage_by_reason_pct") or {}
    rest = ", ".join(f"{k} {v:.1f}" for k, v in reasons.items() if k != "covered" and v and v > 0.05)
    shapes = 100.0 * t["kernels_with_shapes"] / max(1, t["kernels"])
    print(f'{t["trace"].replace(".json.gz", ""):<34} {str(t["gpu"]):<15} {shapes:7.0f} '
          f'{f(t["error_pct"]):>7} {f(t["per_kernel_median_ape_pct"]):>7} {worst:<34} '
          f'{f(t["coverage_time_pct"]):>8} {f(t["band_coverage_pct"]):>5}  {rest}')
    total = sum(x["measured_ms"] or 0 for x in t["families"] if not x.get("communication"))
    for x in t["families"]:
        if x.get("communication") or not x["measured_ms"]:
            continue
        share = 100 * x["measured_ms"] / total if total else 0
        print(f'    {x["family"]:<18} {x["kernels"]:6d} kernels {share:5.1f}% of time  '
              f'ratio {f(x.get("ratio"), "{:.2f}")}  error {f(x["error_pct"])}%')
print("\n1b. the same traces with no trace calibration of their GPU (every trace of it left out)")
print(f'{"trace":<34} {"gpu":<15} {"error%":>7} {"medAPE%":>7} {"band%":>5}  families off by more than 2x (ratio, share%)')
for path in sorted(glob.glob(os.path.join(out, "traces-gpu-out", "*.json"))):
    t = json.load(open(path))["traces"][0]
    total = sum(x["measured_ms"] or 0 for x in t["families"] if not x.get("communication"))
    off = []
    for x in t["families"]:
        r = x.get("ratio")
        if x.get("communication") or not x["measured_ms"] or r is None or not total:
            continue
        if r > 2 or r < 0.5:
            off.append(f'{x["family"]} {r:.2f}x {100 * x["measured_ms"] / total:.0f}')
    band = json.load(open(path)).get("band_coverage_pct")
    print(f'{t["trace"].replace(".json.gz", ""):<34} {str(t["gpu"]):<15} '
          f'{f(t["error_pct"]):>7} {f(t["per_kernel_median_ape_pct"]):>7} {f(band):>5}  '
          f'{", ".join(off) or "-"}')
cov = json.load(open(os.path.join(out, "band_coverage_rows.json")))
print(f"band coverage over every trace's kernels: {f(100 * inside / banded if banded else None)} % of {banded}")
print("\nband coverage, NeuSight held-out shapes (2 folds by shape, each judged without itself)")
for k, v in cov.items():
    print(f'    {k:<34} n {v["n"]:7d}  inside band {v["band_coverage_pct"]:5.1f} %')
print("\n2. NeuSight small operators (< 1 MB), held-out shapes, call time")
s = json.load(open(os.path.join(out, "small_ops.json")))
print(f'{"device":<16} {"n":>6} {"error%":>7} {"medAPE%":>7} {"MAPE%":>7}  worst op (ratio)')
for d in s["devices"]:
    groups = [g for g in s["groups"] if g["device"] == d["device"] and g["measured_us"] > 0]
    share = lambda g: g["measured_us"] / max(1e-9, d["measured_us"])
    major = [g for g in groups if share(g) >= 0.05] or groups
    worst = max(major, key=lambda g: abs(math.log(max(1e-9, g["predicted_us"]) / g["measured_us"])))
    err = abs(d["predicted_us"] - d["measured_us"]) / d["measured_us"] * 100
    print(f'{d["device"]:<16} {d["n"]:6d} {err:7.1f} {d["median_ape_pct"]:7.1f} {d["mape_pct"]:7.1f}  '
          f'{worst["op"]} {worst["family"]} ({worst["predicted_us"] / worst["measured_us"]:.2f}x)')
print(f'overall: n {s["overall"]["n"]}, median APE {s["overall"]["median_ape_pct"]:.1f} %, '
      f'MAPE {s["overall"]["mape_pct"]:.1f} %')
print("\n3. physical bounds, every catalogue GPU as a target")
b = json.load(open(os.path.join(out, "bounds.json")))
n = sum(v["n"] for v in b["predicted"].values())
below = sum(v["below"] for v in b["predicted"].values())
above = sum(v["above"] for v in b["predicted"].values())
print(f"predictions: {n}, below the lower bound {below}, above the upper bound {above}")
for k, v in b["predicted"].items():
    if v["below"] or v["above"]:
        print(f'    {k:<34} n {v["n"]:8d}  below {v["below"]:6d}  above {v["above"]:6d}')
mb = sum(v["below"] for v in b["measured"].values())
ma = sum(v["above"] for v in b["measured"].values())
mn = sum(v["n"] for v in b["measured"].values())
print(f"measurements outside the bounds of their own GPU: {mb} below, {ma} above, of {mn}")
PY

# 4. Forecasts of one kernel for several GPUs, in the order of the GPUs: every trace's
#    leave-one-out records (each kernel forecast for the replay's default targets), kernels
#    recorded without a shape, then every kernel.
echo
echo "4. cross-GPU order of forecasts: pairs where a GPU at least as large in every respect is forecast slower"
echo "kernels without a shape:"
python3 "$root/scripts/cross-gpu-consistency.py" --catalogue "$root/calibrate/profiles/devices.json" \
  "$bands"/loo/*/records/records.*.jsonl
echo "every kernel:"
python3 "$root/scripts/cross-gpu-consistency.py" --all-kernels \
  --catalogue "$root/calibrate/profiles/devices.json" "$bands"/loo/*/records/records.*.jsonl
echo "every kernel whose forecasts are anchored to its measurement (measured_guard.h):"
python3 "$root/scripts/cross-gpu-consistency.py" --all-kernels --anchored \
  --catalogue "$root/calibrate/profiles/devices.json" "$bands"/loo/*/records/records.*.jsonl
