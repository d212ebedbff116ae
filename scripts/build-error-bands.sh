#!/usr/bin/env bash
# Estimates the shipped error-band table (calibrate/profiles/error_bands.json; the model in
# predictor/MODELS.md, "Error bands") from out-of-sample predictions only:
#
#  1. the NeuSight kernel table split by shape (80 % calibrates, the held-out 20 % is
#     predicted): each held-out row on its own GPU (call time) and, cross-GPU, as measured on
#     every other GPU of the table;
#  2. every profiler trace of $DATA/traces on its own GPU, leave one trace out: the
#     trace-calibrated profiles rebuilt from the OTHER traces, then the held-out trace replayed
#     (kernel time); and replayed again without any trace calibration of its GPU (the other
#     traces of its GPU left out too), as a trace of a GPU only kernel tables timed is.
#
# Then scripts/build-error-bands.py groups the predictions and writes the table.
#
#   scripts/build-error-bands.sh [BUILD_DIR] [OUT_FILE] [KEEP_DIR]
#
# KEEP_DIR keeps the predictions (KEEP_DIR/rows/*.csv, KEEP_DIR/loo/TRACE/records,
# KEEP_DIR/logo/TRACE/records) and each trace's leave-one-out profiles
# (KEEP_DIR/loo/TRACE/profiles): scripts/eval-real-runs.sh
# judges every trace with a table estimated without it from these.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/ci}
out_file=${2:-$root/calibrate/profiles/error_bands.json}
. "$root/scripts/measurement-data.sh" neusight/kernels.csv.gz traces
pm2lat=$build/reports/pm2lat
calibrate=$build/calibrate/pm2lat-calibrate
for tool in "$pm2lat" "$calibrate"; do
  [ -x "$tool" ] || { echo "error: $tool not built" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
keep=${3:-$tmp/keep}
mkdir -p "$keep/rows" "$keep/loo"
shipped=$root/calibrate/profiles

# 1. NeuSight, held-out shapes: same GPU and every other GPU.
. "$root/scripts/neusight-held-out.sh"
neusight_held_out_profiles "$calibrate" "$tmp/ns" "$tmp/train.csv.gz" "$tmp/test.csv.gz" >/dev/null
"$pm2lat" eval kernels --data "$tmp/test.csv.gz" --profiles "$tmp/ns" \
  --band-rows "$keep/rows/neusight_same_gpu.csv" >/dev/null
"$pm2lat" eval kernels --data "$tmp/test.csv.gz" --profiles "$tmp/ns" --source all --target all \
  --band-rows "$keep/rows/neusight_cross_gpu.csv" >/dev/null

# 2. Traces, leave one out.
for held in "$data"/traces/*.json.gz; do
  name=$(basename "$held" .json.gz)
  loo=$keep/loo/$name
  rm -rf "$loo" "$tmp/r" "$tmp/t" && mkdir -p "$loo/profiles" "$loo/records" "$tmp/r" "$tmp/t"
  cp "$shipped"/*.json "$loo/profiles/"
  rm -f "$loo"/profiles/*.traces-kernel.json "$loo/profiles/error_bands.json"
  for t in "$data"/traces/*.json.gz; do [ "$t" = "$held" ] || ln -s "$t" "$tmp/t/"; done
  "$pm2lat" replay "$tmp/t" --quiet --profiles "$loo/profiles" --out "$tmp/r" >/dev/null
  "$calibrate" import-records "$tmp"/r/records.*.jsonl --out "$loo/profiles" \
    --catalogue "$loo/profiles/devices.json" --tag traces-kernel --source "other traces" >/dev/null
  "$pm2lat" replay "$held" --quiet --profiles "$loo/profiles" --out "$tmp/held" >/dev/null
  mv "$tmp"/held/records.*.jsonl "$loo/records/"
  rm -rf "$tmp/held"
  # The same trace with no trace calibration of its GPU at all (every trace of its GPU left
  # out): the predictions a trace of a GPU that only kernel tables timed gets (V100, B200).
  gpu=$(head -1 "$loo"/records/records.*.jsonl | python3 -c "import json,sys; print(json.load(sys.stdin).get('gpu') or '')")
  logo=$keep/logo/$name
  rm -rf "$logo" "$tmp/p" && mkdir -p "$logo/records" && cp -r "$loo/profiles" "$tmp/p"
  [ -n "$gpu" ] && rm -f "$tmp/p/$gpu.traces-kernel.json"
  "$pm2lat" replay "$held" --quiet --profiles "$tmp/p" --out "$tmp/held" >/dev/null
  mv "$tmp"/held/records.*.jsonl "$logo/records/"
  rm -rf "$tmp/held" "$tmp/p"
done

python3 "$root/scripts/build-error-bands.py" --out "$out_file" \
  --rows "$keep/rows/*.csv" --records "$keep/loo/*/records/records.*.jsonl" \
  --records "$keep/logo/*/records/records.*.jsonl" \
  --source "out-of-sample predictions: NeuSight kernels.csv held-out 20 % of shapes (same GPU and cross-GPU), profiler traces leave one trace out, and each trace again with every trace of its GPU left out; scripts/build-error-bands.sh"
echo "wrote $out_file"
