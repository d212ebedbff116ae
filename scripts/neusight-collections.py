#!/usr/bin/env python3
"""How far the two collections inside NeuSight's kernel table disagree on the same kernel.

The table's `split` column names where a row came from: `train`, the random shapes NeuSight
timed to fit its model (five GPUs), and `test`, the shapes of its evaluation models
(transformer widths and sequence lengths, eight GPUs). The project's held-out splits mix both,
and a GPU's profile fits one curve per kernel through both. For every GPU and GEMM operator
(linear, bmm), over the cells both collections timed with the same kernel (kernel name and the
octave of each dimension), the ratio of the `train` rows' time per FLOP to the `test` rows'
(median of the cells' medians, quartiles): 1 where the collections agree. With --kernels, the
kernels each collection ran on each GPU (rows per kernel), which shows where a GPU's two
collections ran different libraries.

  scripts/neusight-collections.py [DATA] [--kernels]

DATA: the measurements folder (default $PM2LAT_DATA, else ../shared/data beside the project).
"""
import csv
import gzip
import math
import os
import statistics
import sys
from collections import Counter, defaultdict

GEMM_OPS = ("linear", "bmm")


def cell_of(row):
    """The octave (rounded log2) of B, rows, N and K: rows compared within a cell are less
    than an octave apart in every dimension. A linear row's batch folds into its rows
    (NeuSight's N is the reduction dimension of both operators)."""
    b = float(row["B"] or 1)
    m, n, k = float(row["M"]), float(row["N"]), float(row["K"])
    dims = (1.0, b * m, n, k) if row["op"] == "linear" else (b, m, n, k)
    return tuple(round(math.log2(max(1.0, d))) for d in dims)


def time_per_flop(row):
    b = float(row["B"] or 1)
    flops = 2.0 * b * float(row["M"]) * float(row["N"]) * float(row["K"])
    return float(row["latency_us"]) / flops


def quantile(values, q):
    v = sorted(values)
    return v[int(round(q * (len(v) - 1)))]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    data = args[0] if args else os.environ.get(
        "PM2LAT_DATA", os.path.join(root, "..", "shared", "data"))
    table_file = os.path.join(data, "neusight", "kernels.csv.gz")
    if not os.path.exists(table_file):
        sys.exit(f"error: no NeuSight kernel table under {data} (calibrate/DATA.md)")
    cells = defaultdict(lambda: defaultdict(list))
    rows = Counter()
    kernels = defaultdict(Counter)
    with gzip.open(table_file, "rt") as f:
        for row in csv.DictReader(f):
            if row["op"] not in GEMM_OPS or row["split"] not in ("train", "test"):
                continue
            key = (row["device"], row["op"])
            rows[key + (row["split"],)] += 1
            kernels[key + (row["split"],)][row["kernel_name"]] += 1
            cells[key + (row["kernel_name"], cell_of(row))][row["split"]].append(time_per_flop(row))
    ratios = defaultdict(list)
    for (device, op, _, _), by_split in cells.items():
        if by_split["train"] and by_split["test"]:
            ratios[(device, op)].append(statistics.median(by_split["train"]) /
                                        statistics.median(by_split["test"]))
    print("train / test time per FLOP, same kernel and octave cell")
    print(f"{'device':<16} {'op':<7} {'train rows':>10} {'test rows':>9} {'cells':>6} "
          f"{'median':>7} {'p25':>6} {'p75':>6}")
    for device, op in sorted({(d, o) for d, o, _ in rows}):
        r = ratios.get((device, op), [])
        shown = (f"{len(r):>6} {statistics.median(r):>7.3f} {quantile(r, 0.25):>6.3f} "
                 f"{quantile(r, 0.75):>6.3f}" if r else f"{0:>6} {'-':>7} {'-':>6} {'-':>6}")
        print(f"{device:<16} {op:<7} {rows[(device, op, 'train')]:>10} "
              f"{rows[(device, op, 'test')]:>9} {shown}")
    if "--kernels" in sys.argv[1:]:
        print("\nkernels per collection (rows)")
        for key in sorted(kernels):
            listed = ", ".join(f"{name} {n}" for name, n in kernels[key].most_common(4))
            more = len(kernels[key]) - 4
            print(f"{key[0]:<16} {key[1]:<7} {key[2]:<6} {listed}"
                  + (f" (+{more} more)" if more > 0 else ""))


if __name__ == "__main__":
    main()
