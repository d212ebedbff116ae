#!/usr/bin/env bash
# The main job on a machine without a GPU: set up, build, and forecast a bundled real run.
#
#   scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)"
echo
echo "=== Out-of-sample kernel accuracy on the shipped NeuSight measurements"
scripts/eval-kernels.sh build/default
