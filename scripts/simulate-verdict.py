#!/usr/bin/env python3
"""How often `nsys-gate compare` gives a wrong verdict: a simulation.

What it does
    For each case (the CASES list below: no change at several noise levels, real slowdowns,
    hiccup runs, repeats of the harness, a hostile artifact, heavy-tailed and mixed noise, two
    runners of different speed, level shifts, a drifting branch, histories of identical runs,
    a thin head, dozens of ranges, the whole comment, kernels, and a llama-shaped trace whose
    ranges the comparison groups), trial after trial, it makes up a
    history of base runs (oldest first) and a head as analysis.json files in a temporary
    folder, runs the release binary on them (`nsys-gate compare BASE... HEAD --json -`:
    comparison.json on standard output, the document `--json FILE` writes), reads it, and
    removes the folder. It counts what the case is about in `runs[0]` (a measure's verdict,
    the ranges' verdicts, whether the history's drift is named, or anything said `slower` or
    `faster` in the whole comparison) and prints a markdown table: each case, its trials, how
    often (with a 95 % Wilson interval), the target, and whether it was met. `--calibrate`
    then checks `detectable_pct` against the smallest change the binary really finds 4 times
    in 5.

The model
    A history is a list of points, one per CI run (a push of the base branch), oldest first.
    A point has its own offset o ~ N(0, run_sd) (the run-to-run noise, relative; Student's t
    with 3 degrees of freedom scaled to the same standard deviation in the heavy-tailed
    case), and each of its analyses (one, or the harness's repeats, each with a small offset
    of its own) has 64 iterations of level * (1 + o) * (1 + e) nanoseconds, e ~ N(0, 1 %)
    (the per-iteration noise), written as integer `host.inclusive_ns`. With a GPU projection
    (the whole-comment case), each iteration's projected time follows the same offset, an
    offset of the GPU's own (0.3 %) and a per-iteration noise. A range's time in an iteration
    follows the run's offset and its own per-iteration noise (in r5 and r6 an offset of its
    own instead); `host_ranges[].exclusive.total_ns` is its sum over the counted iterations
    (drawn at once: the sum of k independent normal deviations is normal, with √k times
    their standard deviation). A llama-shaped case has the ranges of the public llama3 GPU
    trace's shape instead: `embed` and `sample` in every pass, and for each of 8 layers and
    each token (one per iteration) `layer_L_token_T` with its `ensure_layer_L_weights` and
    `forward_layer_L`, once each in the capture (1,538 names, 5 groups). With kernels (the
    kernel cases), `gpu_work` records each kernel's time per counted iteration
    (`kernels_by_base_name[].per_iteration_ns`: the run's offset, the GPU's own, each kernel's
    own 0.3 % and the noise of a mean of the counted iterations) and two memory copy kinds by
    their capture totals only, as nsys 2024.2 gives them. A real change multiplies the head's
    level (or one range's, one group's, one kernel's); a slower runner, a hiccup, a step or a
    drift multiply whole points. Every analysis records
    its CI run (`provenance.ci_run`) and its runner (`provenance.runner`): one runner unless
    the case has two.

    The tool reduces each analysis to the median of its iterations (and each range to its
    total divided by the counted iterations), so a run's value moves by o plus the noise of a
    median of 64, about 1.25 * 1 % / 8 = 0.16 %.

How to run it
    cargo build --release
    python3 scripts/simulate-verdict.py                  # every case, 1,000 trials each
    python3 scripts/simulate-verdict.py --trials 30      # a smoke test, a minute or two
    python3 scripts/simulate-verdict.py --cases h1 d1 --details
    python3 scripts/simulate-verdict.py --calibrate      # detectable_pct against a sweep

    Options: --bin PATH (default target/release/nsys-gate), --trials N (default 1000),
    --seed N (default 20240601), --jobs N (compare processes at once, default 2),
    --tmpdir DIR (the trials' files, default /dev/shm when there is one), --cases ID...
    (only those), --details (a second table: shifts, drifts, outliers and invalid points
    left out, points used, p-values, ranges flagged, detectable_pct), --calibrate (only the
    calibration of detectable_pct at run-to-run noise 1 % and 2 % with 10 base runs),
    --check (exit 1 when a target is missed; for full runs only: with --trials 30 a target is
    missed by chance now and then, so a smoke test checks that the script runs, not the
    figures).

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
from dataclasses import dataclass, replace

ITERATIONS = 64
HOST_LEVEL_NS = 10_000_000  # 10 ms per iteration
GPU_LEVEL_NS = 7_000_000  # 7 ms projected per iteration
GPU_OWN_SD = 0.003  # the GPU's own run-to-run offset
ITER_SD = 0.01  # per-iteration noise, relative
FLAGGED = ("slower", "faster")


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    run_sd: float  # run-to-run noise, relative (its standard deviation)
    bases: int = 10
    head_change: float = 1.0  # the head's host level, times
    ranges: int = 3
    range_change: float = 1.0  # range 0 of the head, times
    slow_runner_p: float = 0.0  # each run on a slower runner with this probability
    slow_runner: float = 1.05
    name_runners: bool = True  # the slow runner has a name of its own
    last_slow: int = 0  # the last N base runs (and the head) at `slow_runner`
    own_range_offsets: bool = False  # each range with its own run offset
    hiccup: float = 1.0  # one base point (at random) times this
    invalid: bool = False  # one base point (at random) with iterations of 0 ns
    repeats: int = 1  # analyses per base point (the harness's repeats)
    head_repeats: int = 1
    repeat_sd: float = 0.002  # each repeat's own offset
    newest_off: float = 1.0  # the newest base point times this
    hostile: bool = False  # the newest base point: 3 analyses of the head's level
    heavy: bool = False  # offsets from Student's t with 3 degrees of freedom
    noisy_p: float = 0.0  # each point at run-to-run noise `noisy_sd` with this probability
    noisy_sd: float = 0.05
    runners: float = 0.0  # two named runners this far apart, runs on either at random
    gpus: float = 0.0  # one runner whose two GPUs (their UUIDs) are this far apart
    gpu_uuids: bool = True  # the two GPUs' UUIDs are recorded
    drift_runs: int = 0  # the last N base points each `drift_step` slower than the one before
    drift_step: float = 1.0
    head_follows_drift: bool = True  # the head at the drifted level
    identical: bool = False  # every base analysis a copy of the first
    head_counted: int = ITERATIONS  # counted iterations of the head
    gpu: bool = False  # a GPU projection too (the comment's second measure)
    kernels: int = 0  # kernels (by base name) with their time per iteration, and 2 copy kinds
    kernel_change: float = 1.0  # kernel 0 of the head, times
    llama: bool = False  # the ranges of a llama-shaped trace (8 layers, a token per iteration)
    group_change: float = 1.0  # the head's `ensure_layer_L_weights` ranges, times
    # A cold first pass (issue 34): iteration 0 this many times a steady one (each run's
    # own cold start: times 1 + N(0, cold_sd)), the extra time in token 0's `forward_layer_L`
    # ranges; with `steady`, analysis.json's `steady_state` (iteration 0 left out, as the
    # analysis writes it) and the `slow_iterations` warning; without, a file written before
    # `steady_state` (the comparison then counts every iteration).
    cold: float = 1.0
    cold_sd: float = 0.1
    steady: bool = True
    # Runners (issue 33): `b_points` base points (at random places) on `runner-b`, which is
    # `b_factor` times A's speed, the oldest of them also `b_planted` times (a planted file);
    # `b_half`: each point on A or B at random instead; `b_sd`: B's run-to-run noise (else
    # run_sd); `head_on_b`: the head on runner-b.
    b_points: int = 0
    b_factor: float = 1.0
    b_planted: float = 1.0
    b_half: bool = False
    b_sd: float = 0.0
    head_on_b: bool = False
    slots: int = 0  # each point (and the head) on one of this many reused runner names
    ar_phi: float = 0.0  # AR(1) run-to-run offsets with this coefficient (same sd)
    kernel_sd: float = 0.003  # each kernel's own run-to-run offset
    # A matrix (issue 33 item 4): each CI run (and the head's) records this many legs of the
    # one profile (`label` leg-0, leg-1, ...), each leg with run-to-run offsets of its own.
    legs: int = 0
    # What is counted: "measure" (host inclusive slower or faster), "slower" (host inclusive
    # slower), "any_range", "range0_slower", "over3" (more than 3 ranges flagged), "drift"
    # (the history's drift named), "comment" (anything slower or faster: measures, range
    # groups, kernels, copies), "kernel0_first" (kernel 0 the first changed kernel, slower),
    # "group_first" (the ensure group the first range row, slower, by 6-10 %), "newest"
    # (`history.newest_moved` said), "shift" (a level shift named), "run_wide" (said),
    # "kernel0_slower" (kernel 0 slower), "matrix" (anything slower or faster in any leg:
    # every run's measures, range groups, kernels, copies).
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
    Case("4", "runs now and then on a named 5 % slower runner (p = 1/10 each), noise 1 %",
         0.01, slow_runner_p=0.1, target=("max", 10)),
    Case("5", "last 3 base runs 5 % slower, head like them, noise 1 %", 0.01, last_slow=3,
         target=("max", 10)),
    Case("6", "20 ranges, no change, noise 1 %: any range flagged", 0.01, ranges=20,
         count="any_range", target=("max", 10)),
    Case("7", "1 range of 20 really 10 % slower, noise 1 %: that range slower", 0.01,
         ranges=20, range_change=1.10, count="range0_slower", target=("min", 80)),
    Case("h1", "one hiccup run at 1.2x among 10, noise 0.5 %, real 5 % slowdown", 0.005,
         hiccup=1.2, head_change=1.05, count="slower", target=("min", 85)),
    Case("h2", "one hiccup run at 1.2x among 10, noise 0.5 %, no change", 0.005, hiccup=1.2,
         target=("max", 8)),
    Case("h3", "one hiccup run at 1.2x among 10, noise 1 %, real 10 % slowdown", 0.01,
         hiccup=1.2, head_change=1.10, count="slower", target=("min", 85)),
    Case("h4", "one base run with iterations of 0 ns among 10, noise 1 %, real 5 % slowdown",
         0.01, invalid=True, head_change=1.05, count="slower", target=("min", 85)),
    Case("p1", "3 repeats a point, the newest point 3 % off, noise 0.5 %, no change", 0.005,
         repeats=3, newest_off=1.03, target=("max", 8)),
    Case("p2", "3 repeats a point and 3 in the head's job, noise 1 %, no change", 0.01,
         repeats=3, head_repeats=3, target=("max", 8)),
    Case("p3", "one artifact holding 3 analyses at the head's level, head 20 % slower, "
         "noise 1 %", 0.01, hostile=True, head_change=1.20, count="slower",
         target=("min", 90)),
    Case("t3", "no change, Student t (3 df) run-to-run noise of sd 1 %", 0.01, heavy=True,
         target=("max", 8)),
    Case("n1", "10 % of runs at run-to-run noise 5 % (the rest 1 %), real 5 % slowdown",
         0.01, noisy_p=0.1, head_change=1.05, count="slower", target=("min", 90)),
    Case("w0", "two runners 4 % apart, runs on either, noise 1 %, no change", 0.01,
         runners=1.04, target=("max", 8)),
    Case("w5", "two runners 4 % apart, runs on either, noise 1 %, real 5 % slowdown", 0.01,
         runners=1.04, head_change=1.05, count="slower", target=("min", 90)),
    Case("w6", "one runner whose two GPUs are 4 % apart (told apart by their UUIDs), runs on "
         "either, noise 1 %, real 5 % slowdown", 0.01,
         gpus=1.04, head_change=1.05, count="slower", target=("min", 90)),
    Case("s1", "a step of +5 % 3 runs back, head a further 5 % slower, noise 1 %", 0.01,
         last_slow=3, head_change=1.05, count="slower", target=("min", 85)),
    Case("d1", "20 base runs, the last 12 each 0.8 % slower, noise 1 %: drift named", 0.01,
         bases=20, drift_runs=12, drift_step=1.008, count="drift", target=("min", 80)),
    Case("d0", "20 base runs of one level, noise 1 %: drift named", 0.01, bases=20,
         count="drift", target=("max", 3)),
    Case("d2", "as d1, the head at the drifted level, no change of its own", 0.01, bases=20,
         drift_runs=12, drift_step=1.008, target=("max", 10)),
    Case("i1", "10 identical base runs, head a copy of them 1.5 % slower", 0.01, identical=True,
         head_change=1.015, count="slower", target=("eq", 0)),
    Case("k1", "head with 5 of 64 iterations counted, noise 0.5 %, no change", 0.005,
         head_counted=5, target=("max", 8)),
    Case("g1", "100 ranges, no change, noise 1 %: more than 3 ranges flagged", 0.01,
         ranges=100, count="over3", target=("max", 2)),
    Case("c1", "the whole comment (2 measures + 5 ranges), noise 1 %, no change", 0.01,
         ranges=5, gpu=True, count="comment", target=("max", 8)),
    Case("kn", "the whole comment with kernels and copies (2 measures + 5 ranges + 8 kernels + "
         "2 copy kinds), noise 1 %, no change", 0.01, ranges=5, gpu=True, kernels=8,
         count="comment", target=("max", 8)),
    Case("ks", "1 kernel of 8 really 15 % slower, noise 1 %: that kernel first and slower",
         0.01, ranges=5, gpu=True, kernels=8, kernel_change=1.15, count="kernel0_first",
         target=("min", 90)),
    Case("lg", "llama-shaped (1,538 ranges in 5 groups), the ensure_layer_#_weights group 8 % "
         "slower, noise 1 %: that group the first row, slower, 6-10 %", 0.01, llama=True,
         group_change=1.08, count="group_first", target=("min", 90)),
    # Issue 33: runners, legs and the newest base runs.
    Case("u1", "10 points on runner A, 1 planted on B at +10 %, head on B at +10 %", 0.01,
         bases=11, b_points=1, b_planted=1.10, head_on_b=True, head_change=1.10,
         count="slower", target=("min", 90)),
    Case("u1b", "as u1, the B point planted at -30 %, head on B unchanged", 0.01, bases=11,
         b_points=1, b_planted=0.70, head_on_b=True, target=("max", 8)),
    Case("u2", "one honest +15 % hiccup on the head's runner, head +12 %", 0.01, hiccup=1.15,
         head_change=1.12, count="slower", target=("min", 90)),
    Case("u3", "runner names that are reused slots (GitHub Actions 1..12), real +5 %", 0.01,
         slots=12, head_change=1.05, count="slower", target=("min", 90)),
    Case("u3n", "runner names that are reused slots (GitHub Actions 1..12), no change", 0.01,
         slots=12, target=("max", 8)),
    Case("u4", "runners A (sd 0.5 %) and B (sd 3 %), same speed, head on B, no change", 0.005,
         b_half=True, b_sd=0.03, head_on_b=True, target=("max", 8)),
    Case("u5", "runners A (sd 0.5 %) and B (sd 3 %), same speed, head on quiet A, +3 %", 0.005,
         b_half=True, b_sd=0.03, head_change=1.03, count="slower", target=("min", 80)),
    Case("u6", "two points on the head's runner B (one honest, one planted at +20 %), head +10 %",
         0.01, b_points=2, b_planted=1.20, head_on_b=True, head_change=1.10, count="slower",
         target=("min", 90)),
    Case("u7", "kept: 9 runs on A, 1 on B (+4 %), head on B at +5 % (of B)", 0.01, b_points=1,
         b_factor=1.04, head_on_b=True, head_change=1.05, count="slower", target=("min", 80)),
    Case("nw1", "newest base run +5 %, head like it: newest_moved said", 0.01, last_slow=1,
         count="newest", target=("min", 90)),
    Case("nw1v", "newest base run +5 %, head like it: slower (one run decides nothing)", 0.01,
         last_slow=1, count="slower"),
    Case("nw2", "newest 2 base runs +5 %, head like them: slower", 0.01, last_slow=2,
         count="slower", target=("max", 10)),
    Case("nw2m", "newest 2 base runs +5 %, head like them: newest_moved said", 0.01, last_slow=2,
         count="newest", target=("min", 90)),
    Case("nw3", "newest 2 base runs +5 %, head +5 % above them: slower (median size in details)",
         0.01, last_slow=2, head_change=1.05, count="slower", target=("min", 90)),
    Case("nw4", "20 flat runs, one planted newest point at +6 %, head +8 %", 0.01, bases=20,
         newest_off=1.06, head_change=1.08, count="slower", target=("min", 90)),
    Case("nw5", "20 flat runs, one planted newest point at +3 %, head +5 %", 0.01, bases=20,
         newest_off=1.03, head_change=1.05, count="slower", target=("min", 90)),
    Case("g3", "3 range groups, head on a runner with 1 point of 10: a range flagged", 0.01,
         b_points=1, head_on_b=True, count="any_range", target=("max", 3)),
    Case("g3b", "3 range groups, head on a runner with 1 point of 20: a range flagged", 0.01,
         bases=20, b_points=1, head_on_b=True, count="any_range", target=("max", 3)),
    Case("g4", "3 range groups, 20 runs, step +10 % 3 runs back, head at the new level: a "
         "range flagged", 0.01, bases=20, last_slow=3, slow_runner=1.10, count="any_range",
         target=("max", 3)),
    Case("g3c", "3 range groups, head on a runner 5 % slower with 1 point of 10: a range "
         "flagged", 0.01, b_points=1, b_factor=1.05, head_on_b=True, count="any_range",
         target=("max", 3)),
    Case("g5", "3 range groups, range 0 really 10 % slower, noise 1 %: that range slower",
         0.01, range_change=1.10, count="range0_slower", target=("min", 80)),
    Case("g0", "3 range groups, no change, noise 1 %: a range flagged", 0.01,
         count="any_range", target=("max", 3)),
    # Issue 34: a cold first pass (13 times a steady one, its own cold start varying 10 % run
    # to run), range groups judged over the steady state (as the report's tables).
    Case("lc", "llama-shaped with a cold first pass (13x), the ensure group 8 % slower: that "
         "group the first row, slower, 6-10 % (over the steady state)", 0.01, llama=True,
         cold=13.0, group_change=1.08, count="group_first", target=("min", 90)),
    Case("lc0", "llama-shaped with a cold first pass, no change: a range flagged (over the "
         "steady state)", 0.01, llama=True, cold=13.0, count="any_range", target=("max", 3)),
    Case("lcr", "reference: as lc, every file written before `steady_state` (over every "
         "counted iteration)", 0.01, llama=True, cold=13.0, steady=False, group_change=1.08,
         count="group_first"),
    Case("a1", "AR(1) noise, phi 0.8, 20 runs, no change: drift named", 0.01, bases=20,
         ar_phi=0.8, count="drift", target=("max", 3)),
    Case("a1s", "AR(1) noise, phi 0.8, 20 runs, no change: level shift named", 0.01, bases=20,
         ar_phi=0.8, count="shift", target=("max", 10)),
    Case("rw", "20 range groups, no change: run_wide said", 0.01, ranges=20, count="run_wide",
         target=("max", 10)),
    Case("k50", "one kernel of 50 at +8 %, kernels' own sd 2 %: that kernel slower", 0.01,
         ranges=5, gpu=True, kernels=50, kernel_change=1.08, kernel_sd=0.02,
         count="kernel0_slower", target=("min_or_shown", 80)),
    Case("m4", "a matrix of 4 legs of one profile (2 measures + 5 ranges each), no change: "
         "anything slower or faster in any leg", 0.01, ranges=5, gpu=True, legs=4,
         count="matrix", target=("max", 8)),
    Case("m4k", "as m4 with 8 kernels and 2 copy kinds a leg", 0.01, ranges=5, gpu=True,
         kernels=8, legs=4, count="matrix", target=("max", 8)),
    Case("m5", "reference: a matrix of 4 legs, real 5 % slowdown on every leg: leg 0's host "
         "time slower (the power a leg keeps at its share of the budget)", 0.01, ranges=5,
         gpu=True, legs=4, head_change=1.05, count="slower"),
    Case("q1", "kept: one quiet runner (sd 0.5 %), +3 %", 0.005, head_change=1.03,
         count="slower", target=("min", 80)),
    Case("f20", "kept: 20 flat runs, +5 %", 0.01, bases=20, head_change=1.05, count="slower",
         target=("min", 95)),
    Case("f5", "kept: -5 %, noise 1 %: faster", 0.01, head_change=0.95, target=("min", 90)),
    Case("s5", "kept: a step +5 % 5 runs back, head at the new level", 0.01, last_slow=5,
         target=("max", 10)),
    Case("k0", "kept: 50 kernels, no change: anything slower or faster", 0.01, ranges=5,
         gpu=True, kernels=50, count="comment", target=("max", 8)),
    Case("r1", "reference: real 3 % slowdown, run-to-run noise 2 % (power)", 0.02,
         head_change=1.03),
    Case("r2", "reference: 2 base runs, no change, noise 1 %", 0.01, bases=2),
    Case("r3", "reference: 3 base runs, no change, noise 1 %", 0.01, bases=3),
    Case("r4", "reference: 100 base runs, no change, noise 1 %", 0.01, bases=100),
    Case("r5", "reference: as 6, each range with its own run offset", 0.01, ranges=20,
         count="any_range", own_range_offsets=True),
    Case("r6", "reference: as 7, each range with its own run offset", 0.01, ranges=20,
         range_change=1.10, count="range0_slower", own_range_offsets=True),
    Case("r7", "reference: as 4, the slower runner not named", 0.01, slow_runner_p=0.1,
         name_runners=False),
    Case("r8", "reference: 10 % of runs at noise 5 %, no change", 0.01, noisy_p=0.1),
    Case("r9", "reference: as d1, the head one merge further (0.8 %)", 0.01, bases=20,
         drift_runs=12, drift_step=1.008, head_change=1.008),
    Case("r10", "reference: whole comment with 20 ranges and a GPU projection, no change",
         0.01, ranges=20, gpu=True, count="comment"),
    Case("r11", "reference: 10 base runs, all 10 each 0.8 % slower, noise 1 %: drift named",
         0.01, drift_runs=10, drift_step=1.008, count="drift"),
    Case("r12", "reference: 10 base runs of one level, noise 1 %: drift named", 0.01,
         count="drift"),
    Case("r13", "reference: as w6, the GPUs' UUIDs not recorded", 0.01, gpus=1.04,
         gpu_uuids=False, head_change=1.05, count="slower"),
]

# The base-run counts whose smallest detectable change the comment states (reference).
DETECTABLE_BASES = (3, 5, 10, 30)


# ---------------------------------------------------------------- synthetic analysis.json


def range_names(n: int) -> list[str]:
    """`step.stage_aa`, `step.stage_ab`, …: no digits, so that no two are one group (the
    comparison groups names that differ only in decimal numbers)."""
    return [f"step.stage_{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(n)]


def range_levels(n: int) -> list[float]:
    """Per-iteration levels of the ranges, ns: 100 µs to about 500 µs (2 ms for 100)."""
    return [100_000.0 + 20_000.0 * i for i in range(n)]


LLAMA_LAYERS = 8
ENSURE_GROUP = "layer_#_token_#.ensure_layer_#_weights"


def llama_ranges() -> list[tuple[str, float, bool]]:
    """The ranges of a llama-shaped trace (the public llama3 GPU trace's names, as the
    llama-gpu fixture has them): `embed` and `sample` in every pass, and for token T (one per
    iteration) and layer L `layer_L_token_T` with its `ensure_layer_L_weights` and
    `forward_layer_L`, each once in the capture. (name, duration of one instance in ns, in
    every pass)."""
    out = [("embed", 30_000.0, True), ("sample", 80_000.0, True)]
    for layer in range(LLAMA_LAYERS):
        for token in range(ITERATIONS):
            scope = f"layer_{layer}_token_{token}"
            out += [(scope, 8_600.0, False),
                    (f"{scope}.ensure_layer_{layer}_weights", 80_000.0, False),
                    (f"{scope}.forward_layer_{layer}", 140_000.0, False)]
    return out


def range_specs(case: Case) -> list[tuple[str, float, bool]]:
    """The case's ranges: (name, duration of one instance in ns, in every pass)."""
    if case.llama:
        return llama_ranges()
    return [(n, lv, True) for n, lv in zip(range_names(case.ranges), range_levels(case.ranges))]


