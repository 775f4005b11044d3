"""Generates the analyses scripts/bench-compare.sh compares (Python 3.11 standard library only).

    python3 scripts/lib/bench-compare-gen.py TEMPLATE OUT_DIR [--runs 100] [--iterations 20000]

TEMPLATE is a real analysis.json (the gpu-work fixture analysed by nsys-gate); its shape is kept
(provenance, run, gate, warnings, advice, gpu_work with its devices, kernels and memory copies)
and scaled up: ITERATIONS counted iterations, each with its GPU projection, a few dozen host
ranges (the fixture's five and blocks of an inference pass below them) and about twenty
GPU-projected ranges. OUT_DIR/base/run-NNN/analysis.json are the base runs (oldest first, each
with its own run id, commit and run-to-run level, about 1 % apart), OUT_DIR/head/analysis.json
the current run (3 % slower on the host). Random numbers are seeded: the files are the same on
every machine. The files are laid out as nsys-gate writes them (one line per iteration, range,
warning; `gpu_work` one level deeper).
"""

import argparse
import copy
import hashlib
import json
import math
import os
import random
import re
import statistics

BLOCKS = 12  # inference.block_N and its attention and mlp children: 36 more host ranges


def dumps(value):
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)


def write_layout(analysis, out):
    """analysis.json as nsys-gate lays it out (crates/core/src/artifact/mod.rs, JsonLayout)."""
    out.write("{")
    first_top = True
    for key, value in analysis.items():
        out.write("\n" if first_top else ",\n")
        first_top = False
        out.write('  %s: ' % dumps(key))
        deeper = key == "gpu_work"
        if isinstance(value, (dict, list)) and value:
            items = value.items() if isinstance(value, dict) else enumerate(value)
            out.write("{" if isinstance(value, dict) else "[")
            first = True
            for k, v in items:
                out.write("\n    " if first else ",\n    ")
                first = False
                if isinstance(value, dict):
                    out.write("%s: " % dumps(k))
                if deeper and isinstance(v, list) and v:
                    out.write("[" + ",".join("\n      " + dumps(x) for x in v) + "\n    ]")
                elif deeper and isinstance(v, dict) and v:
                    out.write("{" + ",".join("\n      %s: %s" % (dumps(a), dumps(b))
                                             for a, b in v.items()) + "\n    }")
                else:
                    out.write(dumps(v))
            out.write("\n  " + ("}" if isinstance(value, dict) else "]"))
        else:
            out.write(dumps(value))
    out.write("\n}\n")


def iteration_stats(values):
    values = sorted(values)
    n = len(values)
    total = sum(values)
    mean = total / n

    def pct(p):
        k = (n - 1) * p
        lo = math.floor(k)
        hi = min(lo + 1, n - 1)
        return values[lo] + (values[hi] - values[lo]) * (k - lo)

    sd = statistics.stdev(values) if n > 1 else 0.0
    return {"count": n, "total_ns": total, "mean_ns": mean, "median_ns": float(statistics.median(values)),
            "minimum_ns": values[0], "maximum_ns": values[-1], "p90_ns": pct(0.9), "p99_ns": pct(0.99),
            "stddev_ns": sd, "cv": sd / mean if mean else None}


def range_stats(total, instances, rng):
    mean = total / instances
    return {"total_ns": total, "mean_ns": mean, "median_ns": round(mean * rng.uniform(0.98, 1.0)),
            "minimum_ns": round(mean * 0.95), "maximum_ns": round(mean * 1.3),
            "stddev_ns": mean * rng.uniform(0.005, 0.02)}


def group_name(name):
    return re.sub(r"[0-9]+", "#", name)


def ranges_of(template):
    """(name, path, share of an iteration's host time, exclusive share, projected share or None)."""
    ranges = []
    iteration = template["iteration_summary"]["host_inclusive"]["total_ns"]
    projected = {r["name"]: r for r in template["gpu_projected_ranges"]}
    for r in template["host_ranges"]:
        p = projected.get(r["name"])
        ranges.append((r["name"], r["path"], r["inclusive"]["total_ns"] / iteration,
                       r["exclusive"]["total_ns"] / iteration,
                       p["projected"]["total_ns"] / iteration if p else None))
    inference_share = next(r[2] for r in ranges if r[0] == "inference")
    for b in range(BLOCKS):
        share = inference_share / BLOCKS * 0.9
        block = "inference.block_%d" % b
        ranges.append((block, ["inference", "block_%d" % b], share, share * 0.1, share * 1.1))
        ranges.append((block + ".attention", ["inference", "block_%d" % b, "attention"],
                       share * 0.6, share * 0.6, share * 0.7))
        ranges.append((block + ".mlp", ["inference", "block_%d" % b, "mlp"],
                       share * 0.3, share * 0.3, share * 0.35 if b % 2 == 0 else None))
    return ranges


