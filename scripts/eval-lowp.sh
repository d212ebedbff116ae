#!/usr/bin/env bash
# Out-of-sample accuracy of the low-precision GEMM models (FP8 per-tensor, block-scaled FP8,
# NVFP4, and GB200's BF16): the AIConfigurator low-precision table and the BF16 table are split
# by shape 80/20 with the same key (a held-out (m, n, k) is held out in every type and on every
# GPU), profiles are built from the 80 %, and the 20 % is predicted:
#   1. each call on its own GPU, per system x type;
#   2. cross-GPU: each call presented as measured on one GPU and predicted on another;
#   3. a GPU nobody calibrated: each GPU's profiles removed in turn (B200 <-> GB200 within
#      Blackwell; H100 has no other Hopper GPU) and its calls predicted from the most similar
#      calibrated GPU carried over by spec ratios.
#
#   scripts/eval-lowp.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
data=${PM2LAT_DATA:-$root/../shared/data}
calib=$build/calibrate/pm2lat-calibrate
pm2lat=$build/reports/pm2lat
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/profiles"
cp "$root"/calibrate/profiles/devices.json "$root"/calibrate/profiles/*.neusight-fp32.json "$work/profiles/"
for table in gemm_bf16 gemm_lowp; do
  "$calib" split --format aiconfigurator --data "$data/aiconfigurator/$table.csv.gz" \
    --fraction 0.2 --train "$work/$table.train.csv.gz" --test "$work/$table.test.csv.gz"
  "$calib" import --format aiconfigurator --data "$work/$table.train.csv.gz" \
    --out "$work/profiles" --catalogue "$work/profiles/devices.json" \
    --tag "aiconfigurator-${table#gemm_}" >/dev/null
done
test=$work/gemm_lowp.test.csv.gz
echo "=== Low-precision GEMM calls, each shape on its own GPU"
"$pm2lat" eval gemm --data "$test" --profiles "$work/profiles"
echo
echo "=== Cross-GPU: measured on one GPU, predicted on another (per type over all pairs at the end)"
"$pm2lat" eval gemm --data "$test" --profiles "$work/profiles" --source all --target all --matrix
echo
echo "=== A GPU without a profile: its profiles removed, predicted from the most similar GPU"
for gpu in B200-SXM GB200 H100-SXM; do
  rm -rf "$work/without" && cp -r "$work/profiles" "$work/without"
  rm -f "$work/without/$gpu".*.json
  echo "--- $gpu removed"
  "$pm2lat" eval gemm --data "$test" --profiles "$work/without" | grep -E "^$gpu "
done
