#!/usr/bin/env bash
# Thin GEMMs past the K range a GPU's table calibrated (predictor/MODELS.md, "GEMMs past their
# calibrated range"): each table is cut at a K of 8192 (every row with a longer reduction left
# out of the calibration), and its thin rows past the cut are forecast, the shapes no shipped
# figure sees:
#   1. AIConfigurator BF16: products of 1-8 rows with K > 8192, on their own GPU (calls with a
#      nominal launch: the library's choice);
#   2. NeuSight FP32 `linear`: products of at most 32 rows or columns with a reduction over 8192
#      on the five densely measured GPUs, on their own GPU (the launch observed) and across
#      them (no launch on the target).
#
#   scripts/eval-past-range.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
. "$root/scripts/measurement-data.sh" aiconfigurator/gemm_bf16.csv.gz neusight/kernels.csv.gz
calib=$build/calibrate/pm2lat-calibrate
pm2lat=$build/reports/pm2lat
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# cut TABLE FORMAT TRAIN TEST: rows whose reduction runs past 8192 leave the calibration; the
# thin ones among them are the test.
cut() {
  python3 - "$@" <<'EOF'
import csv, gzip, sys
table, fmt, train, test = sys.argv[1:5]
with gzip.open(table, "rt", newline="") as f, gzip.open(train, "wt", newline="") as tr, \
     gzip.open(test, "wt", newline="") as te:
    rows = csv.DictReader(f)
    keep = csv.DictWriter(tr, rows.fieldnames)
    held = csv.DictWriter(te, rows.fieldnames)
    keep.writeheader()
    held.writeheader()
    for r in rows:
        if fmt == "aiconfigurator":
            past, thin = int(r["k"]) > 8192, int(r["m"]) <= 8
        elif r["op"] in ("linear", "bmm"):
            # NeuSight: A[B,M,N] x B[B,N,K], N the reduction.
            past = float(r["N"]) > 8192
            thin = r["op"] == "linear" and min(float(r["M"]), float(r["K"])) <= 32
        else:
            past = thin = False
        if not past:
            keep.writerow(r)
        elif thin:
            held.writerow(r)
EOF
}

mkdir -p "$work/aic" "$work/neusight"
cp "$root"/calibrate/profiles/devices.json "$root"/calibrate/profiles/*.neusight-fp32.json \
  "$work/aic/"
cut "$data/aiconfigurator/gemm_bf16.csv.gz" aiconfigurator "$work/aic.train.csv.gz" \
  "$work/aic.test.csv.gz"
"$calib" import --format aiconfigurator --data "$work/aic.train.csv.gz" --out "$work/aic" \
  --catalogue "$work/aic/devices.json" --tag aiconfigurator-bf16 >/dev/null
echo "=== AIConfigurator BF16, 1-8 rows past K = 8192, own GPU"
"$pm2lat" eval gemm --data "$work/aic.test.csv.gz" --profiles "$work/aic"

dense=V100-PCIE-32GB,T4,A100-PCIE-40GB,P100-PCIE-16GB,P4
cp "$root"/calibrate/profiles/*.json "$work/neusight/"
rm -f "$work/neusight/error_bands.json"
for gpu in ${dense//,/ }; do rm -f "$work/neusight/$gpu.neusight-fp32.json"; done
cut "$data/neusight/kernels.csv.gz" neusight "$work/neusight.train.csv.gz" \
  "$work/neusight.test.csv.gz"
"$calib" import --data "$work/neusight.train.csv.gz" --out "$work/neusight" \
  --catalogue "$work/neusight/devices.json" --tag neusight-fp32 --devices "$dense" >/dev/null
echo
echo "=== NeuSight FP32 linear, at most 32 rows or columns, reduction past 8192, own GPU"
"$pm2lat" --profiles "$work/neusight" eval kernels --data "$work/neusight.test.csv.gz" \
  --ops linear
echo
echo "=== the same rows, measured on one GPU, forecast on another"
"$pm2lat" --profiles "$work/neusight" eval kernels --data "$work/neusight.test.csv.gz" \
  --ops linear --source all --target all --matrix