def head_change_of(case: Case, index: int, name: str) -> float:
    """How much the head changes range `index` (named `name`)."""
    if case.llama:
        return case.group_change if ".ensure_layer_" in name else 1.0
    return case.range_change if index == 0 else 1.0


def kernel_levels(n: int) -> list[float]:
    """Per-iteration times of the kernels, ns: 400 µs, 200 µs, … halving, at least 5 µs."""
    return [max(5_000.0, 400_000.0 / 2 ** i) for i in range(n)]


KERNEL_OWN_SD = 0.003  # each kernel's own run-to-run offset
COPY_LEVELS = [("Host-to-Device", "Pinned", "Device", 60_000.0),
               ("Device-to-Host", "Device", "Pageable", 15_000.0)]


def offset(rng: random.Random, case: Case, sd: float) -> float:
    if sd <= 0:
        return 0.0
    if case.heavy:
        # Student's t with 3 df has variance 3: scaled to a standard deviation of sd.
        z = rng.gauss(0.0, 1.0)
        chi2 = sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(3))
        return sd * z / math.sqrt(chi2 / 3.0) / math.sqrt(3.0)
    return rng.gauss(0.0, sd)


@dataclass
class Point:
    factor: float  # the point's level, times (runner, hiccup, step, drift, change)
    runner: str
    analyses: int
    counted: int = ITERATIONS
    head: bool = False
    invalid: bool = False
    gpu_uuid: str = ""  # the GPU's UUID in `environment`, when the case has two GPUs
    sd: float | None = None  # its run-to-run noise, when not the case's


