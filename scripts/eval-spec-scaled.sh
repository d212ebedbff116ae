#!/usr/bin/env bash
# Forecasts for a GPU nobody calibrated: for each GPU of the measurement tables ($PM2LAT_DATA,
# default ../shared/data; calibrate/DATA.md), its own profiles are removed and all its rows
# are predicted from the most similar calibrated GPU's profile, carried over by spec ratios
# (flag spec_scaled). FP32: NeuSight kernel table, its GEMM rows and (`vector`) its
# memory-bound operator rows (elementwise, softmax, layer norm); BF16: AIConfigurator GEMM
# table.
#
#   scripts/eval-spec-scaled.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
. "$root/scripts/measurement-data.sh" neusight/kernels.csv.gz aiconfigurator/gemm_bf16.csv.gz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
profiles=$root/calibrate/profiles
neusight=$data/neusight/kernels.csv.gz
aic=$data/aiconfigurator/gemm_bf16.csv.gz
printf '%-8s %-22s %-22s %8s %8s %8s\n' dtype "GPU (no profile)" "prediction" n MAPE% med%
run() {  # dtype table eval-command gpu
  local dtype=$1 table=$2 cmd=$3 gpu=$4
  rm -rf "$work/p" && mkdir -p "$work/p"
  cp "$profiles"/*.json "$work/p/"
  rm -f "$work/p/$gpu".*.json
  local only=()
  [ "$cmd" = kernels ] && only=(--ops bmm,linear)
  [ "$cmd" = vector ] && cmd=kernels && only=(--ops "$vector_ops")
  "$build/reports/pm2lat" eval "$cmd" --data "$table" --profiles "$work/p" --json "$work/r.json" "${only[@]}" > /dev/null
  python3 - "$work/r.json" "$gpu" "$dtype" <<'PY'
import json, sys
r, gpu, dtype = sys.argv[1:]
d = [x for x in json.load(open(r))["devices"] if x["device"] == gpu]
if not d:
    sys.exit(0)
x = d[0]
gemm = "" if dtype == "vector" else "gemm_"
mape = x.get(gemm + "mape_pct", x["mape_pct"]); med = x.get(gemm + "median_ape_pct", x["median_ape_pct"])
print(f'{dtype:<8} {gpu:<22} {"(spec-scaled)" if x["spec_scaled"] else "(own)":<22} {x["n"]:8d} {mape:8.2f} {med:8.2f}')
PY
}
for gpu in A100-PCIE-40GB A100-PCIE-80GB H100-SXM L4 P100-PCIE-16GB P4 T4 V100-PCIE-32GB; do
  run fp32 "$neusight" kernels "$gpu"
done
vector_ops=add,addu,div,divu,gelu,ln,mul,mulu,pow,powu,relu,softmax,tanh
for gpu in A100-PCIE-40GB A100-PCIE-80GB L4 P100-PCIE-16GB P4 T4 V100-PCIE-32GB; do
  run vector "$neusight" vector "$gpu"
done
for gpu in A100-SXM B200-SXM H100-SXM L40S RTX-PRO-6000-Server; do
  run bf16 "$aic" gemm "$gpu"
done
