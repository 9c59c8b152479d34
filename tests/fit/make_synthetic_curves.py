#!/usr/bin/env python3
"""Builds SYNTHETIC bandwidth-vs-working-set curves with known levels, for developing and testing
`roofprobe fit --bandwidth-csv`. Nothing here was measured: every curve is drawn from the model
below, with the imperfections real sweeps show.

Physics. At working set w, level i serves the accesses that miss every nearer level and hit it;
the miss fraction of a cache rises smoothly around its capacity (associativity, replacement,
prefetchers), and the times of the accesses add, so the rate is the harmonic blend
    1/rate(w) = sum_i served_i(w) / B_i  (+ A / w on GPUs: launch latency, too few blocks).
The miss fraction is a logistic in ln w, or (for some caches) a softer shape whose tail is
longer than a logistic's, so that the fitter never sees exactly its own model.

Imperfections: 1-3% log-normal noise per sample, occasional disturbed samples 10-50% low
(another tenant, a clock dip), a launch ramp at small GPU sizes, levels that last one octave
(a partitioned L2's far half), steps of 1.1x-1.6x per size and 3-5 repetitions per size.

Usage:
  make_synthetic_curves.py OUT_DIR [--seeds N] [--first-seed S]
      writes OUT_DIR/<shape>-s<seed>.csv and OUT_DIR/truth.json (levels nearest first)
  make_synthetic_curves.py --score ROOFPROBE DIR
      fits every curve in DIR and counts the fits that are exactly right (as many levels as the
      truth, each within 5%) and honestly right (every published level within 5% of a distinct
      true level, every true level left out named under `missing:` with a 95% interval that
      holds it).
"""
import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile


def miss_fraction(lw, lc, width, shape):
    """Fraction of accesses that miss a cache of ln capacity lc at ln working set lw."""
    u = (lw - lc) / width
    if shape == "logistic":
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, u))))
    # A longer tail on the small side (hits fade slowly as the set outgrows the cache): the
    # complementary of a Gompertz-like curve.
    return 1.0 - math.exp(-math.exp(max(-60.0, min(60.0, u))) * math.log(2.0))


def rate(w, levels, ramp_a):
    lw = math.log(w)
    reach, time = 1.0, 0.0
    for i, lev in enumerate(levels):
        if i + 1 == len(levels):
            time += reach / lev["gbs"]
        else:
            m = miss_fraction(lw, math.log(lev["capacity"]), lev["width"], lev["shape"])
            time += reach * (1 - m) / lev["gbs"]
            reach *= m
    time += ramp_a / w
    return 1.0 / time


def machine_shape(rng):
    """A random memory hierarchy: (name, levels, gpu)."""
    gpu = rng.random() < 0.5
    if gpu:
        n = rng.choice([2, 3, 3, 4])
        first = rng.uniform(6000, 25000)
        first_cap = rng.uniform(2e6, 3e7) if n > 2 else rng.uniform(2e7, 1.2e8)
    else:
        n = rng.choice([3, 4, 4])
        first = rng.uniform(3000, 15000)
        first_cap = rng.uniform(2e5, 6e6)
    gbs, caps = [first], [first_cap]
    far_half = gpu and n >= 3 and rng.random() < 0.6
    for i in range(1, n):
        if far_half and i == n - 2:
            ratio = rng.uniform(1.5, 2.2)  # a partitioned L2's far half: slower, one octave long
            cap = caps[-1] * 2.0
        else:
            ratio = rng.uniform(1.7, 5.0)
            cap = caps[-1] * rng.uniform(2.0, 16.0)
        gbs.append(gbs[-1] / ratio)
        if i + 1 < n:
            caps.append(cap)
    levels = []
    for i in range(n):
        lev = {"gbs": round(gbs[i], 1)}
        if i + 1 < n:
            lev["capacity"] = caps[i]
            lev["width"] = rng.uniform(0.12, 0.35)
            lev["shape"] = "logistic" if rng.random() < 0.8 else "long-tail"
        levels.append(lev)
    return ("gpu" if gpu else "cpu") + str(n), levels, gpu


