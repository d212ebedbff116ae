#!/usr/bin/env bash
# Out-of-sample fused-attention accuracy: split the AIConfigurator attention table
# ($PM2LAT_DATA, default ../shared/data; calibrate/DATA.md) by shape (80/20), build attention
# profiles from the 80 % and evaluate the 20 % per GPU and attention backend with
# `pm2lat eval attention`.
#
#   scripts/eval-attention.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
. "$root/scripts/measurement-data.sh" aiconfigurator/attention_bf16.csv.gz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/profiles"
cp "$root/calibrate/profiles/devices.json" "$work/profiles/"
"$build/calibrate/pm2lat-calibrate" split-attention \
  --data "$data/aiconfigurator/attention_bf16.csv.gz" \
  --fraction 0.2 --train "$work/train.csv.gz" --test "$work/test.csv.gz"
"$build/calibrate/pm2lat-calibrate" import-attention --data "$work/train.csv.gz" --out "$work/profiles" \
  --catalogue "$work/profiles/devices.json" --tag aiconfigurator-attention >/dev/null
"$build/reports/pm2lat" eval attention --data "$work/test.csv.gz" --profiles "$work/profiles"
