#!/usr/bin/env bash
# Out-of-sample kernel accuracy (the figure the predictor-core goals are stated in): split the
# NeuSight table ($PM2LAT_DATA, default ../shared/data; calibrate/DATA.md) by shape (80/20,
# the same shape on every GPU on the same side), build profiles from the 80 %, and evaluate
# the 20 % with `pm2lat eval kernels`.
#
#   scripts/eval-kernels.sh [BUILD_DIR] [JSON_OUT] [EVAL OPTIONS...]
#
# Cross-GPU (each test shape presented as measured on one GPU, predicted on every other):
#   scripts/eval-kernels.sh build/default "" --source all --target all --matrix
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
. "$root/scripts/measurement-data.sh" neusight/kernels.csv.gz
json=${2:-}
shift $(( $# < 2 ? $# : 2 ))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/profiles"
cp "$root/calibrate/profiles/devices.json" "$work/profiles/"
"$build/calibrate/pm2lat-calibrate" split --data "$data/neusight/kernels.csv.gz" \
  --fraction 0.2 --train "$work/train.csv.gz" --test "$work/test.csv.gz"
"$build/calibrate/pm2lat-calibrate" import --data "$work/train.csv.gz" --out "$work/profiles" \
  --catalogue "$work/profiles/devices.json" --tag neusight-fp32 >/dev/null
"$build/calibrate/pm2lat-calibrate" import-conv --data "$work/train.csv.gz" --out "$work/profiles" \
  --catalogue "$work/profiles/devices.json" --tag neusight-conv >/dev/null
"$build/reports/pm2lat" eval kernels --data "$work/test.csv.gz" --profiles "$work/profiles" \
  ${json:+--json "$json"} "$@"
