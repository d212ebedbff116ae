#!/usr/bin/env python3
"""How kernels that run beside a collective are forecast, against the rest of their trace.

Data-parallel training overlaps its communication with computation: NCCL's kernels hold some
SMs and move data through memory while compute kernels run on another stream. The predictor
prices every kernel as if it had the GPU to itself. For every replayed trace with collective
kernels, this splits its other kernels by whether one started while a collective kernel of
another stream was running, and prints for each group: kernels, share of the trace's kernel
time, the median and the sum of predicted / measured on the trace's own GPU.

Then what contention costs, measured without the model: every configuration (kernel name,
grid, block, operator shape) launched both beside a collective and alone, the ratio of its
median measured times (median over configurations); and the most the SMs a collective's blocks
occupy could explain (one block per SM): each such kernel's forecast scaled by SMs / (SMs -
blocks), whole-trace error and per-kernel median APE with and without it.

  scripts/collective-overlap.py RECORDS...

RECORDS: replay record files (`pm2lat replay --out DIR` writes records.<trace>.jsonl; the
leave-one-out ones scripts/build-error-bands.sh keeps are KEEP/loo/<trace>/records/*.jsonl).
SM counts come from the shipped catalogue (calibrate/profiles/devices.json).
"""
import bisect
import json
import os
import statistics
import sys
from collections import defaultdict


def load_sm_counts(root):
    """GPU name or alias -> SM count, from the shipped device catalogue."""
    with open(os.path.join(root, "calibrate", "profiles", "devices.json")) as f:
        catalogue = json.load(f)
    devices = catalogue["devices"] if isinstance(catalogue, dict) else catalogue
    sms = {}
    for d in devices:
        for name in [d["name"]] + d.get("aliases", []):
            sms[name.lower()] = d["sm_count"]
    return sms


def read_records(path):
    with open(path) as f:
        header = json.loads(f.readline())
        return header, [json.loads(line) for line in f if line.strip()]


def collectives_running(kernels):
    """For each kernel, the largest block count of a collective kernel of another stream that
    was running when it started (0: none)."""
    spans = sorted((r["ts_ns"], r["ts_ns"] + r["measured_us"] * 1000.0, r["stream"],
                    r["grid"][0] * r["grid"][1] * r["grid"][2]) for r in kernels
                   if r.get("family") == "collective")
    starts = [s[0] for s in spans]
    longest = max((e - s for s, e, _, _ in spans), default=0.0)
    held = []
    for r in kernels:
        t = r["ts_ns"]
        blocks = 0
        # Only a collective that started at most `longest` before can still be running.
        i = bisect.bisect_right(starts, t)
        j = bisect.bisect_left(starts, t - longest)
        for s, e, stream, b in spans[j:i]:
            if e > t and stream != r["stream"]:
                blocks = max(blocks, b)
        held.append(blocks)
    return held


def summary(pairs):
    measured = sum(m for _, m in pairs)
    predicted = sum(p for p, _ in pairs)
    whole = abs(predicted - measured) / measured * 100 if measured else float("nan")
    median_ape = statistics.median(abs(p - m) / m * 100 for p, m in pairs) if pairs else float("nan")
    return whole, median_ape


def same_configuration_ratio(kernels, held):
    """Median over configurations launched both ways of median(beside) / median(alone)."""
    times = defaultdict(lambda: ([], []))
    for r, blocks in zip(kernels, held):
        if r.get("family") == "collective":
            continue
        key = (r["name"], tuple(r["grid"]), tuple(r["block"]),
               json.dumps(r.get("op", {}), sort_keys=True))
        times[key][0 if blocks else 1].append(r["measured_us"])
    ratios = [statistics.median(b) / statistics.median(a) for b, a in times.values() if a and b]
    return len(ratios), statistics.median(ratios) if ratios else float("nan")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sm_counts = load_sm_counts(root)
    print(f'{"trace":<34} {"gpu":<15} {"group":<18} {"kernels":>7} {"time%":>6} '
          f'{"median p/m":>10} {"sum p/m":>8}')
    contention = []
    for path in sys.argv[1:]:
        header, records = read_records(path)
        gpu = header.get("gpu") or ""
        kernels = [r for r in records if r.get("measured_us") and "ts_ns" in r]
        if not any(r.get("family") == "collective" for r in kernels):
            continue
        sms = sm_counts.get(gpu.lower())
        if sms is None:
            print(f"{path}: GPU {gpu!r} not in the catalogue, skipped", file=sys.stderr)
            continue
        held = collectives_running(kernels)
        groups = {"beside collective": [], "alone": []}
        model, scaled = [], []
        for r, blocks in zip(kernels, held):
            p = (r.get("predicted_us") or {}).get(gpu)
            if r.get("family") == "collective" or p is None:
                continue
            m = r["measured_us"]
            groups["beside collective" if blocks else "alone"].append((p, m))
            model.append((p, m))
            scaled.append((p * sms / max(1, sms - blocks) if blocks else p, m))
        total = sum(m for _, m in model)
        name = os.path.basename(path).removeprefix("records.").removesuffix(".jsonl")
        for group, pairs in groups.items():
            if not pairs:
                continue
            ratios = [p / m for p, m in pairs]
            time = sum(m for _, m in pairs)
            print(f"{name:<34} {gpu:<15} {group:<18} {len(pairs):7d} {100 * time / total:6.1f} "
                  f"{statistics.median(ratios):10.2f} {sum(p for p, _ in pairs) / time:8.2f}")
        blocks = sorted({b for b in held if b})
        contention.append((name, same_configuration_ratio(kernels, held), blocks, sms,
                           summary(model), summary(scaled)))
    print("\nthe same configuration beside a collective and alone, measured; and the SMs' share")
    print(f'{"trace":<34} {"configs":>7} {"beside/alone":>12} {"collective blocks / SMs":>24} '
          f'{"whole% model":>12} {"SMs lost":>8} {"medAPE% model":>13} {"SMs lost":>8}')
    for name, (n, ratio), blocks, sms, (w0, a0), (w1, a1) in contention:
        held = f'{",".join(map(str, blocks))} / {sms}'
        print(f"{name:<34} {n:7d} {ratio:12.2f} {held:>24} {w0:12.1f} {w1:8.1f} {a0:13.1f} "
              f"{a1:8.1f}")


if __name__ == "__main__":
    main()
