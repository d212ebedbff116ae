#!/usr/bin/env bash
# The table README.md shows for the demo is the one the demo prints: runs the demo's step
# (scripts/demo-step.sh, as scripts/demo.sh does) and compares the per-family x per-target
# table with README.md's, line for line. A ctest
# (tests/integration) runs it: a change that moves a forecast or an error band fails it until
# README.md shows the new table.
#
#   scripts/check-demo-table.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: scripts/check-demo-table.sh BUILD_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The table: from its header to the line after its total, in the printout and in README.md.
table() { sed -n '/^family  *kernels |/,/^no kernel was measured/p' "$1"; }

# scripts/demo.sh's default targets (another default there changes the table's header, and
# README.md's with it: this check then fails until both agree).
"$root/scripts/demo-step.sh" "$build" "$work/run" H100,A100,L4 > "$work/printed" 2>&1
table "$work/printed" > "$work/printed.table"
table "$root/README.md" > "$work/readme.table"
if [ ! -s "$work/printed.table" ]; then
  echo "error: the demo printed no table:" >&2
  cat "$work/printed" >&2
  exit 1
fi
if ! diff -u "$work/readme.table" "$work/printed.table"; then
  echo "error: README.md's demo table is not what the demo prints (above: - README, + printed);" \
    "put the printed one in README.md" >&2
  exit 1
fi
echo "README.md's demo table is what the demo prints ($(wc -l < "$work/printed.table") lines)"
