#!/usr/bin/env python3
"""Estimates the error-band table (calibrate/profiles/error_bands.json) from out-of-sample
predictions: `pm2lat eval kernels --band-rows` CSV files (held-out shapes, cross-GPU pairs)
and records files of traces replayed with profiles that did not see them (own-GPU kernel
time). Every prediction is grouped by (family, model, flag group, same/cross GPU, time
basis, duration: predicted under 10 us or not); a group's band is the QUANTILE of its
absolute percentage errors, nearest rank (the smallest APE that at least that share of the
group does not exceed).

Fallback (LEVELS below, the one definition: the table carries it as `levels`, and the
predictor follows the table's): a group with fewer than --min-count predictions is left out,
and the predictor takes the next coarser level that has one: family (any model), model (any
family), flag group, all within the time basis and duration; the same four pooling both
durations; then the family and model across bases, the flag group, scope, all. The last
level is always written, so no prediction is left without a band while any data exists.

  scripts/build-error-bands.py --out FILE [--rows CSV]... [--records JSONL]... [--source TEXT]
      [--judge-folds K --coverage-json FILE]

--judge-folds K: also measures the band coverage of the --rows predictions out of sample:
the rows are split into K folds by shape, and each fold is judged with a table estimated
from everything else (the records and the other folds), looked up as the predictor does.
"""
import argparse
import csv
import datetime
import glob
import json
import math
import sys

# Mirrors band_flag_group() (predictor/src/profile/error_band_table.cpp): the first of these
# flags a prediction carries names its group. The table records this order and the
# predictor refuses a table estimated with another.
FLAG_GROUPS = ["none", "fallback", "anchored", "shape_rejected", "no_shape", "clamped",
               "extrapolated", "spec_scaled", "dtype_substituted", "communication"]
PRIORITY = ["communication", "fallback", "anchored", "shape_rejected", "no_shape", "clamped",
            "extrapolated", "spec_scaled", "dtype_substituted"]
FIELDS = ["family", "model", "flags", "scope", "basis", "duration"]
# The fields each fallback level keeps, finest first: the kernel's own group, then its family
# (any model), its model (any family), its flag group alone, all within its time basis and
# duration; then the same four pooling both durations; then the same across bases, then only
# same/cross GPU, then all. The basis goes late: kernel times of profiled programs and call
# times of benchmark tables err differently, and the tables hold most of the predictions. The
# duration is kept through the four levels within the basis: a short prediction is judged with
# the short ones of its flag group before the long ones of its own group, whose errors are of
# another size. Written into the table as "levels"; the predictor resolves every key through
# the table's levels (error_band_table.cpp), so this list is the only place the order is set.
LEVELS = [
    ("family", "model", "flags", "scope", "basis", "duration"),
    ("family", "flags", "scope", "basis", "duration"),
    ("model", "flags", "scope", "basis", "duration"),
    ("flags", "scope", "basis", "duration"),
    ("family", "model", "flags", "scope", "basis"),
    ("family", "flags", "scope", "basis"),
    ("model", "flags", "scope", "basis"),
    ("flags", "scope", "basis"),
    ("family", "model", "flags", "scope"),
    ("flags", "scope"),
    ("scope",),
    (),
]
# A prediction under this many microseconds is short (error_band_table.h, kShortPredictionUs).
SHORT_PREDICTION_US = 10.0


def duration(predicted_us):
    return "short" if predicted_us < SHORT_PREDICTION_US else "long"


def flag_group(names):
    present = set(n for n in names.split(",") if n)
    for g in PRIORITY:
        if g in present:
            return g
    return "none"


def ape(measured, predicted):
    if not (measured > 0) or math.isnan(predicted):
        return None
    return abs(predicted - measured) / measured * 100.0


def read_rows(path, samples, folds):
    n = 0
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            predicted = float(r["predicted_us"])
            e = ape(float(r["measured_us"]), predicted)
            if e is None:
                continue
            fold = int(r["shape"], 16) % folds if folds > 1 else -1
            samples.append(((r["family"], r["model"], r["flags"], r["scope"], r["basis"],
                             duration(predicted)), e, fold))
            n += 1
    return n