def make_analysis(rng: random.Random, case: Case, point: Point, point_offset: float) -> dict:
    """The numbers of one analysis: its iterations' host (and GPU) times and its ranges'
    totals."""
    o = point_offset + (rng.gauss(0.0, case.repeat_sd) if point.analyses > 1 else 0.0)
    factor = (1.0 + o) * point.factor
    level = HOST_LEVEL_NS * factor
    host = [max(1, round(level * (1.0 + rng.gauss(0.0, ITER_SD)))) for _ in range(ITERATIONS)]
    if point.invalid:
        host = [0] * ITERATIONS
    gpu = None
    if case.gpu:
        g = GPU_LEVEL_NS * factor * (1.0 + rng.gauss(0.0, GPU_OWN_SD))
        gpu = [max(1, round(g * (1.0 + rng.gauss(0.0, ITER_SD)))) for _ in range(ITERATIONS)]
    counted = point.counted
    cold_extra = 0.0
    if case.cold != 1.0:
        cold_extra = level * (case.cold * (1.0 + rng.gauss(0.0, case.cold_sd)) - 1.0)
        host[0] += round(cold_extra)
    totals = []
    for i, (name, r_level, every_pass) in enumerate(range_specs(case)):
        own = factor
        if case.own_range_offsets:
            own = factor / (1.0 + o) * (1.0 + rng.gauss(0.0, case.run_sd))
        lv = r_level * own * (head_change_of(case, i, name) if point.head else 1.0)
        if every_pass:
            noise = rng.gauss(0.0, ITER_SD * math.sqrt(counted))
            totals.append(max(1, round(lv * (counted + noise))))
        else:
            totals.append(max(1, round(lv * (1.0 + rng.gauss(0.0, ITER_SD)))))
        if cold_extra and name.startswith("layer_") and "_token_0.forward_layer_" in name:
            totals[-1] += round(cold_extra / LLAMA_LAYERS)
    kernels, copies = [], []
    if case.kernels:
        # The GPU's offset of the run, each kernel's own, and the noise of a mean of the
        # counted iterations; copies by the capture's totals (a warm-up pass included).
        g = factor * (1.0 + rng.gauss(0.0, GPU_OWN_SD))
        for k, level in enumerate(kernel_levels(case.kernels)):
            change = case.kernel_change if point.head and k == 0 else 1.0
            kernels.append(level * g * change * (1.0 + rng.gauss(0.0, case.kernel_sd))
                           * (1.0 + rng.gauss(0.0, ITER_SD / math.sqrt(counted))))
        for *_, level in COPY_LEVELS:
            copies.append(level * g * (counted + 1) * (1.0 + rng.gauss(0.0, KERNEL_OWN_SD)))
    return {"host": host, "gpu": gpu, "ranges": totals, "counted": counted,
            "kernels": kernels, "copies": copies, "cold": bool(cold_extra)}


