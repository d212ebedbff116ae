#!/usr/bin/env bash
# The measurement guard (predictor/include/pm2lat/measured_guard.h): how its disagreement
# factor was chosen and what it does to cross-GPU forecasts out of sample.
#
#   scripts/eval-guard.sh [BUILD_DIR] [OUT_DIR]
#
# 1. NeuSight kernel table ($PM2LAT_DATA, calibrate/DATA.md) split by shape 80/20 as in
#    scripts/eval-kernels.sh; profiles from the 80 %; the 20 % halved by shape (seed 2) into a
#    selection half and a report half.
# 2. Selection half: every candidate factor, every GPU pair; the chosen factor is the smallest
#    that lowers some pair's p95 and raises no pair's mean (selection.txt).
# 3. Report half with the shipped constants, with and without the guard (kernels-report.txt);
#    the whole-model live-run pairs, shipped and held-out profiles (live-plain.txt,
#    live-heldout.txt); the AIConfigurator BF16 GEMM table, 80/20 (gemm.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
out=${2:-$root/pm2lat-eval-guard}
. "$root/scripts/measurement-data.sh" neusight/kernels.csv.gz neusight/models/index.csv \
  aiconfigurator/gemm_bf16.csv.gz
pm2lat=$build/reports/pm2lat
calib=$build/calibrate/pm2lat-calibrate
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$root/scripts/neusight-held-out.sh"
neusight_held_out_profiles "$calib" "$work/profiles" "$work/train.csv.gz" "$work/test.csv.gz" \
  >/dev/null
"$calib" split --data "$work/test.csv.gz" --fraction 0.5 --seed 2 \
  --train "$work/select.csv.gz" --test "$work/report.csv.gz" >/dev/null

cross() { "$pm2lat" eval kernels --profiles "$work/profiles" --source all --target all "$@"; }

: >"$out/selection.txt"
chosen=""
for f in 1.25 1.5 2 2.5 3 4 5 6 8; do
  line=$(cross --data "$work/select.csv.gz" --guard-factor "$f" | grep -E '^pairs [0-9]+:')
  echo "factor $f  $line" | tee -a "$out/selection.txt"
  lower=$(sed -E 's/.*p95 lower in ([0-9]+).*/\1/' <<<"$line")
  raised=$(sed -E 's/.*mean raised in ([0-9]+).*/\1/' <<<"$line")
  if [ -z "$chosen" ] && [ "$lower" -gt 0 ] && [ "$raised" -eq 0 ]; then chosen=$f; fi
done
echo "chosen on the selection half: ${chosen:-none}" | tee -a "$out/selection.txt"

cross --data "$work/report.csv.gz" >"$out/kernels-report.txt"
echo "report half (shipped constants): $(grep -E '^pairs [0-9]+:' "$out/kernels-report.txt")"

mkdir -p "$work/heldout"
cp "$root"/calibrate/profiles/*.json "$work/heldout/"
rm -f "$work"/heldout/*.neusight-fp32.json
cp "$work"/profiles/*.neusight-fp32.json "$work/heldout/"
"$pm2lat" eval models --data "$data/neusight/models" --source all --target all \
  --json "$out/live-plain.json" >"$out/live-plain.txt"
"$pm2lat" eval models --data "$data/neusight/models" --profiles "$work/heldout" \
  --source all --target all --json "$out/live-heldout.json" >"$out/live-heldout.txt"
for v in plain heldout; do
  echo "live-run, $v:"
  grep -E '^pairs [0-9]+ |^without|^pairs [0-9]+:' "$out/live-$v.txt" | sed 's/^/  /'
done

mkdir -p "$work/gemm"
cp "$root"/calibrate/profiles/devices.json "$root"/calibrate/profiles/*.neusight-fp32.json \
  "$work/gemm/"
"$calib" split --format aiconfigurator --data "$data/aiconfigurator/gemm_bf16.csv.gz" \
  --fraction 0.2 --train "$work/gemm-train.csv.gz" --test "$work/gemm-test.csv.gz" >/dev/null
"$calib" import --format aiconfigurator --data "$work/gemm-train.csv.gz" --out "$work/gemm" \
  --catalogue "$work/gemm/devices.json" --tag aiconfigurator-bf16 >/dev/null
"$pm2lat" eval gemm --data "$work/gemm-test.csv.gz" --profiles "$work/gemm" --source all \
  --target all >"$out/gemm.txt"
echo "AIConfigurator BF16 GEMM: $(grep -E '^pairs [0-9]+:' "$out/gemm.txt")"
echo "outputs in $out"