def read_records(path, samples):
    """Own-GPU predictions of a records file (the replayed trace's GPU is its own target)."""
    n = 0
    with open(path) as f:
        for line in f:
            j = json.loads(line)
            if "schema" in j:
                continue
            gpu, m = j.get("gpu"), j.get("measured_us")
            pred = (j.get("predicted_us") or {}).get(gpu)
            if gpu is None or m is None or pred is None:
                continue
            e = ape(float(m), float(pred))
            if e is None:
                continue
            model = (j.get("model") or {}).get(gpu, "none")
            flags = flag_group((j.get("flags") or {}).get(gpu, ""))
            samples.append(((j.get("family", "unknown"), model, flags, "same_gpu",
                             j.get("basis", "kernel"), duration(float(pred))), e, -1))
            n += 1
    return n


def pooled_key(key, keep):
    """The key with every field the level does not keep pooled ("*")."""
    return tuple(v if f in keep else "*" for f, v in zip(FIELDS, key))


def quantile_nearest_rank(values, q):
    v = sorted(values)
    return v[max(0, math.ceil(q * len(v)) - 1)]


def estimate(samples, q, min_count):
    """The groups of the table, every level, as {key tuple: (band_pct, n, level)}."""
    groups = {}
    for li, keep in enumerate(LEVELS):
        pooled = {}
        for key, e, _ in samples:
            k = pooled_key(key, keep)
            pooled.setdefault(k, []).append(e)
        last = li == len(LEVELS) - 1
        for k in sorted(pooled):
            v = pooled[k]
            if len(v) >= min_count or last:
                groups[k] = (round(quantile_nearest_rank(v, q), 2), len(v), li)
    return groups


def lookup_level(groups, key):
    for keep in LEVELS:
        k = pooled_key(key, keep)
        if k in groups:
            return groups[k][0]
    return math.nan


def lookup(groups, key):
    """The band the predictor would give (ErrorBandTable::from_groups): a cross-GPU band is
    at least the same key's same-GPU band."""
    band = lookup_level(groups, key)
    if key[3] == "cross_gpu":
        same = lookup_level(groups, key[:3] + ("same_gpu",) + key[4:])
        if same > band:
            band = same
    return band


def judge(samples, folds, q, min_count):
    """Band coverage of the row predictions, each fold judged by a table without it."""
    tally = {}
    for f in range(folds):
        groups = estimate([s for s in samples if s[2] != f], q, min_count)
        for key, e, fold in samples:
            if fold != f:
                continue
            inside = e <= lookup(groups, key)
            for name in ("all", key[3], key[3] + "/" + key[2]):
                t = tally.setdefault(name, [0, 0])
                t[0] += 1
                t[1] += inside
    return {k: {"n": n, "band_coverage_pct": round(100.0 * i / n, 1)}
            for k, (n, i) in sorted(tally.items())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rows", action="append", default=[], help="band-rows CSV (glob)")
    ap.add_argument("--records", action="append", default=[], help="records JSONL (glob)")
    ap.add_argument("--quantile", type=float, default=0.8)
    ap.add_argument("--min-count", type=int, default=30)
    ap.add_argument("--source", default="", help="what the predictions were (provenance)")
    ap.add_argument("--judge-folds", type=int, default=0)
    ap.add_argument("--coverage-json", help="where --judge-folds writes the coverage")
    a = ap.parse_args()

    samples, inputs = [], []
    for pattern in a.rows:
        for p in sorted(glob.glob(pattern)):
            n = read_rows(p, samples, a.judge_folds)
            inputs.append({"file": p.split("/")[-1], "kind": "band_rows", "n": n})
    for pattern in a.records:
        for p in sorted(glob.glob(pattern)):
            n = read_records(p, samples)
            inputs.append({"file": p.split("/")[-1], "kind": "records", "n": n})
    if not samples:
        sys.exit("error: no predictions with a measured time in the inputs")

    groups = []
    for k, (band, n, level) in estimate(samples, a.quantile, a.min_count).items():
        g = dict(zip(FIELDS, k))
        g.update({"band_pct": band, "n": n, "level": level})
        groups.append(g)
    if a.judge_folds > 1:
        coverage = judge(samples, a.judge_folds, a.quantile, a.min_count)
        if a.coverage_json:
            with open(a.coverage_json, "w") as f:
                json.dump(coverage, f, indent=1)

    table = {
        "schema": "pm2lat.error_bands",
        "version": 2,
        "quantile": a.quantile,
        "min_count": a.min_count,
        "flag_groups": FLAG_GROUPS,
        "levels": [list(level) for level in LEVELS],
        "provenance": {
            "estimated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
            "by": "scripts/build-error-bands.py",
            "source": a.source,
            "predictions": len(samples),
            "inputs": inputs,
        },
        "groups": groups,
    }
    with open(a.out, "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
