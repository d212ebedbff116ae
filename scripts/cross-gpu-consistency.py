#!/usr/bin/env python3
"""Whether forecasts of one recorded kernel for several GPUs are ordered as the GPUs are.

For every kernel of the given records files (`pm2lat replay` or runtime JSONL) and every pair of
its target GPUs where one is at least as large as the other in every respect the catalogue
states (memory bandwidth, SM count, every peak throughput), the larger GPU's forecast should
not exceed the smaller one's. Counts, per kernel family, the pairs where it does by more than
5 % (forecasts anchored to a measurement, flag `anchored`, are left out: they follow the
measurement, not the model; --anchored counts only the pairs with an anchored forecast). Only
kernels recorded without a shape by default (flag `no_shape` on the GPU they ran on), whose
work the forecasts infer from the launch.

  scripts/cross-gpu-consistency.py --catalogue calibrate/profiles/devices.json RECORDS...
      [--all-kernels] [--anchored]
"""
import argparse
import collections
import json
import sys

# What "at least as large" compares: bandwidth, SMs and every peak the catalogue states.
SIZE_FIELDS = ["mem_bw_gbps", "sm_count", "fp32_tflops", "tf32_tflops", "fp16_tflops",
               "bf16_tflops", "fp8_tflops", "fp4_tflops"]
# A forecast this much above a smaller GPU's counts as out of order (rounding and launch
# floors aside).
TOLERANCE = 1.05


def load_specs(path):
    doc = json.load(open(path))
    specs = {}
    for d in doc["devices"]:
        for name in [d["name"]] + d.get("aliases", []):
            specs[name] = d
    return specs


def at_least_as_large(a, b):
    return a["name"] != b["name"] and all(a.get(f, 0) >= b.get(f, 0) for f in SIZE_FIELDS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--catalogue", required=True, help="devices.json")
    ap.add_argument("--all-kernels", action="store_true", help="not only kernels without a shape")
    ap.add_argument("--anchored", action="store_true",
                    help="only the pairs where a forecast is anchored to the measurement")
    ap.add_argument("records", nargs="+")
    a = ap.parse_args()
    specs = load_specs(a.catalogue)
    pairs = collections.Counter()
    out_of_order = collections.Counter()
    for path in a.records:
        ordered = []
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                if "schema" in r:
                    known = [t for t in r.get("targets", []) if t in specs]
                    ordered = [(x, y) for x in known for y in known
                               if at_least_as_large(specs[x], specs[y])]
                    continue
                gpu = r.get("gpu")
                flags = r.get("flags") or {}
                if not a.all_kernels and "no_shape" not in flags.get(gpu, "").split(","):
                    continue
                family = r.get("family", "unknown")
                if family == "collective":
                    continue
                p = r.get("predicted_us") or {}
                for big, small in ordered:
                    if big not in p or small not in p:
                        continue
                    anchored = ("anchored" in flags.get(big, "") or
                                "anchored" in flags.get(small, ""))
                    if anchored != a.anchored:
                        continue
                    # An anchored forecast follows the measurement: on the run's own GPU it
                    # is the measured time it is compared with, not the model's prediction.
                    def time_on(g):
                        if anchored and g == gpu and r.get("measured_us"):
                            return r["measured_us"]
                        return p[g]
                    pairs[family] += 1
                    if time_on(big) > TOLERANCE * time_on(small):
                        out_of_order[family] += 1
    if not pairs:
        sys.exit("error: no pair of ordered target GPUs in the records")
    print(f'{"family":<16} {"pairs":>7} {"larger GPU slower":>18}')
    for fam in sorted(pairs):
        print(f"{fam:<16} {pairs[fam]:7d} {out_of_order[fam]:9d} ({100 * out_of_order[fam] / pairs[fam]:4.1f} %)")
    n, bad = sum(pairs.values()), sum(out_of_order.values())
    print(f'{"all":<16} {n:7d} {bad:9d} ({100 * bad / n:4.1f} %)')


if __name__ == "__main__":
    main()
