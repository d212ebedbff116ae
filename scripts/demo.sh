#!/usr/bin/env bash
# The main job on a machine without a GPU: set up, build, and run one training step of
# BERT-base under the runtime, the way a user runs `pm2lat run -- python train.py`; the
# runtime forecasts every kernel on other GPUs and writes the records, a Perfetto trace and
# an HTML report to ./pm2lat-demo.
#
#   scripts/demo.sh                   the example training step (examples/bert_training_step)
#   scripts/demo.sh TRACE.json[.gz]   forecast your own PyTorch profiler trace instead
#
# PM2LAT_DEMO_TARGETS sets the target GPUs (default H100,A100,L4).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
targets=${PM2LAT_DEMO_TARGETS:-H100,A100,L4}
"$root/scripts/setup.sh"
cd "$root"
cmake --preset default >/dev/null
build=$root/build/default
out=$PWD/pm2lat-demo
rm -rf "$out"

if [ $# -gt 0 ]; then
  cmake --build --preset default --target pm2lat -j "$(nproc)"
  echo
  "$build/reports/pm2lat" replay "$@" --targets "$targets" --out "$out"
  echo
  echo "Report files: $out (open the .html in a browser, the .trace.json in ui.perfetto.dev)"
  exit 0
fi

cmake --build --preset default -j "$(nproc)" --target pm2lat pm2lat_shim pm2lat_fake_cuda_stack \
  pm2lat_example_bert_training_step
cat <<EOF

No GPU is used. The program launches the kernels of one BERT-base training step (cuBLAS and
cuBLASLt GEMMs, FlashAttention, layer norms, GELU, dropout, the loss, fused AdamW) through a
CUDA driver, cuBLAS and cuBLASLt, and here those are pm2lat's test stack (tests/fake), which
reports an H100 and executes nothing. libpm2lat.so sees every launch and library call as it
would on a GPU and, with --no-measure, forecasts each kernel on $targets without timing it.

EOF
"$root/scripts/demo-step.sh" "$build" "$out" "$targets"
cat <<EOF

Every kernel above was forecast, none measured. Open $out/pm2lat-report.html in a browser and
$out/pm2lat-report.trace.json in ui.perfetto.dev (one track per target GPU).
EOF
