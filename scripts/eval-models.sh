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
#   sparse    each GPU's runs judged with its NeuSight profile rebuilt from only the rows whose
#             shape a sparsely measured GPU (A100-PCIE-80GB, L4, H100) also measured (imported
#             beside the other GPUs' whole tables), every other profile as shipped: the
#             tables of the GPUs whose runs are judged unseen are
#             NeuSight's model-like shapes alone (826 `linear` rows, all tn; bmm rows all nn;
#             ~50-70 per vector op or none), the dense GPUs' add ~5000 random linear shapes,
#             ~14000 bmm shapes and ~1400 per vector op. This cuts a dense GPU down to that
#             (the V100: 826 linear, 26 bmm, ~50 per vector op), so its training runs stress
#             what a sparse table leaves to other points and other GPUs
#   sparse own-only  the same sparse profile alone
#
# SPARSE_LIKE=GPUS (names as the kernel table spells them) cuts to other GPUs' shapes instead:
# SPARSE_LIKE=H100-SXM-80GB keeps GEMM rows only (the H100's table has no vector rows), so every
# memory-bound operator is priced from another GPU's fits.
#
# and, under held-out and sparse: the V100 training runs by operator group and pass
# (--by-class), and the live-run pairs (--source all --target all --matrix).
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

summary() { grep -E '^cells|^pairs [0-9]+ +mean' "$1" | tail -1; }
# Mean and median error (column 8) and the count better than NeuSight (column 9) of run lines.
run_summary() {
  awk '{ print $8, $9 }' "$1" | sort -g | awk -v label="$2" '{ a[NR] = $1; s += $1
      if ($2 != "-") { n++; if ($1 < $2) b++ } } END {
    if (NR == 0) { printf "%-9s no runs\n", label; exit }
    m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
    printf "%-9s cells %d  mean error %.2f %%  median error %.2f %%  better than NeuSight in %d of %d\n",
      label, NR, s / NR, m, b, n }'
}
run_lines() { grep -E '^[A-Z0-9].* (inf|train) ' "$1" || true; }

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
run_summary "$out/own-only.txt" own-only

"$pm2lat" eval models --data "$models" --profiles "$work/heldout" --devices V100-PCIE-32GB \
  --modes train --by-class >"$out/v100-train-heldout.txt"
echo "V100 training, held-out: $(summary "$out/v100-train-heldout.txt")"

# Sparse: each GPU with runs gets its NeuSight table cut to the shapes the sparsely measured
# GPUs measured (by default a no-op for the H100, whose table is one of them), imported with
# every other GPU's table whole, as the shipped profiles of the sparse GPUs were (the others
# lend what a cut table cannot tell, e.g. its host dispatch); its runs are judged with that
# profile among the shipped ones, then alone.
sparse_like=${SPARSE_LIKE:-A100-PCIE-80GB,L4,H100-SXM-80GB}
mkdir -p "$work/sparse"
for dir in "$models"/*/; do
  table_gpu=$(basename "$dir")  # the run folders spell GPUs as the kernel table does
  "$calib" split --data "$data/neusight/kernels.csv.gz" --like "$sparse_like" \
    --cut "$table_gpu" --train "$work/cut.csv.gz" --test "$work/cut-out.csv.gz" >/dev/null
  "$calib" import --data "$work/cut.csv.gz" --out "$work/sparse" --devices "$table_gpu" \
    --catalogue "$root/calibrate/profiles/devices.json" --tag neusight-fp32 >/dev/null
done
: >"$out/sparse.txt"
: >"$out/sparse-own-only.txt"
for profile in "$work"/sparse/*.neusight-fp32.json; do
  gpu=$(basename "$profile" .neusight-fp32.json)
  among="$work/sparse-$gpu" alone="$work/sparse-own-$gpu"
  mkdir -p "$among" "$alone"
  cp "$root"/calibrate/profiles/*.json "$among/"
  cp "$profile" "$among/"
  cp "$root/calibrate/profiles/devices.json" "$profile" "$alone/"
  "$pm2lat" eval models --data "$models" --profiles "$among" --devices "$gpu" >"$among/eval.txt"
  run_lines "$among/eval.txt" >>"$out/sparse.txt"
  "$pm2lat" eval models --data "$models" --profiles "$alone" --devices "$gpu" >"$alone/eval.txt"
  run_lines "$alone/eval.txt" >>"$out/sparse-own-only.txt"
done
run_summary "$out/sparse.txt" sparse
run_summary "$out/sparse-own-only.txt" "sparse own-only"
for variant in sparse sparse-own; do
  "$pm2lat" eval models --data "$models" --profiles "$work/$variant-V100-PCIE-32GB" \
    --devices V100-PCIE-32GB --modes train --by-class >"$out/v100-train-$variant.txt"
  echo "V100 training, $variant: $(summary "$out/v100-train-$variant.txt")"
done
sed -n '/^all runs above/,$p' "$out/v100-train-sparse.txt"

"$pm2lat" eval models --data "$models" --profiles "$work/heldout" --source all --target all \
  --matrix --json "$out/live-heldout.json" >"$out/live-heldout.txt"
echo "live-run, held-out: $(summary "$out/live-heldout.txt")"
"$pm2lat" eval models --data "$models" --source all --target all --matrix \
  --json "$out/live-plain.json" >"$out/live-plain.txt"
echo "live-run, plain:    $(summary "$out/live-plain.txt")"
echo "outputs in $out"
