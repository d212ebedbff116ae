#!/usr/bin/env python3
"""The evidence behind the constants of predictor/include/pm2lat/models/physical_bounds.h.

Reads the kernel records of the profiler traces (as `pm2lat replay TRACES --out DIR` writes
them: measured kernel time, launch, and the work the importer inferred) and the NeuSight
kernel table (call time), and prints, per constant, the measured extreme it is set from:

  scripts/derive-bound-constants.py BUILD_DIR [DATA_DIR]

DATA_DIR defaults to $PM2LAT_DATA, else ../shared/data next to the project.
"""
import csv
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMORY_FAMILIES = {"elementwise", "copy", "memset", "reduction", "embedding", "layernorm",
                   "softmax", "optimizer", "triton_pointwise", "triton_reduction"}
ELEMENT_MAPPED = {"elementwise", "memset", "triton_pointwise"}
# Kernels whose work comes straight from their ATen operator's tensors: the trustworthy ones
# for per-SM and per-thread amounts and fixed costs. Reductions are left out: their operators
# (losses, sorts, scans inside library ops) often describe more than the kernel touches.
DIRECT_OPS = ("aten::",)
DIRECT_FAMILIES = MEMORY_FAMILIES - {"reduction", "triton_reduction"}
# The operator kind a kernel of each family serves when the operator is really its own (a
# kernel linked to an unrelated operator says nothing about either).
OWN_KIND = {"elementwise": "elementwise", "memset": "memset", "copy": "copy",
            "layernorm": "layernorm", "softmax": "softmax", "embedding": "embedding",
            "optimizer": "elementwise", "triton_pointwise": "elementwise"}


def specs():
    path = os.path.join(ROOT, "calibrate", "profiles", "devices.json")
    return {d["name"]: d for d in json.load(open(path))["devices"]}


