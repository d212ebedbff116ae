#!/usr/bin/env bash
# Rebuilds the shipped device profiles (calibrate/profiles/*.json) from the public
# measurements in $PM2LAT_DATA (default ../shared/data; calibrate/DATA.md).
#
#   scripts/build-profiles.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
calib=$build/calibrate/pm2lat-calibrate
[ -x "$calib" ] || { echo "error: $calib not built (cmake --build --preset default)" >&2; exit 1; }
out=$root/calibrate/profiles
. "$root/scripts/measurement-data.sh" neusight/kernels.csv.gz aiconfigurator/gemm_bf16.csv.gz \
  aiconfigurator/attention_bf16.csv.gz traces
meas=$data

"$calib" import --data "$meas/neusight/kernels.csv.gz" --out "$out" \
  --catalogue "$out/devices.json" --tag neusight-fp32 \
  --source "sitar-lab/NeuSight kernels.csv (commit 6945927), MIT; calibrate/DATA.md"

"$calib" import --format aiconfigurator --data "$meas/aiconfigurator/gemm_bf16.csv.gz" --out "$out" \
  --catalogue "$out/devices.json" --tag aiconfigurator-bf16 \
  --source "ai-dynamo/aiconfigurator silicon database GEMM tables (commit 095f58a), Apache-2.0; calibrate/DATA.md"

data=${PM2LAT_DATA:-$root/../shared/data}
"$calib" import --format aiconfigurator --data "$data/aiconfigurator/gemm_lowp.csv.gz" --out "$out" \
  --catalogue "$out/devices.json" --tag aiconfigurator-lowp \
  --source "ai-dynamo/aiconfigurator silicon database GEMM tables, FP8/FP8-block/NVFP4 and GB200 BF16 (commit 095f58a), Apache-2.0; aiconfigurator/gemm_lowp.csv.gz"

"$calib" import-attention --data "$meas/aiconfigurator/attention_bf16.csv.gz" --out "$out" \
  --catalogue "$out/devices.json" --tag aiconfigurator-attention \
  --source "ai-dynamo/aiconfigurator silicon database attention tables (commit 095f58a), Apache-2.0; calibrate/DATA.md"

"$calib" import-conv --data "$meas/neusight/kernels.csv.gz" --out "$out" \
  --catalogue "$out/devices.json" --tag neusight-conv \
  --source "sitar-lab/NeuSight kernels.csv conv rows (commit 6945927), MIT; calibrate/DATA.md"

# Long-tail kernel families from the public profiler traces: replay them to kernel records
# (CUPTI durations with operator shapes), then fit. The replay runs without the trace profiles
# of an earlier build, as the leave-one-out evaluation's does (scripts/build-error-bands.sh):
# what it fits is then a function of the data and this build alone.
records=$(mktemp -d)
trap 'rm -rf "$records"' EXIT
rm -f "$out"/*.traces-kernel.json
"$build/reports/pm2lat" replay "$meas/traces" --quiet --profiles "$out" --out "$records" > /dev/null
"$calib" import-records "$records"/records.*.jsonl --out "$out" \
  --catalogue "$out/devices.json" --tag traces-kernel \
  --source "HolisticTraceAnalysis, TraceLens and TrioSim profiler traces (MIT); calibrate/DATA.md"

# The expected error of every prediction, from out-of-sample predictions with the profiles
# above (calibrate/profiles/error_bands.json; scripts/build-error-bands.sh).
"$root/scripts/build-error-bands.sh" "$build" "$out/error_bands.json"
