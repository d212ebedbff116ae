#!/usr/bin/env bash
# Whole-model accuracy on NeuSight's transformer runs, under the protocol the unseen runs
# stress. Nothing is fitted on model runs in any variant (the runs' per-operator latencies
# are read only by --by-class, to compare like with like).
#
#   plain     the shipped profiles: what `pm2lat eval models` uses by default
#   held-out  NeuSight profiles rebuilt from 80 % of the kernel-table shapes (the split of
#             scripts/eval-kernels.sh: a held-out shape is missing on every GPU), every other
#             shipped profile (traces, AIConfigurator, convolutions) as shipped
#   own-only  each GPU's runs judged with that GPU's held-out NeuSight profile alone: no
#             other GPU's table lends it fits, kernel choices or dispatch times
#
# and, under held-out: the V100 training runs by operator group and pass (--by-class), and
# the live-run pairs (--source all --target all --matrix).
#
#   scripts/eval-models.sh [BUILD_DIR] [OUT_DIR]
#
# The measurements: $PM2LAT_DATA (or $DATA), else ../shared/data next to the project, as
# every other evaluation script: DIR/neusight/kernels.csv.gz and DIR/neusight/models.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
out=${2:-$root/pm2lat-eval-models}
data=${PM2LAT_DATA:-${DATA:-$root/../shared/data}}
models=$data/neusight/models
pm2lat=$build/reports/pm2lat
calib=$build/calibrate/pm2lat-calibrate
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Held-out profiles: the shipped ones with the NeuSight kernel profiles rebuilt from the split.
mkdir -p "$work/heldout"
cp "$root"/calibrate/profiles/*.json "$work/heldout/"
rm -f "$work"/heldout/*.neusight-fp32.json
"$calib" split --data "$data/neusight/kernels.csv.gz" --fraction 0.2 \
  --train "$work/train.csv.gz" --test "$work/test.csv.gz" >/dev/null
"$calib" import --data "$work/train.csv.gz" --out "$work/heldout" \
  --catalogue "$work/heldout/devices.json" --tag neusight-fp32 >/dev/null

summary() { grep -E '^cells|^pairs' "$1" | tail -1; }

"$pm2lat" eval models --data "$models" --json "$out/plain.json" >"$out/plain.txt"
echo "plain     $(summary "$out/plain.txt")"
"$pm2lat" eval models --data "$models" --profiles "$work/heldout" --by-class \
  --json "$out/heldout.json" >"$out/heldout.txt"
echo "held-out  $(summary "$out/heldout.txt")"

# Own-only: one profile directory per GPU that has runs.
: >"$out/own-only.txt"
for profile in "$work"/heldout/*.neusight-fp32.json; do
  gpu=$(basename "$profile" .neusight-fp32.json)
  dir="$work/own-$gpu"
  mkdir -p "$dir"
  cp "$work/heldout/devices.json" "$profile" "$dir/"
  if "$pm2lat" eval models --data "$models" --profiles "$dir" --devices "$gpu" >"$dir/eval.txt" \
    && grep -qE '^[A-Z0-9].* (inf|train) ' "$dir/eval.txt"; then
    grep -E '^[A-Z0-9].* (inf|train) ' "$dir/eval.txt" >>"$out/own-only.txt"
  fi
done
awk '{ print $8 }' "$out/own-only.txt" | sort -g | awk '{ a[NR] = $1; s += $1 } END {
    if (NR == 0) { print "own-only  no runs"; exit }
    m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
    printf "own-only  cells %d  mean error %.2f %%  median error %.2f %%\n", NR, s / NR, m }'

"$pm2lat" eval models --data "$models" --profiles "$work/heldout" --devices V100-PCIE-32GB \
  --modes train --by-class >"$out/v100-train-heldout.txt"
echo "V100 training, held-out: $(summary "$out/v100-train-heldout.txt")"

"$pm2lat" eval models --data "$models" --profiles "$work/heldout" --source all --target all \
  --matrix --json "$out/live-heldout.json" >"$out/live-heldout.txt"
echo "live-run, held-out: $(summary "$out/live-heldout.txt")"
"$pm2lat" eval models --data "$models" --source all --target all --matrix \
  --json "$out/live-plain.json" >"$out/live-plain.txt"
echo "live-run, plain:    $(summary "$out/live-plain.txt")"
echo "outputs in $out"