def scaled(run: dict, factor: float) -> dict:
    """An analysis's numbers, every time times `factor`."""
    def times(values):
        return None if values is None else [max(1, round(v * factor)) for v in values]
    return {"host": times(run["host"]), "gpu": times(run["gpu"]),
            "ranges": times(run["ranges"]), "counted": run["counted"],
            "kernels": [v * factor for v in run["kernels"]],
            "copies": [v * factor for v in run["copies"]], "cold": run.get("cold", False)}


ITERATION_JSON = (
    '{"index":%d,"range_id":%d,"pid":19,"tid":19,"complete":%s,"duplicate":false,'
    '"host":{"start_ns":%d,"end_ns":%d,"inclusive_ns":%d,"exclusive_ns":0,'
    '"child_total_ns":%d},"gpu_projection":%s}'
)
GPU_JSON = '{"start_ns":%d,"end_ns":%d,"projected_ns":%d,"gpu_operation_count":4}'


def stats(total: int) -> dict:
    return {"total_ns": total, "mean_ns": 0.0, "median_ns": 0.0, "minimum_ns": 0,
            "maximum_ns": 0, "stddev_ns": 0.0}


def iteration_stats(count: int, total: int) -> dict:
    return {"count": count, "total_ns": total, "mean_ns": 0.0, "median_ns": 0.0,
            "minimum_ns": 0, "maximum_ns": 0, "p90_ns": 0.0, "p99_ns": 0.0,
            "stddev_ns": 0.0, "cv": 0.0}