def trace_records(build, data):
    out = tempfile.mkdtemp()
    subprocess.run([os.path.join(build, "reports", "pm2lat"), "replay",
                    os.path.join(data, "traces"), "--quiet", "--out", out],
                   check=True, stdout=subprocess.DEVNULL)
    rows = []
    for f in sorted(glob.glob(os.path.join(out, "records.*.jsonl"))):
        with open(f) as fh:
            next(fh)
            for line in fh:
                r = json.loads(line)
                if not r.get("measured_us"):
                    continue
                op = r.get("op", {})
                r["bytes"] = op.get("bytes_read", 0) + op.get("bytes_written", 0)
                r["blocks"] = r["grid"][0] * r["grid"][1] * r["grid"][2]
                r["threads"] = r["blocks"] * r["block"][0] * r["block"][1] * r["block"][2]
                rows.append(r)
    return rows


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "ci")
    data = sys.argv[2] if len(sys.argv) > 2 else os.environ.get(
        "PM2LAT_DATA", os.path.join(ROOT, "..", "shared", "data"))
    gpus = specs()
    rows = trace_records(build, data)
    mem = [r for r in rows if r["family"] in MEMORY_FAMILIES and r["bytes"] > 0]

    def eff(r):  # achieved share of the DRAM peak
        return r["bytes"] / r["measured_us"] / 1e3 / gpus[r["gpu"]]["mem_bw_gbps"]

    shortest = min(rows, key=lambda r: r["measured_us"])
    print(f"launch floor: shortest kernel {shortest['measured_us']:.2f} us "
          f"({shortest['gpu']}, {shortest['family']})")
    for gpu in sorted({r["gpu"] for r in rows}):
        print(f"  {gpu}: {min(r['measured_us'] for r in rows if r['gpu'] == gpu):.2f} us")

    direct = [r for r in mem if str(r["op"].get("name", "")).startswith(DIRECT_OPS)
              and r["family"] in DIRECT_FAMILIES
              and r["op"].get("kind") == OWN_KIND.get(r["family"])]
    l2 = [r for r in direct if r["family"] == "elementwise"
          and r["bytes"] <= 2 * gpus[r["gpu"]]["l2_mb"] * 1e6]
    best = max(l2, key=eff)
    print(f"L2 factor: highest apparent bandwidth of an elementwise kernel within 2x L2: "
          f"{eff(best):.2f}x DRAM ({best['gpu']}, {best['op']['name']}, "
          f"{best['bytes'] / 1e6:.1f} MB in {best['measured_us']} us)")

    small = [r for r in direct if r["blocks"] < gpus[r["gpu"]]["sm_count"]]

    def per_sm_share(r):
        g = gpus[r["gpu"]]
        return r["bytes"] / r["measured_us"] / 1e3 / r["blocks"] / (g["mem_bw_gbps"] / g["sm_count"])

    best = max(small, key=per_sm_share)
    print(f"per-SM bandwidth: highest share of DRAM/SMs per occupied SM, launches < SMs: "
          f"{per_sm_share(best):.2f}x ({best['gpu']}, {best['blocks']} blocks, "
          f"{best['op']['name']})")

    # Efficiency only where the work is the operator's own: ATen operators (a library op's
    # kernels share its work by estimate only).
    big = [r for r in mem if r["bytes"] >= 4e6
           and str(r["op"].get("name", "")).startswith(DIRECT_OPS)]
    for fam in sorted({r["family"] for r in big}):
        low = min((r for r in big if r["family"] == fam), key=eff)
        print(f"min efficiency {fam:<12} {eff(low) * 100:6.2f} %  ({low['gpu']}, "
              f"{low['name'][:60]}, {low['bytes'] / 1e6:.1f} MB in {low['measured_us']} us)")

    tiny = [r for r in direct if r["bytes"] < 256e3]
    slow = max(tiny, key=lambda r: r["measured_us"])
    print(f"fixed cost (kernel): longest memory-bound kernel < 256 KB: {slow['measured_us']} us "
          f"({slow['gpu']}, {slow['op'].get('name')}, {slow['blocks']} blocks)")

    for group, fams in (("element-mapped", ELEMENT_MAPPED),
                        ("looping", MEMORY_FAMILIES - ELEMENT_MAPPED)):
        cand = [r for r in direct if r["family"] in fams and eff(r) <= 2.5 and r["threads"] > 0]
        top = max(cand, key=lambda r: r["bytes"] / r["threads"])
        print(f"bytes per thread ({group}): at most {top['bytes'] / top['threads']:.0f} B "
              f"({top['family']}, {top['name'][:60]})")

    # Launches sized by their work (more threads than any GPU holds at once): the least each
    # thread moved where the work is a memory-bound ATen operator's own (not a helper inside
    # a convolution or matmul). Work under 2 B a thread in such a launch is rejected by the
    # importer, so its records no longer state it: how long those kernels took against their
    # stated bytes was measured before the check existed (physical_bounds.h).
    own = [r for r in direct if r["threads"] >= 2**19 and not any(
        s in str(r["op"].get("name", "")) for s in ("conv", "mm", "linear", "matmul", "attention"))]
    least = min(own, key=lambda r: r["bytes"] / r["threads"])
    print(f"bytes per thread (launches >= 2^19 threads): ATen operators' own work at least "
          f"{least['bytes'] / least['threads']:.1f} B ({least['family']}, {least['name'][:60]})")

    # NeuSight: call time of small operators and the lowest efficiency of large ones.
    table = os.path.join(data, "neusight", "kernels.csv.gz")
    devices = {d["device"]: d for d in csv.DictReader(open(os.path.join(data, "neusight",
                                                                         "devices.csv")))}
    tensors = {"add": 3, "mul": 3, "div": 3, "pow": 3}
    longest_small, lowest = (0, None), (9, None)
    for row in csv.DictReader(gzip.open(table, "rt")):
        if row["op"] in ("bmm", "linear", "conv") or row["device"] not in devices:
            continue
        nbytes = float(row["B"]) * float(row["H"]) * 4 * tensors.get(row["op"], 2)
        t = float(row["latency_us"])
        if nbytes < 256e3 and t > longest_small[0]:
            longest_small = (t, (row["device"], row["op"]))
        if nbytes >= 64e6:
            e = nbytes / t / 1e3 / float(devices[row["device"]]["mem_bw_gbps"])
            if e < lowest[0]:
                lowest = (e, (row["device"], row["op"]))
    print(f"fixed cost (call): longest NeuSight call < 256 KB: {longest_small[0]:.1f} us "
          f"{longest_small[1]}")
    print(f"NeuSight lowest efficiency (>= 64 MB): {lowest[0] * 100:.1f} % {lowest[1]}")


if __name__ == "__main__":
    main()
