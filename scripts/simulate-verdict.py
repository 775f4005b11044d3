#!/usr/bin/env python3
"""How often `nsys-gate compare` gives a wrong verdict: a simulation.

What it does
    For each case (the CASES list below: no change at several noise levels, real slowdowns,
    one base run, runs now and then on a slower runner, a history with a level shift, 20
    ranges with and without a change, and a few for reference), trial after trial, it makes
    up a history of base runs (oldest first) and one head run as analysis.json files in a
    temporary folder, runs the release binary on them (`nsys-gate compare BASE... HEAD
    --json -`: comparison.json on standard output, the document `--json FILE` writes),
    reads it, and removes the folder. It counts the verdicts of `runs[0]`: the host
    inclusive measure's (`measures[].verdict`), or in the range cases the host ranges'
    (`host_ranges.changed[].verdict`), and prints a markdown table: each case, its trials,
    how often the verdict was `slower` or `faster` (and each, with a 95 % Wilson interval),
    the target, and whether it was met.

The model
    A run has its own offset o ~ N(0, run_sd) (the run-to-run noise, relative), and each of
    its 64 iterations takes level * (1 + o) * (1 + e) nanoseconds, e ~ N(0, iter_sd) with
    iter_sd 1 % (the per-iteration noise), written as an integer `host.inclusive_ns`. A
    range's time in an iteration follows the run's same offset and its own per-iteration
    noise, range_level * (1 + o) * (1 + e_r), e_r ~ N(0, iter_sd) (in cases r5 and r6, each
    range has an offset of its own, o_r ~ N(0, run_sd), instead of the run's o);
    `host_ranges[].exclusive.total_ns` is its sum over the 64 iterations (drawn at once: the
    sum of 64 independent normal deviations is normal, with 8 times their standard
    deviation). A real change multiplies the head's level (or one range's); a "slower runner"
    multiplies a whole run. Host only: no GPU projection.

    The tool reduces each run to the median of its iterations (and each range to its total
    divided by the 64 counted iterations), so a run's value moves by o plus the noise of a
    median of 64, about 1.25 * iter_sd / 8 = 0.16 % for iter_sd 1 %.

How to run it
    cargo build --release
    python3 scripts/simulate-verdict.py                  # every case, 1,000 trials each
    python3 scripts/simulate-verdict.py --trials 30      # a smoke test, under a minute
    python3 scripts/simulate-verdict.py --cases 4 5 --details

    Options: --bin PATH (default target/release/nsys-gate), --trials N (default 1000),
    --seed N (default 20240601), --jobs N (compare processes at once, default 2),
    --tmpdir DIR (the trials' files, default /dev/shm when there is one), --cases ID...
    (only those, by the ids of the table), --details (a second table: how often the history
    was cut at a change point, how many base runs were used, the head's p-values, how often
    a range that did not change was flagged), --check (exit 1 when a target is missed; for
    full runs only: with --trials 30 a target is missed by chance now and then, so a smoke
    test checks that the script runs, not the figures).

    Each trial draws from its own generator, seeded with (seed, case, trial): the figures
    depend on the seed and the trial count only, not on --jobs or on which cases run.

Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

ITERATIONS = 64
HOST_LEVEL_NS = 10_000_000  # 10 ms per iteration
ITER_SD = 0.01  # per-iteration noise, relative


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    run_sd: float  # run-to-run noise, relative
    bases: int = 10
    head_change: float = 1.0  # the head's host level, times
    ranges: int = 3
    range_change: float = 1.0  # range 0 of the head, times
    slow_runner_p: float = 0.0  # each run on a slower runner with this probability
    slow_runner: float = 1.05
    last_slow: int = 0  # the last N base runs (and the head) at `slow_runner`
    # Each range with its own run offset ~ N(0, run_sd) instead of the run's.
    own_range_offsets: bool = False
    # What is counted: "measure" (host inclusive slower or faster), "any_range" (any range
    # slower or faster), "range0_slower" (range 0 slower).
    count: str = "measure"
    # ("max", pct), ("min", pct), ("eq", pct) or None (for reference).
    target: tuple[str, float] | None = None


CASES = [
    Case("1a", "no change, run-to-run noise 0.5 %", 0.005, target=("max", 7)),
    Case("1b", "no change, run-to-run noise 1 %", 0.01, target=("max", 7)),
    Case("1c", "no change, run-to-run noise 2 %", 0.02, target=("max", 7)),
    Case("1d", "no change, run-to-run noise 5 %", 0.05, target=("max", 7)),
    Case("1e", "no change, no run-to-run noise (0 %)", 0.0, target=("max", 7)),
    Case("2a", "real 5 % slowdown, run-to-run noise 1 %", 0.01, head_change=1.05,
         target=("min", 90)),
    Case("2b", "real 10 % slowdown, run-to-run noise 2 %", 0.02, head_change=1.10,
         target=("min", 90)),
    Case("3", "one base run, no change, run-to-run noise 1 %", 0.01, bases=1,
         target=("eq", 0)),
    Case("4", "runs now and then 5 % slower (p = 1/10 each), noise 1 %", 0.01,
         slow_runner_p=0.1, target=("max", 10)),
    Case("5", "last 3 base runs 5 % slower, head like them, noise 1 %", 0.01, last_slow=3,
         target=("max", 10)),
    Case("6", "20 ranges, no change, noise 1 %: any range flagged", 0.01, ranges=20,
         count="any_range", target=("max", 10)),
    Case("7", "1 range of 20 really 10 % slower, noise 1 %: that range slower", 0.01,
         ranges=20, range_change=1.10, count="range0_slower", target=("min", 80)),
    Case("r1", "reference: real 3 % slowdown, run-to-run noise 2 % (power)", 0.02,
         head_change=1.03),
    Case("r2", "reference: 2 base runs, no change, noise 1 %", 0.01, bases=2),
    Case("r3", "reference: 3 base runs, no change, noise 1 %", 0.01, bases=3),
    Case("r4", "reference: 100 base runs, no change, noise 1 %", 0.01, bases=100),
    Case("r5", "reference: as 6, each range with its own run offset", 0.01, ranges=20,
         count="any_range", own_range_offsets=True),
    Case("r6", "reference: as 7, each range with its own run offset", 0.01, ranges=20,
         range_change=1.10, count="range0_slower", own_range_offsets=True),
]


# ---------------------------------------------------------------- synthetic analysis.json


def range_names(n: int) -> list[str]:
    return [f"step.stage{i:02d}" for i in range(n)]


def range_levels(n: int) -> list[float]:
    """Per-iteration levels of the ranges, ns: 100 µs to about 500 µs."""
    return [100_000.0 + 20_000.0 * i for i in range(n)]


def make_run(rng: random.Random, case: Case, *, head: bool, slow: bool) -> dict:
    """The numbers of one run: its iterations' host inclusive times and its ranges' totals."""
    o = rng.gauss(0.0, case.run_sd) if case.run_sd > 0 else 0.0
    factor = (1.0 + o) * (case.slow_runner if slow else 1.0)
    level = HOST_LEVEL_NS * (case.head_change if head else 1.0) * factor
    host = [max(1, round(level * (1.0 + rng.gauss(0.0, ITER_SD)))) for _ in range(ITERATIONS)]
    # A range's total over the iterations, sum of lv * (1 + e_i), is lv * (64 + sum of e_i),
    # and the sum of 64 independent N(0, iter_sd) is N(0, 8 * iter_sd): one draw a range.
    totals = []
    for i, r_level in enumerate(range_levels(case.ranges)):
        own = factor
        if case.own_range_offsets:
            own = factor / (1.0 + o) * (1.0 + rng.gauss(0.0, case.run_sd))
        lv = r_level * own * (case.range_change if head and i == 0 else 1.0)
        noise = rng.gauss(0.0, ITER_SD * math.sqrt(ITERATIONS))
        totals.append(max(1, round(lv * (ITERATIONS + noise))))
    return {"host": host, "ranges": totals}


ITERATION_JSON = (
    '{"index":%d,"range_id":%d,"pid":19,"tid":19,"complete":true,"duplicate":false,'
    '"host":{"start_ns":%d,"end_ns":%d,"inclusive_ns":%d,"exclusive_ns":0,'
    '"child_total_ns":%d},"gpu_projection":null}'
)


def stats(total: int) -> dict:
    return {"total_ns": total, "mean_ns": 0.0, "median_ns": 0.0, "minimum_ns": 0,
            "maximum_ns": 0, "stddev_ns": 0.0}


def analysis_json(run: dict, names: list[str], run_id: str, commit: str) -> str:
    """An analysis.json the tool accepts (the shape of src/compare/fake.rs), host only."""
    host = run["host"]
    count = len(host)
    # The iterations, as json.dumps would write them (a template: the bulk of the file, and
    # three times faster than serializing a dict per iteration).
    iterations = []
    start = 0
    for i, ns in enumerate(host):
        iterations.append(ITERATION_JSON % (i, i + 2, start, start + ns, ns, ns))
        start += ns
    host_ranges = [
        {"name": name, "path": name.split("."), "instances": count,
         "inclusive": stats(total), "exclusive": stats(total), "child_total_ns": 0}
        for name, total in zip(names, run["ranges"])
    ]
    value = {
        "schema_version": 1,
        "provenance": {"run_dir": f"/runs/{run_id}", "manifest_path": "manifest.yaml",
                       "manifest_sha256": "0", "trace_path": "trace.nsys-rep", "reports": {},
                       "report_status": {}, "nsys_version": "2024.2.3.38-242334140272v0",
                       "legacy_reports": False, "stats_reused": False,
                       "tool_version": "0.1.0"},
        "run": {"profile_name": "sim", "run_id": run_id,
                "target": {"import_path": None, "name": "sim", "profile_prepare": False},
                "device": "cuda:0", "git_commit": commit, "command_line": None,
                "capture_range": "profile-target", "iteration_pattern": "^iteration (\\d+)$",
                "record_count": 2, "workload": {"iterations": count, "warmup": 1},
                "cuda": {"synchronize_each_iteration": False},
                "data_source": {"name": "dummy"}, "extra": {}},
        "gate": {"gating_codes": [], "result": "pass", "failing_codes": []},
        "warnings": [{"code": "gpu_projection_unavailable", "gating": False,
                      "message": "no CUDA"}],
        "iteration_summary": {"expected": count, "found": count, "complete": count,
                              "unattributed_ranges": 0,
                              "host_inclusive": {"count": count, "total_ns": sum(host),
                                                 "mean_ns": 0.0, "median_ns": 0.0,
                                                 "minimum_ns": 0, "maximum_ns": 0,
                                                 "p90_ns": 0.0, "p99_ns": 0.0,
                                                 "stddev_ns": 0.0, "cv": 0.0},
                              "host_exclusive": None, "gpu_projected": None,
                              "first_iteration": None},
        "iterations": "@ITERATIONS@",
        "host_ranges": host_ranges,
        "gpu_projected_ranges": [],
    }
    text = json.dumps(value, separators=(",", ":"))
    return text.replace('"@ITERATIONS@"', "[" + ",".join(iterations) + "]", 1)


def make_trial(rng: random.Random, case: Case) -> list[dict]:
    """The base runs (oldest first), then the head run."""
    runs = []
    for i in range(case.bases + 1):
        head = i == case.bases
        if case.last_slow:
            slow = i >= case.bases - case.last_slow
        else:
            slow = case.slow_runner_p > 0 and rng.random() < case.slow_runner_p
        runs.append(make_run(rng, case, head=head, slow=slow))
    return runs


# ---------------------------------------------------------------- one trial


@dataclass
class Outcome:
    verdict: str  # the counted verdict: "slower", "faster" or anything else
    measure_verdict: str | None
    p_value: float | None
    change_point: bool
    used: int
    ranges_flagged: int
    false_range_flags: int  # ranges flagged that did not change


def run_trial(binary: str, workdir: str, seed: int, case: Case, trial: int) -> Outcome:
    rng = random.Random(f"{seed}/{case.id}/{trial}")
    runs = make_trial(rng, case)
    names = range_names(case.ranges)
    folder = tempfile.mkdtemp(prefix=f"{case.id}-{trial}-", dir=workdir)
    try:
        paths = []
        for i, run in enumerate(runs):
            head = i == len(runs) - 1
            name = "head.json" if head else f"base-{i:03d}.json"
            path = os.path.join(folder, name)
            run_id = "head" if head else f"base{i:03d}"
            with open(path, "w", encoding="utf-8") as f:
                f.write(analysis_json(run, names, run_id, f"{i:07x}"))
            paths.append(path)
        # comparison.json on standard output (`--json -`): the same document as
        # `--json FILE`, without the markdown and without a file written and synced.
        done = subprocess.run(
            [binary, "compare", *paths, "--json", "-"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{case.id} trial {trial}: nsys-gate compare exited "
                               f"{done.returncode}: {done.stderr.strip()}")
        comparison = json.loads(done.stdout)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    run = comparison["runs"][0]
    measure = next(m for m in run["measures"] if m["name"] == "host_inclusive")
    changed = run["host_ranges"]["changed"]
    flagged = [r for r in changed if r["verdict"] in ("slower", "faster")]
    changed_range = range_names(case.ranges)[0] if case.range_change != 1.0 else None
    if case.count == "measure":
        verdict = measure["verdict"]
    elif case.count == "any_range":
        verdict = flagged[0]["verdict"] if flagged else "within_noise"
    else:  # range0_slower
        target = range_names(case.ranges)[0]
        verdict = next(r["verdict"] for r in changed if r["name"] == target)
    return Outcome(
        verdict=verdict,
        measure_verdict=measure["verdict"],
        p_value=measure["p_value"],
        change_point=run["history"]["change_point"] is not None,
        used=len(run["history"]["used"]),
        ranges_flagged=len(flagged),
        false_range_flags=sum(r["name"] != changed_range for r in flagged),
    )


# ---------------------------------------------------------------- tables


def pct(k: int, n: int) -> float:
    return 100.0 * k / n if n else 0.0


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson's 95 % interval for a proportion, in %."""
    if n == 0:
        return (0.0, 100.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (100 * max(0.0, centre - half), 100 * min(1.0, centre + half))


def target_text(target: tuple[str, float] | None, count: str) -> str:
    if target is None:
        return "(reference)"
    kind, value = target
    what = "slower" if count == "range0_slower" else "slower or faster"
    return {"max": f"≤ {value:g} % {what}", "min": f"≥ {value:g} % {what}",
            "eq": f"= {value:g} % {what}"}[kind]


def met(target: tuple[str, float] | None, value: float) -> str:
    if target is None:
        return "—"
    kind, bound = target
    ok = {"max": value <= bound, "min": value >= bound, "eq": value == bound}[kind]
    return "pass" if ok else "**FAIL**"


def quantile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[i]


def default_tmpdir() -> str:
    """/dev/shm when there is one (a file system in memory: creating and removing 100,000s of
    small files there costs less than on a disk's), else the system's temporary folder."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK):
        return shm
    return tempfile.gettempdir()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default="target/release/nsys-gate",
                        help="the nsys-gate binary (default: %(default)s)")
    parser.add_argument("--trials", type=int, default=1000, help="trials per case")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--jobs", type=int, default=2, help="compare processes at once")
    parser.add_argument("--cases", nargs="+", metavar="ID", help="only these cases")
    parser.add_argument("--tmpdir", default=default_tmpdir(),
                        help="where each trial's files go, removed after it (default: "
                             "%(default)s)")
    parser.add_argument("--details", action="store_true",
                        help="also print the change points, base runs used and p-values")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a target is missed (for full runs: with a few "
                             "trials a case, targets are missed by chance)")
    args = parser.parse_args()

    binary = os.path.abspath(args.bin)
    if not os.access(binary, os.X_OK):
        print(f"simulate-verdict: {binary} is not an executable (cargo build --release)",
              file=sys.stderr)
        return 2
    cases = [c for c in CASES if not args.cases or c.id in args.cases]
    if not cases:
        print(f"simulate-verdict: no case among {', '.join(args.cases)}", file=sys.stderr)
        return 2

    started = time.monotonic()
    rows, details, missed = [], [], []
    with tempfile.TemporaryDirectory(prefix="simulate-verdict-", dir=args.tmpdir) as workdir, \
            ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for case in cases:
            t0 = time.monotonic()
            outcomes = list(pool.map(
                lambda t, c=case: run_trial(binary, workdir, args.seed, c, t),
                range(args.trials)))
            n = len(outcomes)
            slower = sum(o.verdict == "slower" for o in outcomes)
            faster = sum(o.verdict == "faster" for o in outcomes)
            both = slower + faster
            if case.count == "range0_slower":
                flagged = slower
            else:
                flagged = both
            value = pct(flagged, n)
            lo, hi = wilson(flagged, n)
            verdict = met(case.target, round(value, 1))
            if verdict == "**FAIL**":
                missed.append(case.id)
            rows.append(
                f"| {case.id} | {case.title} | {n} | {value:.1f} ({lo:.1f}–{hi:.1f}) "
                f"| {pct(slower, n):.1f} | {pct(faster, n):.1f} "
                f"| {target_text(case.target, case.count)} | {verdict} |")
            ps = sorted(o.p_value for o in outcomes if o.p_value is not None)
            unknown = sum(o.measure_verdict == "noise_unknown" for o in outcomes)
            cut = sum(o.change_point for o in outcomes)
            cut_flagged = sum(o.change_point and o.verdict in ("slower", "faster")
                              for o in outcomes)
            used = sorted(o.used for o in outcomes)
            ranges = sum(o.ranges_flagged for o in outcomes)
            false_flags = sum(o.false_range_flags > 0 for o in outcomes)
            details.append(
                f"| {case.id} | {pct(cut, n):.1f} | {cut_flagged} / {cut} "
                f"| {quantile(used, 0.5):g} "
                f"({used[0]}–{used[-1]}) | {pct(unknown, n):.1f} "
                f"| {pct(sum(p < 0.05 for p in ps), n):.1f} "
                f"| {quantile(ps, 0.1):.3g} / {quantile(ps, 0.5):.3g} / {quantile(ps, 0.9):.3g} "
                f"| {ranges / n:.2f} | {pct(false_flags, n):.1f} "
                f"| {time.monotonic() - t0:.0f} s |")
    elapsed = time.monotonic() - started

    print(f"Seed {args.seed}, {args.trials} trials per case, {args.jobs} jobs, "
          f"{elapsed:.0f} s in all.\n")
    print("| case | what | trials | % slower or faster (95 % CI) | % slower | % faster "
          "| target | result |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | --- |")
    print("\n".join(rows))
    if args.details:
        print()
        print("| case | % history cut at a change point | of those, slower or faster "
              "| base runs used: median (min–max) "
              "| % noise_unknown | % host p < 0.05 | host p-value 10 % / 50 % / 90 % "
              "| ranges flagged per trial | % with an unchanged range flagged | time |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        print("\n".join(details))
    if args.trials < 1000:
        print(f"\nWith {args.trials} trials a case the figures are rough (see the intervals): "
              "pass/fail says little; the targets are for 1,000 trials or more.")
    if missed:
        print(f"\nMissed: {', '.join(missed)}", file=sys.stderr)
    return 1 if (missed and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
