#!/usr/bin/env python3
"""How far NeuSight's model-run labels stray from the same GPU's kernel table: the floor under
any whole-model forecast made from the kernel tables.

For every GEMM operator (linear, bmm) of a model run in DATA/neusight/models whose shape the
same GPU's kernel table (DATA/neusight/kernels.csv.gz) also timed, the ratio of the run's label
(its forward latency) to the table's time, per GPU: median, 10th and 90th percentiles, extremes.
A forecast built from the table can be no closer to a run than its labels are to the table.
Operators under MIN_US are left out (host dispatch dominates them).

  scripts/model-label-consistency.py [DATA] [MIN_US]

DATA: the measurements folder (default $PM2LAT_DATA, else ../shared/data beside the project).
"""
import csv
import glob
import gzip
import math
import os
import sys
from collections import defaultdict


def shape_key(device, op, row):
    """(device, op, B, M, N, K) in NeuSight's convention (N is the reduction dimension)."""
    return (device, op, int(float(row["B"] or 1)), int(float(row["M"])), int(float(row["N"])),
            int(float(row["K"])))


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    data = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "PM2LAT_DATA", os.path.join(root, "..", "shared", "data"))
    min_us = float(sys.argv[2]) if len(sys.argv) > 2 else 500.0
    table_file = os.path.join(data, "neusight", "kernels.csv.gz")
    runs = glob.glob(os.path.join(data, "neusight", "models", "*", "*.csv"))
    if not os.path.exists(table_file) or not runs:
        sys.exit(f"error: no NeuSight kernel table or model runs under {data}")
    table = {}
    with gzip.open(table_file, "rt") as f:
        for row in csv.DictReader(f):
            if row["op"] in ("linear", "bmm"):
                table[shape_key(row["device"], row["op"], row)] = float(row["latency_us"])
    ratios = defaultdict(list)
    for run in runs:
        device = os.path.basename(os.path.dirname(run))
        with open(run) as f:
            for row in csv.DictReader(f):
                if row["op_kind"] not in ("linear", "bmm") or not row["M"]:
                    continue
                label = float(row["fw_latency_us"] or 0)
                key = shape_key(device, row["op_kind"], row)
                if label >= min_us and key in table:
                    ratios[device].append(label / table[key])
    print(f"GEMM operators >= {min_us:g} us timed by both a model run and the kernel table")
    print(f"{'device':<16} {'n':>4} {'median':>7} {'p10':>6} {'p90':>6} {'min':>6} {'max':>6}")
    for device in sorted(ratios):
        v = sorted(ratios[device])
        at = lambda p: v[int(round(p * (len(v) - 1)))]
        print(f"{device:<16} {len(v):>4} {at(0.5):>7.2f} {at(0.1):>6.2f} {at(0.9):>6.2f} "
              f"{v[0]:>6.2f} {v[-1]:>6.2f}")


if __name__ == "__main__":
    main()
