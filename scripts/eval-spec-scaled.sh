#!/usr/bin/env bash
# Forecasts for a GPU nobody calibrated: for each GPU of the measurement tables ($PM2LAT_DATA,
# default ../shared/data; calibrate/DATA.md), its own profiles are removed and all its rows
# are predicted from the most similar calibrated GPU's profile, carried over by spec ratios
# (flag spec_scaled). FP32: NeuSight kernel table, its GEMM rows and (`vector`) its
# memory-bound operator rows (elementwise, softmax, layer norm); BF16: AIConfigurator GEMM
# table.
#
# --donors: instead, every NeuSight GPU as the only donor in turn (its FP32 profile alone), each
# other GPU's rows predicted from it: the target x donor matrices of MAPE and of predicted over
# measured time in total (time-weighted, so long calls dominate), for the GEMM rows and the
# memory-bound operator rows. They show which donor the similarity ranking should have chosen,
# and where a donor's efficiency is not the target's (a 70 W part's sustained rate carried to
# a 250 W one, or back). The H100's NeuSight table has no memory-bound rows: its column there is
# the memory-bound model with no fit of any GPU.
#
#   scripts/eval-spec-scaled.sh [BUILD_DIR] [--donors]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
mode=${2:-}
case "$mode" in
  "" | --donors) ;;
  *) echo "error: unknown option '$mode'" >&2
     echo "usage: scripts/eval-spec-scaled.sh [BUILD_DIR] [--donors]" >&2
     exit 2 ;;
esac
. "$root/scripts/measurement-data.sh" neusight/kernels.csv.gz aiconfigurator/gemm_bf16.csv.gz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
profiles=$root/calibrate/profiles
neusight=$data/neusight/kernels.csv.gz
aic=$data/aiconfigurator/gemm_bf16.csv.gz
vector_ops=add,addu,div,divu,gelu,ln,mul,mulu,pow,powu,relu,softmax,tanh
neusight_gpus="A100-PCIE-40GB A100-PCIE-80GB H100-SXM L4 P100-PCIE-16GB P4 T4 V100-PCIE-32GB"
if [ "$mode" = --donors ]; then
  for donor in $neusight_gpus; do
    rm -rf "$work/p" && mkdir -p "$work/p"
    cp "$profiles/devices.json" "$profiles/$donor.neusight-fp32.json" "$work/p/"
    "$build/reports/pm2lat" eval kernels --data "$neusight" --profiles "$work/p" \
      --json "$work/gemm.$donor.json" --ops bmm,linear >/dev/null
    "$build/reports/pm2lat" eval kernels --data "$neusight" --profiles "$work/p" \
      --json "$work/vector.$donor.json" --ops "$vector_ops" >/dev/null
  done
  python3 - "$work" $neusight_gpus <<'PY'
import json, sys
work, gpus = sys.argv[1], sys.argv[2:]
for kind, title in (("gemm", "FP32 GEMM rows"), ("vector", "memory-bound operator rows")):
    cell = {}
    for donor in gpus:
        for x in json.load(open(f"{work}/{kind}.{donor}.json"))["devices"]:
            if x["device"] != donor and x["n"] > 0:
                mape = x["gemm_mape_pct"] if kind == "gemm" else x["mape_pct"]
                cell[(x["device"], donor)] = (mape, x["predicted_us"] / x["measured_us"])
    for what, i, fmt in (("MAPE %", 0, "{:9.1f}"), ("predicted / measured, in total", 1, "{:9.2f}")):
        print(f"{title}, {what} (rows: target, its own profile removed; columns: the only donor)")
        print(f'{"":<16}' + "".join(f"{d[:9]:>10}" for d in gpus))
        for t in gpus:
            if any((t, d) in cell for d in gpus):
                print(f"{t:<16}" + "".join(
                    " " + (fmt.format(cell[(t, d)][i]) if (t, d) in cell else f'{"-":>9}')
                    for d in gpus))
        print()
PY
  exit 0
fi
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
for gpu in $neusight_gpus; do
  run fp32 "$neusight" kernels "$gpu"
done
for gpu in A100-PCIE-40GB A100-PCIE-80GB L4 P100-PCIE-16GB P4 T4 V100-PCIE-32GB; do
  run vector "$neusight" vector "$gpu"
done
for gpu in A100-SXM B200-SXM H100-SXM L40S RTX-PRO-6000-Server; do
  run bf16 "$aic" gemm "$gpu"
done
