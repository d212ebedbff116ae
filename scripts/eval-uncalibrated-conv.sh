#!/usr/bin/env bash
# Convolutions on a GPU whose convolution kernels no table timed, out of sample: the NeuSight
# table split by shape as scripts/eval-kernels.sh splits it (80 % calibrates, 20 % is judged),
# then, for each GPU with a convolution table, that table removed and the GPU's held-out
# convolution rows predicted on it. What prices them is what prices a convolution nobody
# calibrated on a GPU of its generation (predictor/MODELS.md, "Convolutions": another GPU's
# configuration fit of the same architecture, else the class fit of its math path, else the
# uncalibrated tile kernel of models/shapeless_tile_model.h). One line per GPU and kernel-name
# scheme, as `pm2lat eval kernels` prints it (n, MAPE, median and p90 APE of call time).
#
#   scripts/eval-uncalibrated-conv.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
. "$root/scripts/measurement-data.sh" neusight/kernels.csv.gz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
calibrate=$build/calibrate/pm2lat-calibrate
. "$root/scripts/neusight-held-out.sh"
neusight_held_out_profiles "$calibrate" "$work/profiles" "$work/train.csv.gz" \
  "$work/test.csv.gz" >/dev/null
printf '%-16s %-9s %-20s %6s %8s %8s %8s\n' device op family n 'MAPE%' 'med%' 'p90%'
for table in "$work"/profiles/*.neusight-conv.json; do
  gpu=$(basename "$table" .neusight-conv.json)
  rm -rf "$work/without" && cp -r "$work/profiles" "$work/without"
  rm "$work/without/$gpu.neusight-conv.json"
  "$build/reports/pm2lat" eval kernels --data "$work/test.csv.gz" --profiles "$work/without" |
    awk -v gpu="$gpu" '$1 == gpu && $2 == "conv"'
done
