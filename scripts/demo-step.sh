#!/usr/bin/env bash
# The demo's run, one place for scripts/demo.sh and scripts/check-demo-table.sh: the example
# training step (examples/bert_training_step) under `pm2lat run --no-measure` on the test CUDA
# stack of BUILD_DIR, forecast for TARGETS, outputs in OUT_DIR.
#
#   scripts/demo-step.sh BUILD_DIR OUT_DIR TARGETS
set -euo pipefail
usage="usage: scripts/demo-step.sh BUILD_DIR OUT_DIR TARGETS"
build=${1:?$usage}
out=${2:?$usage}
targets=${3:?$usage}
# The launcher prints the run's summary; the runtime's own end-of-run table would repeat it.
LD_LIBRARY_PATH="$build/fake-cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" PM2LAT_SUMMARY=none \
  "$build/reports/pm2lat" run --targets "$targets" --no-measure --out "$out" -- \
  "$build/examples/pm2lat_example_bert_training_step"
