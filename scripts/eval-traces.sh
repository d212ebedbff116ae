#!/usr/bin/env bash
# Replay accuracy on the public profiler traces ($PM2LAT_DATA/traces, default ../shared/data;
# calibrate/DATA.md), out of sample: for each trace, the trace-calibrated profiles
# (*.traces-kernel.json) are rebuilt from the OTHER traces only, then the trace is replayed
# on its own GPU. (The shipped trace-calibrated profiles include every trace, so replaying
# one of these traces with them is in-sample.)
#
#   scripts/eval-traces.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/default}
. "$root/scripts/measurement-data.sh" traces
traces=$data/traces
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-40s %-16s %8s %10s %11s %8s\n' trace gpu coverage% measured_ms predicted_ms error%
for held in "$traces"/*.json.gz; do
  name=$(basename "$held" .json.gz)
  rm -rf "$work/p" "$work/r" "$work/t" && mkdir -p "$work/p" "$work/r" "$work/t"
  cp "$root"/calibrate/profiles/*.json "$work/p/"
  rm -f "$work"/p/*.traces-kernel.json
  for t in "$traces"/*.json.gz; do [ "$t" = "$held" ] || ln -s "$t" "$work/t/"; done
  "$build/reports/pm2lat" replay "$work/t" --quiet --profiles "$work/p" --out "$work/r" >/dev/null
  "$build/calibrate/pm2lat-calibrate" import-records "$work"/r/records.*.jsonl --out "$work/p" \
    --catalogue "$work/p/devices.json" --tag traces-kernel --source "other traces" >/dev/null
  "$build/reports/pm2lat" replay "$held" --profiles "$work/p" --json "$work/one.json" >/dev/null
  python3 - "$work/one.json" "$name" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["traces"][0]
print(f'{sys.argv[2]:<40} {t["device"]:<16} {t["coverage_time_pct"]:8.1f} {t["measured_ms"]:10.3f} '
      f'{t["predicted_ms"]:11.3f} {t["error_pct"]:8.1f}')
for f in t["families"]:
    print(f'    {f["family"]:<20} {f["kernels"]:6d} {f["measured_ms"]:10.3f} {f["predicted_ms"]:11.3f} '
          f'{(f["error_pct"] if f["error_pct"] is not None else float("nan")):8.1f}')
PY
done