def kernel_name(k: int) -> str:
    return f"kernel_{chr(97 + k)}"


def gpu_work_json(run: dict) -> dict | None:
    """`gpu_work` with kernels by base name (their time per counted iteration) and memory
    copies (their capture totals only, as nsys 2024.2 gives them)."""
    if not run["kernels"]:
        return None
    counted = run["counted"]
    bases, kernels = [], []
    for k, per_iteration in enumerate(run["kernels"]):
        name = kernel_name(k)
        inside = round(per_iteration * counted)
        total = round(per_iteration * (counted + 1))
        kernels.append({"name": name, "base_name": name, "instances": counted + 1,
                        "total_ns": total, "mean_ns": 0.0, "median_ns": None,
                        "minimum_ns": 0, "maximum_ns": 0, "stddev_ns": None, "share": 0.0})
        bases.append({"base_name": name, "names": 1, "instances": counted + 1,
                      "total_ns": total, "iteration_launches": counted,
                      "iteration_total_ns": inside, "per_iteration_ns": inside / counted,
                      "launched_by": [{"group": "step.stage_aa", "total_ns": inside}]})
    copies = [{"copy_kind": kind, "source": src, "destination": dst, "count": counted + 1,
               "bytes": 1 << 20, "total_ns": round(total), "bandwidth_bytes_per_s": None,
               "pageable_host": src == "Pageable" or dst == "Pageable",
               "iteration_count": None, "iteration_bytes": None, "iteration_total_ns": None,
               "per_iteration_ns": None}
              for (kind, src, dst, _), total in zip(COPY_LEVELS, run["copies"])]
    return {"devices": [{"device": "NVIDIA A100-SXM4-80GB (0)",
                         "name": "NVIDIA A100-SXM4-80GB", "id": 0,
                         "kernels": len(kernels), "memory_operations": len(copies)}],
            "kernels": kernels, "kernels_by_base_name": bases, "memory_copies": copies,
            "memsets": None, "iteration_kernels": None, "per_range_kernels": None,
            "kernel_attribution": None, "unavailable": {}}


def group_of(name: str) -> str:
    """A range's group: each run of digits written `#`."""
    out, digits = [], False
    for c in name:
        if c.isdigit():
            if not digits:
                out.append("#")
            digits = True
        else:
            out.append(c)
            digits = False
    return "".join(out)


def steady_state_json(run: dict, specs: list[tuple[str, float, bool]]) -> dict:
    """`steady_state` of a run whose iteration 0 is slow: the other counted iterations'
    host statistics and range groups (token 0's ranges left out, every pass's ranges less
    their share of one pass)."""
    counted = run["counted"]
    groups: dict[str, list[int]] = {}
    for (name, _, every), total in zip(specs, run["ranges"]):
        if not every and "_token_0." not in name and not name.endswith("_token_0"):
            kept = total
        elif every:
            kept = round(total * (counted - 1) / counted)
        else:
            continue
        g = groups.setdefault(group_of(name), [0, 0, 0])
        g[0] += 1
        g[1] += counted - 1 if every else 1
        g[2] += kept
    def group_stats(total: int, instances: int) -> dict:
        return {"total_ns": total, "mean_ns": total / max(1, instances), "minimum_ns": 0,
                "maximum_ns": 0}
    steady_host = run["host"][1:counted]
    return {
        "left_out": [0],
        "host_inclusive": iteration_stats(len(steady_host), sum(steady_host)),
        "host_range_groups": [
            {"group": g, "names": names, "instances": instances,
             "inclusive": group_stats(total, instances),
             "exclusive": group_stats(total, instances)}
            for g, (names, instances, total) in sorted(groups.items())],
        "gpu_projected_range_groups": [],
    }


