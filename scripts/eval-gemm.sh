#!/usr/bin/env bash
# Out-of-sample tensor-core GEMM accuracy: split the AIConfigurator BF16 GEMM table
# ($PM2LAT_DATA, default ../shared/data; calibrate/DATA.md) by shape (80/20, the same shape on
# every GPU on the same side), build profiles from the 80 % (plus the NeuSight FP32 profiles,
# as shipped), and evaluate the 20 % with `pm2lat eval gemm`: each row on its own GPU, then
# every row presented as measured on one GPU and predicted on every other (cross-GPU matrix).
#
#   scripts/eval-gemm.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
. "$root/scripts/measurement-data.sh" aiconfigurator/gemm_bf16.csv.gz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/profiles"
cp "$root"/calibrate/profiles/devices.json "$root"/calibrate/profiles/*.neusight-fp32.json "$work/profiles/"
"$build/calibrate/pm2lat-calibrate" split --format aiconfigurator \
  --data "$data/aiconfigurator/gemm_bf16.csv.gz" \
  --fraction 0.2 --train "$work/train.csv.gz" --test "$work/test.csv.gz"
"$build/calibrate/pm2lat-calibrate" import --format aiconfigurator --data "$work/train.csv.gz" \
  --out "$work/profiles" --catalogue "$work/profiles/devices.json" --tag aiconfigurator-bf16 >/dev/null
echo "=== BF16 GEMM, each shape on its own GPU"
"$build/reports/pm2lat" eval gemm --data "$work/test.csv.gz" --profiles "$work/profiles"
echo
echo "=== BF16 GEMM, cross-GPU: measured on one GPU, predicted on another"
"$build/reports/pm2lat" eval gemm --data "$work/test.csv.gz" --profiles "$work/profiles" \
  --source all --target all --matrix