def analysis_of(template, ranges, run_id, commit, level, iterations, seed):
    rng = random.Random(seed)
    a = copy.deepcopy(template)
    a["run"]["run_id"] = run_id
    a["run"]["git_commit"] = commit
    a["run"]["workload"]["iterations"] = iterations
    a["run"]["command_line"] = a["run"]["command_line"].replace("--iterations 5", "--iterations %d" % iterations)
    a["run"]["command_line"] = a["run"]["command_line"].replace("--run-id gpu-work", "--run-id " + run_id)
    a["provenance"]["run_dir"] = "/runner/work/runs/" + run_id
    summary = template["iteration_summary"]
    host_level = summary["host_inclusive"]["median_ns"] * level
    gpu_level = summary["gpu_projected"]["median_ns"] * level
    excl_share = summary["host_exclusive"]["median_ns"] / summary["host_inclusive"]["median_ns"]
    iters, host, excl, gpu = [], [], [], []
    t = 1_700_000
    for i in range(iterations):
        noise = rng.gauss(1.0, 0.004) * (1.15 if rng.random() < 0.01 else 1.0)
        h = round(host_level * noise)
        e = round(h * excl_share * rng.uniform(0.8, 1.2))
        g = round(gpu_level * rng.gauss(1.0, 0.002))
        start = t
        gstart = start + 163_500
        iters.append({"index": i, "range_id": 3 + 11 * i, "pid": 19, "tid": 19, "complete": True,
                      "duplicate": False,
                      "host": {"start_ns": start, "end_ns": start + h, "inclusive_ns": h,
                               "exclusive_ns": e, "child_total_ns": h - e},
                      "gpu_projection": {"start_ns": gstart, "end_ns": gstart + g, "projected_ns": g,
                                         "gpu_operation_count": 6}})
        host.append(h)
        excl.append(e)
        gpu.append(g)
        t = start + h + 300_000
    a["iterations"] = iters
    a["run"]["record_count"] = template["run"]["record_count"]
    s = a["iteration_summary"]
    s.update({"expected": iterations, "found": iterations, "complete": iterations})
    s["host_inclusive"] = iteration_stats(host)
    s["host_exclusive"] = iteration_stats(excl)
    s["gpu_projected"] = iteration_stats(gpu)
    s["first_iteration"] = {"index": 0, "host_inclusive_ns": host[0],
                            "ratio_to_median": host[0] / s["host_inclusive"]["median_ns"]}
    host_total = sum(host)
    a["host_ranges"], a["gpu_projected_ranges"] = [], []
    for name, path, incl, exclusive, projected in sorted(ranges):
        jitter = rng.gauss(1.0, 0.003)
        inclusive = round(host_total * incl * jitter)
        excl_total = round(host_total * exclusive * jitter)
        a["host_ranges"].append({"name": name, "path": path, "instances": iterations,
                                 "inclusive": range_stats(inclusive, iterations, rng),
                                 "exclusive": range_stats(excl_total, iterations, rng),
                                 "child_total_ns": inclusive - excl_total})
        if projected is not None:
            a["gpu_projected_ranges"].append({
                "name": name, "path": path, "style": "PushPop", "instances": iterations,
                "projected": range_stats(round(host_total * projected * jitter), iterations, rng),
                "host_total_ns": inclusive, "gpu_operation_count": 2 * iterations})
    a["host_range_groups"] = groups(a["host_ranges"], ("inclusive", "exclusive"))
    a["gpu_projected_range_groups"] = groups(a["gpu_projected_ranges"], ("projected",))
    scale = iterations / template["iteration_summary"]["host_inclusive"]["count"] * level
    work = a["gpu_work"]
    for k in work["kernels"]:
        k["instances"] = round(k["instances"] * iterations / 5)
        for f in ("total_ns",):
            k[f] = round(k[f] * scale * rng.gauss(1.0, 0.003))
    for c in work["memory_copies"]:
        c["count"] = round(c["count"] * iterations / 5)
        c["total_ns"] = round(c["total_ns"] * scale * rng.gauss(1.0, 0.003))
    for d in work["devices"]:
        d["kernels"] *= iterations // 5
        d["memory_operations"] *= iterations // 5
    return a


def groups(ranges, clocks):
    by = {}
    for r in ranges:
        by.setdefault(group_name(r["name"]), []).append(r)
    out = []
    for group, members in sorted(by.items()):
        g = {"group": group, "names": len(members), "instances": sum(m["instances"] for m in members)}
        for clock in clocks:
            total = sum(m[clock]["total_ns"] for m in members)
            g[clock] = {"total_ns": total, "mean_ns": total / g["instances"],
                        "minimum_ns": min(m[clock]["minimum_ns"] for m in members),
                        "maximum_ns": max(m[clock]["maximum_ns"] for m in members)}
        if "host_total_ns" in members[0]:
            g["host_total_ns"] = sum(m["host_total_ns"] for m in members)
            g["gpu_operation_count"] = sum(m["gpu_operation_count"] for m in members)
        out.append(g)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("template")
    parser.add_argument("out")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--iterations", type=int, default=20000)
    args = parser.parse_args()
    template = json.load(open(args.template))
    template["warnings"] = [w for w in template["warnings"] if w["code"] != "trace_path_moved"]
    ranges = ranges_of(template)
    levels = random.Random(1)
    runs = [("base-%03d" % n, os.path.join(args.out, "base", "run-%03d" % n), levels.gauss(1.0, 0.01))
            for n in range(args.runs)]
    runs.append(("head", os.path.join(args.out, "head"), 1.03))
    for n, (run_id, folder, level) in enumerate(runs):
        os.makedirs(folder, exist_ok=True)
        commit = hashlib.sha1(run_id.encode()).hexdigest()
        a = analysis_of(template, ranges, run_id, commit, level, args.iterations, seed=1000 + n)
        with open(os.path.join(folder, "analysis.json"), "w") as out:
            write_layout(a, out)


if __name__ == "__main__":
    main()