def analysis_json(run: dict, specs: list[tuple[str, float, bool]], run_id: str, commit: str,
                  ci_run: int, runner: str, gpu_uuid: str = "", steady: bool = True) -> str:
    """An analysis.json the tool accepts (the shape of crates/core/src/artifact/fake.rs)."""
    host, gpu, counted = run["host"], run["gpu"], run["counted"]
    # The iterations, as json.dumps would write them (a template: the bulk of the file, and
    # three times faster than serializing a dict per iteration).
    iterations = []
    start = 0
    for i, ns in enumerate(host):
        projection = "null"
        if gpu is not None:
            projection = GPU_JSON % (start, start + gpu[i], gpu[i])
        complete = "true" if i < counted else "false"
        iterations.append(ITERATION_JSON % (i, i + 2, complete, start, start + ns, ns, ns,
                                            projection))
        start += ns
    host_ranges = [
        {"name": name, "path": name.split("."), "instances": counted if every else 1,
         "inclusive": stats(total), "exclusive": stats(total), "child_total_ns": 0}
        for (name, _, every), total in zip(specs, run["ranges"])
    ]
    gpu_ranges = []
    if gpu is not None:
        scale = GPU_LEVEL_NS / HOST_LEVEL_NS
        gpu_ranges = [
            {"name": name, "path": name.split("."), "style": "PushPop",
             "instances": counted if every else 1,
             "projected": stats(round(total * scale)), "host_total_ns": total,
             "gpu_operation_count": counted}
            for (name, _, every), total in zip(specs, run["ranges"])
        ]
    warnings = [] if gpu is not None else [
        {"code": "gpu_projection_unavailable", "gating": False, "message": "no CUDA"}]
    counted_host = host[:counted]
    value = {
        "schema_version": 1,
        "provenance": {"run_dir": f"/runs/{run_id}", "manifest_path": "manifest.yaml",
                       "manifest_sha256": "0", "trace_path": "trace.nsys-rep", "reports": {},
                       "report_status": {}, "nsys_version": "2024.2.3.38-242334140272v0",
                       "legacy_reports": False, "stats_reused": False,
                       "tool_version": "0.1.0", "ci_run": {"id": ci_run, "attempt": 1},
                       "runner": runner},
        "run": {"profile_name": "sim", "run_id": run_id,
                "target": {"import_path": None, "name": "sim", "profile_prepare": False},
                "device": "cuda:0", "git_commit": commit, "command_line": None,
                "capture_range": "profile-target", "iteration_pattern": "^iteration (\\d+)$",
                "record_count": 2, "workload": {"iterations": len(host), "warmup": 1},
                "cuda": {"synchronize_each_iteration": False},
                "data_source": {"name": "dummy"}, "extra": {}},
        "gate": {"gating_codes": [], "result": "pass", "failing_codes": []},
        "warnings": warnings,
        "iteration_summary": {"expected": len(host), "found": len(host), "complete": counted,
                              "unattributed_ranges": 0,
                              "host_inclusive": iteration_stats(counted, sum(counted_host)),
                              "host_exclusive": None,
                              "gpu_projected": (iteration_stats(counted, sum(gpu[:counted]))
                                                if gpu is not None else None),
                              "first_iteration": None},
        "iterations": "@ITERATIONS@",
        "host_ranges": host_ranges,
        "gpu_projected_ranges": gpu_ranges,
    }
    work = gpu_work_json(run)
    if work is not None:
        value["gpu_work"] = work
    if run.get("cold"):
        value["warnings"].append({"code": "slow_iterations", "gating": False,
                                  "message": "iteration 0 slow", "iterations": [0]})
        if steady:
            value["steady_state"] = steady_state_json(run, specs)
    if gpu_uuid:
        value["environment"] = {
            "gpus": [{"id": 0, "name": "NVIDIA L4", "uuid": gpu_uuid, "sm_count": 58,
                      "max_clock_mhz": 2040, "memory_bytes": 24_152_899_584,
                      "compute_capability": "8.9"}],
            "driver_version": "570.172.08", "cuda_driver_version": "12.8", "cpu": None,
            "os": None, "kernel": None}
    text = json.dumps(value, separators=(",", ":"))
    return text.replace('"@ITERATIONS@"', "[" + ",".join(iterations) + "]", 1)


def make_points(rng: random.Random, case: Case) -> list[Point]:
    """The base points (oldest first), then the head's."""
    points = []
    n = case.bases
    hiccup_at = rng.randrange(n) if case.hiccup != 1.0 else -1
    on_b = sorted(rng.sample(range(n), case.b_points)) if case.b_points else []
    invalid_at = rng.randrange(n) if case.invalid else -1
    for i in range(n + 1):
        head = i == n
        factor = 1.0
        runner = "runner-1"
        if case.last_slow and i >= n - case.last_slow:
            factor *= case.slow_runner
        elif case.slow_runner_p and rng.random() < case.slow_runner_p:
            factor *= case.slow_runner
            runner = "runner-slow" if case.name_runners else f"runner-{i}"
        elif case.slow_runner_p and not case.name_runners:
            runner = f"runner-{i}"
        if case.runners:
            which = rng.randrange(2)
            runner = f"runner-{which + 1}"
            factor *= case.runners if which else 1.0
        gpu_uuid = ""
        if case.gpus:
            which = rng.randrange(2)
            if case.gpu_uuids:
                gpu_uuid = f"GPU-0000000{which + 1}-aaaa-bbbb-cccc-dddddddddddd"
            factor *= case.gpus if which else 1.0
        if case.drift_runs:
            merges = i - (n - case.drift_runs) + 1
            if head:
                merges = case.drift_runs if case.head_follows_drift else 0
            factor *= case.drift_step ** max(0, merges)
        sd = None
        b = (head and case.head_on_b) or i in on_b or (
            case.b_half and not head and rng.randrange(2) == 1)
        if b:
            runner = "runner-b"
            factor *= case.b_factor
            if on_b and i == on_b[0]:
                factor *= case.b_planted
            if case.b_sd:
                sd = case.b_sd
        if case.slots:
            runner = f"GitHub Actions {rng.randrange(case.slots) + 1}"
        if head:
            factor *= case.head_change
        elif i == hiccup_at:
            factor *= case.hiccup
        if i == n - 1:
            factor *= case.newest_off
        analyses = case.head_repeats if head else case.repeats
        counted = case.head_counted if head else ITERATIONS
        points.append(Point(factor, runner, analyses, counted, head, i == invalid_at,
                            gpu_uuid, sd))
    if case.hostile:
        # The newest base point: one artifact with 3 analyses of the head's level.
        points[n - 1] = replace(points[n - 1], factor=case.head_change, analyses=3)
    return points


def write_trial(rng: random.Random, case: Case, folder: str) -> list[str]:
    """The trial's files: a folder per base point (oldest first), then the head's folder."""
    specs = range_specs(case)
    points = make_points(rng, case)
    paths = []
    first = None
    previous = 0.0
    for p_index, point in enumerate(points):
        sd = case.noisy_sd if (case.noisy_p and rng.random() < case.noisy_p) else case.run_sd
        if point.sd is not None:
            sd = point.sd
        point_offset = offset(rng, case, sd)
        if case.ar_phi:
            # AR(1): the same standard deviation, each offset following the one before.
            if p_index > 0:
                point_offset = (case.ar_phi * previous
                                + math.sqrt(1 - case.ar_phi ** 2) * point_offset)
            previous = point_offset
        # The other legs of a matrix: offsets of their own (drawn after, so that a case of
        # one leg draws as before).
        offsets = [point_offset] + [offset(rng, case, sd) for _ in range(1, case.legs)]
        name = "head" if point.head else f"base-{p_index:03d}"
        point_dir = os.path.join(folder, name)
        os.mkdir(point_dir)
        for leg, leg_offset in enumerate(offsets):
            for r in range(point.analyses):
                run = make_analysis(rng, case, point, leg_offset)
                if case.identical:
                    # Copies of the first base analysis; the head, that copy times head_change.
                    first = first or run
                    run = first if not point.head else scaled(first, case.head_change)
                run_id = f"{name}-{r}" if not case.legs else f"{name}-{leg}-{r}"
                text = analysis_json(run, specs, run_id, f"{p_index:07x}",
                                     9_999 if point.head else 1_000 + p_index, point.runner,
                                     point.gpu_uuid, case.steady)
                folder_name = f"r{r}"
                if case.legs:
                    # The leg's name (`--label`), a top-level key of analysis.json.
                    text = text[:-1] + f',"label":"leg-{leg}"}}'
                    folder_name = f"leg{leg}-r{r}"
                os.mkdir(os.path.join(point_dir, folder_name))
                with open(os.path.join(point_dir, folder_name, "analysis.json"), "w",
                          encoding="utf-8") as f:
                    f.write(text)
        paths.append(point_dir)
    return paths


