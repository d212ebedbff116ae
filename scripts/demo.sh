#!/usr/bin/env bash
# The main job on a machine without a GPU: set up, build the pm2lat command, and forecast a
# bundled real run (a PyTorch profiler trace of BERT-small on an H100, reports/demo/SOURCE.md)
# on other GPUs. Writes the records, Perfetto trace, HTML report and CSV to ./pm2lat-demo.
#
#   scripts/demo.sh [TARGETS]      (default H100,A100,L4,V100-PCIE,T4)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
targets=${1:-H100,A100,L4,V100-PCIE,T4}
"$root/scripts/setup.sh"
cd "$root"
cmake --preset default >/dev/null
cmake --build --preset default --target pm2lat -j "$(nproc)"
echo
./build/default/reports/pm2lat replay reports/demo/tracelens_h100_bert-small.json.gz \
  --targets "$targets" --out pm2lat-demo
echo
echo "Report files: pm2lat-demo/ (open the .html in a browser, the .trace.json in ui.perfetto.dev)"