def curve(rng, levels, gpu):
    step = rng.uniform(1.1, 1.6)
    reps = rng.randint(3, 5)
    noise = rng.uniform(0.01, 0.03)
    disturbed = rng.uniform(0.0, 0.04)
    lo = levels[0].get("capacity", 1e8) / rng.uniform(20, 200)
    hi = max(levels[-2]["capacity"] if len(levels) > 1 else 1e8, 1e8) * rng.uniform(20, 60)
    ramp_a = 0.0
    if gpu and rng.random() < 0.6:
        # The smallest size loses 10-40% of its time to the launch.
        ramp_a = rng.uniform(0.1, 0.4) * lo / levels[0]["gbs"]
    rows = []
    w = lo
    while w <= hi:
        x = int(round(w))
        r = rate(x, levels, ramp_a)
        for _ in range(reps):
            y = r * math.exp(rng.gauss(0, noise))
            if rng.random() < disturbed:
                y *= rng.uniform(0.5, 0.9)
            rows.append((x, y))
        w *= step
    return rows


def make(out, seeds, first_seed):
    os.makedirs(out, exist_ok=True)
    truth = {}
    for seed in range(first_seed, first_seed + seeds):
        rng = random.Random(seed)
        name, levels, gpu = machine_shape(rng)
        key = f"{name}-s{seed}"
        with open(os.path.join(out, key + ".csv"), "w") as f:
            f.write("working_set_bytes,gbs\n")
            for x, y in curve(rng, levels, gpu):
                f.write(f"{x},{y:.4f}\n")
        truth[key] = [{"level": f"level{i + 1}", "gbs": lev["gbs"]} for i, lev in enumerate(levels)]
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)


def published(path):
    """The `memory:` rates and `missing:` lines of a machine file (the two keys scored)."""
    mem, missing, section = [], [], None
    for line in open(path):
        if re.match(r"^\S", line):
            section = line.split(":")[0]
            continue
        m = re.match(r"^\s+gbs:\s*([-+0-9.eE]+)", line)
        if section == "memory" and m:
            mem.append(float(m.group(1)))
        elif section == "missing" and line.strip().startswith("-"):
            missing.append(line.strip())
    return mem, missing


def score(roofprobe, d, verbose):
    truth = json.load(open(os.path.join(d, "truth.json")))
    exact = honest = 0
    for key in sorted(truth):
        want = [t["gbs"] for t in truth[key]]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "m.yaml")
            r = subprocess.run([roofprobe, "fit", "--bandwidth-csv", os.path.join(d, key + ".csv"), "--out", out],
                               capture_output=True, text=True)
            got, missing = published(out) if r.returncode == 0 and os.path.exists(out) else ([], [])
        close = lambda g, w: abs(g - w) / w <= 0.05
        ex = len(got) == len(want) and all(close(g, w) for g, w in zip(got, want))
        used, phantom = set(), False
        for g in got:
            j = next((i for i, w in enumerate(want) if i not in used and close(g, w)), None)
            phantom |= j is None
            if j is not None:
                used.add(j)
        spans = [(float(a), float(b)) for n in missing for a, b in re.findall(r"95% CI ([0-9.]+) - ([0-9.]+)", n)]
        named = all(any(a <= want[i] <= b for a, b in spans) for i in range(len(want)) if i not in used)
        ok = ex or (not phantom and named)
        exact += ex
        honest += ok
        if verbose or not ok:
            print(f"{'ok ' if ok else 'BAD'} {key}: want {[round(w) for w in want]} got {[round(g) for g in got]}"
                  + ("" if ex else " (missing: note)" if ok else "") + (f" spans {spans}" if spans else ""))
    print(f"exactly right: {exact}/{len(truth)}; right or honestly named: {honest}/{len(truth)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--seeds", type=int, default=60)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--score", metavar="ROOFPROBE")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    if a.score:
        score(a.score, a.dir, a.verbose)
    else:
        make(a.dir, a.seeds, a.first_seed)


if __name__ == "__main__":
    sys.exit(main())
