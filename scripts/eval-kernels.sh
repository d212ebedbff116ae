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
. "$root/scripts/neusight-held-out.sh"
neusight_held_out_profiles "$build/calibrate/pm2lat-calibrate" "$work/profiles" \
  "$work/train.csv.gz" "$work/test.csv.gz"
"$build/reports/pm2lat" eval kernels --data "$work/test.csv.gz" --profiles "$work/profiles" \
  ${json:+--json "$json"} "$@"