# ---------------------------------------------------------------- one trial


@dataclass
class Outcome:
    counted: bool  # what the case counts happened
    slower: bool
    faster: bool
    measure_verdict: str | None
    p_value: float | None
    detectable: float | None
    change: float | None
    change_point: bool
    drift: bool
    outliers: int
    invalid: int
    used: int
    ranges_flagged: int
    false_range_flags: int  # ranges flagged that did not change
    kernels_detectable: float | None  # the kernel table's detectable_pct


def compare(binary: str, paths: list[str]) -> dict:
    done = subprocess.run(
        [binary, "compare", *paths, "--json", "-"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"nsys-gate compare exited {done.returncode}: "
                           f"{done.stderr.strip()}")
    return json.loads(done.stdout)


def run_trial(binary: str, workdir: str, seed: int, case: Case, trial: int) -> Outcome:
    rng = random.Random(f"{seed}/{case.id}/{trial}")
    folder = tempfile.mkdtemp(prefix=f"{case.id}-{trial}-", dir=workdir)
    try:
        comparison = compare(binary, write_trial(rng, case, folder))
    except RuntimeError as e:
        raise RuntimeError(f"{case.id} trial {trial}: {e}") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    run = comparison["runs"][0]
    host = next(m for m in run["measures"] if m["name"] == "host_inclusive")
    ranges = run["host_ranges"]["changed"] + ((run.get("gpu_ranges") or {}).get("changed")
                                             or [])
    flagged = [r for r in ranges if r["verdict"] in FLAGGED]
    changed_range = range_names(case.ranges)[0] if case.range_change != 1.0 else None
    work = [item for table in ("kernels", "memory_copies")
            for item in (run.get(table) or {}).get("changed", [])]
    said = ([m["verdict"] for m in run["measures"]] + [r["verdict"] for r in ranges]
            + [w["verdict"] for w in work])
    # Every leg's (a matrix: one run per leg).
    said_anywhere = [
        item["verdict"]
        for leg in comparison["runs"]
        for item in (leg["measures"]
                     + [x for table in ("host_ranges", "gpu_ranges", "kernels",
                                        "memory_copies", "exposed_communication")
                        for x in (leg.get(table) or {}).get("changed", [])])
    ]
    if case.count in ("measure", "slower"):
        verdict = host["verdict"]
    elif case.count == "any_range":
        verdict = flagged[0]["verdict"] if flagged else "within_noise"
    elif case.count == "range0_slower":
        target = range_names(case.ranges)[0]
        verdict = next(r["verdict"] for r in run["host_ranges"]["changed"]
                       if r["name"] == target)
    elif case.count == "over3":
        verdict = "slower" if len(flagged) > 3 else "within_noise"
    elif case.count == "drift":
        verdict = "slower" if run["history"].get("drift") else "within_noise"
    elif case.count == "kernel0_first":
        first = ((run.get("kernels") or {}).get("changed") or [{}])[0]
        verdict = first["verdict"] if first.get("name") == kernel_name(0) else "within_noise"
    elif case.count == "group_first":
        first = (run["host_ranges"]["changed"] or [{}])[0]
        right = (first.get("name") == ENSURE_GROUP
                 and 6.0 <= (first.get("change_pct") or 0.0) <= 10.0)
        verdict = first["verdict"] if right else "within_noise"
    elif case.count == "newest":
        verdict = "slower" if run["history"].get("newest_moved") else "within_noise"
    elif case.count == "shift":
        verdict = "slower" if run["history"].get("change_point") else "within_noise"
    elif case.count == "run_wide":
        verdict = "slower" if run.get("run_wide") else "within_noise"
    elif case.count == "kernel0_slower":
        verdict = next((k["verdict"] for k in (run.get("kernels") or {}).get("changed", [])
                        if k["name"] == kernel_name(0)), "within_noise")
    elif case.count == "matrix":
        verdict = next((v for v in said_anywhere if v in FLAGGED), "within_noise")
    else:  # comment
        verdict = next((v for v in said if v in FLAGGED), "within_noise")
    if case.count in ("slower", "range0_slower", "drift", "over3", "kernel0_first",
                      "group_first", "newest", "shift", "run_wide", "kernel0_slower"):
        counted = verdict == "slower"
    else:
        counted = verdict in FLAGGED
    left_out = run["history"]["left_out"]
    return Outcome(
        counted=counted,
        slower=verdict == "slower",
        faster=verdict == "faster",
        measure_verdict=host["verdict"],
        p_value=host["p_value"],
        detectable=host.get("detectable_pct"),
        change=host.get("change_pct"),
        change_point=run["history"]["change_point"] is not None,
        drift=run["history"].get("drift") is not None,
        outliers=sum(1 for x in left_out if x["reason"] == "outlier"),
        invalid=sum(1 for x in left_out if x["reason"] == "invalid"),
        used=len(run["history"]["used"]),
        ranges_flagged=len(flagged),
        false_range_flags=sum(r["name"] != changed_range for r in flagged),
        kernels_detectable=(run.get("kernels") or {}).get("detectable_pct"),
    )


def run_case(pool, binary: str, workdir: str, seed: int, case: Case, trials: int):
    return list(pool.map(lambda t: run_trial(binary, workdir, seed, case, t), range(trials)))


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


WHAT = {"measure": "slower or faster", "slower": "slower", "any_range": "any range flagged",
        "range0_slower": "that range slower", "over3": "over 3 ranges flagged",
        "drift": "drift named", "comment": "anything slower or faster",
        "kernel0_first": "that kernel first and slower",
        "group_first": "that group first, slower, 6-10 %", "newest": "newest_moved said",
        "shift": "level shift named", "run_wide": "run_wide said",
        "kernel0_slower": "that kernel slower",
        "matrix": "anything slower or faster in any leg"}


def target_text(target: tuple[str, float] | None, count: str) -> str:
    if target is None:
        return "(reference)"
    kind, value = target
    if kind == "min_or_shown":
        return f"≥ {value:g} % {WHAT[count]}, or the table's detectable change shown above it"
    sign = {"max": "≤", "min": "≥", "eq": "="}[kind]
    return f"{sign} {value:g} % {WHAT[count]}"


def met(target: tuple[str, float] | None, value: float, shown: float | None = None,
        change: float = 0.0) -> str:
    """Whether `value` meets the target; "min_or_shown" also passes when the table's median
    `detectable_pct` (`shown`) is above the planted change (`change`, in %): the change is
    below what such an item can be found from, and the comment says so."""
    if target is None:
        return "—"
    kind, bound = target
    if kind == "min_or_shown":
        if value >= bound:
            return "pass"
        if shown is not None and shown > change:
            return f"pass (shown: median {shown:.1f} % > {change:g} %)"
        return "**FAIL**"
    ok = {"max": value <= bound, "min": value >= bound, "eq": value == bound}[kind]
    return "pass" if ok else "**FAIL**"


def quantile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[i]


def median(values: list[float]) -> float:
    return quantile(sorted(values), 0.5)


def default_tmpdir() -> str:
    """/dev/shm when there is one (a file system in memory: creating and removing 100,000s of
    small files there costs less than on a disk's), else the system's temporary folder."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK):
        return shm
    return tempfile.gettempdir()


def calibrate(pool, binary: str, workdir: str, seed: int, trials: int) -> list[str]:
    """detectable_pct against the smallest change (0.1-point steps) the binary calls slower
    in 80 % of trials, at run-to-run noise 1 % and 2 % with 10 base runs; and the median
    detectable_pct of 3, 5, 10 and 30 base runs."""
    rows = []
    for sd in (0.01, 0.02):
        base = Case(f"cal{sd}", "calibration", sd, count="slower")
        found: dict[int, float] = {}

        def power(tenths: int) -> float:
            if tenths not in found:
                case = replace(base, id=f"cal{sd}-{tenths}", head_change=1 + tenths / 1000)
                outcomes = run_case(pool, binary, workdir, seed, case, trials)
                found[tenths] = pct(sum(o.slower for o in outcomes), len(outcomes))
                found[-tenths] = median([o.detectable for o in outcomes
                                         if o.detectable is not None])
            return found[tenths]

        # Bisection over 0.1-point steps between 1 % and 25 %: the smallest with >= 80 %.
        lo, hi = 10, 250
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if power(mid) >= 80.0:
                hi = mid
            else:
                lo = mid
        power(hi)
        detectable = found[-hi]
        smallest = hi / 10
        ratio = detectable / smallest
        verdict = "pass" if abs(ratio - 1) <= 0.25 else "**FAIL**"
        rows.append(f"| {sd * 100:g} % | {smallest:.1f} % ({found[hi]:.1f} % slower; "
                    f"{(hi - 1) / 10:.1f} %: {found.get(hi - 1, float('nan')):.1f} %) "
                    f"| {detectable:.2f} % | {ratio:.2f} | within 25 % | {verdict} |")
    lines = ["| run-to-run noise | smallest change found 4 times in 5 (0.1-point steps) "
             "| median `detectable_pct` | ratio | target | result |",
             "| --- | ---: | ---: | ---: | --- | --- |", *rows, "",
             "| base runs | median `detectable_pct`, noise 1 % | noise 2 % |",
             "| ---: | ---: | ---: |"]
    for n in DETECTABLE_BASES:
        cells = []
        for sd in (0.01, 0.02):
            case = Case(f"det{n}-{sd}", "detectable", sd, bases=n)
            outcomes = run_case(pool, binary, workdir, seed, case, max(100, trials // 5))
            cells.append(f"{median([o.detectable for o in outcomes if o.detectable]):.1f} %")
        lines.append(f"| {n} | {cells[0]} | {cells[1]} |")
    return lines


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
                        help="also print shifts, drifts, points left out, p-values")
    parser.add_argument("--calibrate", action="store_true",
                        help="only check detectable_pct against the changes really found")
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
        if args.calibrate:
            lines = calibrate(pool, binary, workdir, args.seed, args.trials)
            print(f"Seed {args.seed}, {args.trials} trials a step, "
                  f"{time.monotonic() - started:.0f} s in all.\n")
            print("\n".join(lines))
            return 0
        for case in cases:
            t0 = time.monotonic()
            outcomes = run_case(pool, binary, workdir, args.seed, case, args.trials)
            n = len(outcomes)
            hits = sum(o.counted for o in outcomes)
            value = pct(hits, n)
            lo, hi = wilson(hits, n)
            shown = [o.kernels_detectable for o in outcomes if o.kernels_detectable is not None]
            verdict = met(case.target, round(value, 1), median(shown) if shown else None,
                          round((case.kernel_change - 1.0) * 100, 6))
            if verdict == "**FAIL**":
                missed.append(case.id)
            rows.append(
                f"| {case.id} | {case.title} | {n} | {value:.1f} ({lo:.1f}–{hi:.1f}) "
                f"| {pct(sum(o.slower for o in outcomes), n):.1f} "
                f"| {pct(sum(o.faster for o in outcomes), n):.1f} "
                f"| {target_text(case.target, case.count)} | {verdict} |")
            ps = sorted(o.p_value for o in outcomes if o.p_value is not None)
            unknown = sum(o.measure_verdict == "noise_unknown" for o in outcomes)
            used = sorted(o.used for o in outcomes)
            detectable = [o.detectable for o in outcomes if o.detectable is not None]
            changes = [o.change for o in outcomes if o.change is not None]
            details.append(
                f"| {case.id} | {pct(sum(o.change_point for o in outcomes), n):.1f} "
                f"| {pct(sum(o.drift for o in outcomes), n):.1f} "
                f"| {pct(sum(o.outliers > 0 for o in outcomes), n):.1f} "
                f"| {pct(sum(o.invalid > 0 for o in outcomes), n):.1f} "
                f"| {quantile(used, 0.5):g} ({used[0]}–{used[-1]}) "
                f"| {pct(unknown, n):.1f} "
                f"| {quantile(ps, 0.1):.3g} / {quantile(ps, 0.5):.3g} / {quantile(ps, 0.9):.3g} "
                f"| {sum(o.ranges_flagged for o in outcomes) / n:.2f} "
                f"| {pct(sum(o.false_range_flags > 0 for o in outcomes), n):.1f} "
                f"| {median(detectable) if detectable else float('nan'):.2f} "
                f"| {median(changes) if changes else float('nan'):.2f} "
                f"| {time.monotonic() - t0:.0f} s |")
    elapsed = time.monotonic() - started

    print(f"Seed {args.seed}, {args.trials} trials per case, {args.jobs} jobs, "
          f"{elapsed:.0f} s in all.\n")
    print("| case | what | trials | % counted (95 % interval) | % slower | % faster "
          "| target | result |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | --- |")
    print("\n".join(rows))
    if args.details:
        print()
        print("| case | % level shift named | % drift named | % with outliers left out "
              "| % with invalid runs left out | points used: median (min–max) "
              "| % noise_unknown | host p-value 10 % / 50 % / 90 % | ranges flagged per trial "
              "| % with an unchanged range flagged | median detectable_pct "
              "| median host change_pct | time |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
              "| ---: | ---: |")
        print("\n".join(details))
    if args.trials < 1000:
        print(f"\nWith {args.trials} trials a case the figures are rough (see the intervals): "
              "pass/fail says little; the targets are for 1,000 trials or more.")
    if missed:
        print(f"\nMissed: {', '.join(missed)}", file=sys.stderr)
    return 1 if (missed and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
