#!/usr/bin/env python3
"""The 2-core floor of a run directory's `nsys stats` reports, and `nsys-gate analyze` against it
(Python 3.11 standard library).

    scripts/bench-floor.py GATE NSYS RUN_DIR... [--repeat 3] [--runs 3] [--baseline GATE] [--json FILE]

For each run directory (one trace, or one trace per rank):

1. `analyze` once (through a wrapper that logs its nsys calls), to learn which reports this nsys
   is asked for and how (the stamp's reports, less the ones not asked);
2. in rounds (`--repeat`, default 3), so that both see the machine of the same minutes: the
   reports alone, then `analyze`. The floor: each trace's SQLite export made alone (`nsys
   export`; none for a `.sqlite` trace), then each report run alone over it as `analyze` asks
   for it (`nsys stats --report R --format csv --timeunit nsec`, `csv:mem=B` for
   `cuda_gpu_trace`), each its best round. On two cores the reports cannot end before the
   longest chain (a trace's export, then its longest report) nor before half of all the work
   (the exports and every report):

       floor = max(max over traces (export + longest report), (exports + reports) / 2)

   and for one trace, whose export nothing can run beside, export + max(longest report, half
   the reports' sum): for one `.sqlite` trace the larger of the longest report and half their
   sum;
3. `analyze` (once a round, each writing a new analysis.json): wall time, best and median,
   against the floor; the peak resident memory of the largest process of the run (nsys-gate or
   one of its nsys processes, `/usr/bin/time`'s %M) and of nsys-gate's own reading and analysis
   (`analyze --reuse-stats` on the CSVs the run left). With `--baseline GATE` (another build),
   that build's `analyze` too, in the same rounds, the two in turns (which goes first
   alternates), so that a change is measured against the build before it on the machine of the
   same minutes.

For a `.sqlite` trace (no export to wait for), each round also starts the very `nsys stats`
processes `analyze` starts (their arguments learnt in step 1 through a wrapper that logs them),
all at once and with nothing of nsys-gate around them: "bare". Against the floor, bare is what
two cores give nsys's own processes this minute; `analyze` against bare (the median of each
round's ratio) is what nsys-gate adds (identifying nsys, reading, analysing, writing).

Beside each `analyze`: the CPU the rest of the machine used meanwhile, in cores (the
machine's busy time from /proc/stat less `analyze`'s own and its processes'). The floor
assumes two free cores; where the kernel groups processes by session (autogroup,
/proc/sys/kernel/sched_autogroup_enabled), one busy process of another session takes a whole
core from `analyze`'s three nsys processes, but none from a report run alone, so a run with
other work beside it measures that, not the scheduling.

Prints one block per run directory and the load average before and after.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def timed(command, cwd=None):
    start = time.monotonic()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.monotonic() - start


def best(command, repeat, cwd=None):
    return min(timed(command, cwd) for _ in range(repeat))


def traces_of(run_dir):
    names = sorted(n for n in os.listdir(run_dir)
                   if n.endswith(".nsys-rep") or (n.endswith(".sqlite") and n.startswith("trace")))
    if not names:
        sys.exit("no trace in " + run_dir)
    return names


def asked_reports(run_dir):
    """The reports `analyze` asked nsys for, from its stamp (of the first trace's stats)."""
    stats = os.path.join(run_dir, "stats")
    stamp = os.path.join(stats, "nsys-gate-stats.json")
    if not os.path.exists(stamp):
        first = sorted(d for d in os.listdir(stats) if os.path.isdir(os.path.join(stats, d)))[0]
        stamp = os.path.join(stats, first, "nsys-gate-stats.json")
    reports = json.load(open(stamp))["reports"]
    return [name for name, s in reports.items()
            if not (s.get("message") or "").startswith("not asked") and "has no `" not in (s.get("message") or "")]


def alone(nsys, run_dir, reports, scratch):
    """Each trace's export and reports alone, once: {trace: (export s, {report: s})}."""
    per_trace = {}
    for trace in traces_of(run_dir):
        path = os.path.join(run_dir, trace)
        if trace.endswith(".sqlite"):
            export, sqlite = 0.0, path
        else:
            sqlite = os.path.join(scratch, "export.sqlite")
            export = timed([nsys, "export", "--type", "sqlite", "--force-overwrite=true", "-o", sqlite, path])
        times = {}
        for report in reports:
            fmt = "csv:mem=B" if report == "cuda_gpu_trace" else "csv"
            # a report that finds no data in this trace ends with a non-zero status: its time counts
            start = time.monotonic()
            subprocess.run([nsys, "stats", "--report", report, "--format", fmt, "--timeunit", "nsec",
                            "--output", os.path.join(scratch, "r"), "--force-overwrite=true", sqlite],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[report] = time.monotonic() - start
        per_trace[trace] = (export, times)
    return per_trace


WRAPPER = """#!/bin/sh
# logs one nsys call (working folder, then each argument, NUL-terminated), then runs nsys
f=$(mktemp "$BENCH_CALLS/call.XXXXXX")
{ printf '%s\\0' "$(pwd)"; for a in "$@"; do printf '%s\\0' "$a"; done; } > "$f"
exec "$BENCH_REAL" "$@"
"""


def learn_calls(gate, nsys, run_dir):
    """`analyze` once through a wrapper that logs each nsys call: the `nsys stats` processes it
    starts, as [(working folder, arguments)]. (Not `NSYS_*` variables: nsys reads some.)"""
    with tempfile.TemporaryDirectory() as d:
        wrapper = os.path.join(d, "nsys")
        with open(wrapper, "w") as f:
            f.write(WRAPPER)
        os.chmod(wrapper, 0o755)
        calls_dir = os.path.join(d, "calls")
        os.mkdir(calls_dir)
        env = dict(os.environ, BENCH_CALLS=calls_dir, BENCH_REAL=nsys)
        subprocess.run([gate, "analyze", "--run-dir", run_dir, "--nsys", wrapper], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        calls = []
        for name in sorted(os.listdir(calls_dir)):
            cwd, *args = open(os.path.join(calls_dir, name), "rb").read().decode().split("\0")[:-1]
            if args[:1] == ["stats"] and "--report" in args:
                calls.append((cwd, args))
        return calls


def bare_calls(calls, nsys, scratch):
    """The calls as the bench starts them, outputs under `scratch`; None when one waits for an
    export (a `.nsys-rep`): only calls that all start at once are replayed."""
    if any("--sqlite" in args or not args[-1].endswith(".sqlite") for _, args in calls):
        return None
    bare = []
    for k, (cwd, args) in enumerate(calls):
        args = list(args)
        args[args.index("--output") + 1] = os.path.join(scratch, "bare%d" % k)
        bare.append((cwd, [nsys] + args))
    return bare


def bare_once(bare):
    """Wall time of the calls started at once, until the last ends."""
    start = time.monotonic()
    processes = [subprocess.Popen(c, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for cwd, c in bare]
    for p in processes:
        p.wait()
    return time.monotonic() - start


def floor(per_trace):
    """The 2-core floor of the best times: (floor, longest chain, all work)."""
    longest = max(e + max(t.values()) for e, t in per_trace.values())
    total = sum(e + sum(t.values()) for e, t in per_trace.values())
    if len(per_trace) == 1:
        # one trace: nothing can run beside its export, so the second core waits for it
        (e, t), = per_trace.values()
        return e + max(max(t.values()), sum(t.values()) / 2), longest, total
    return max(longest, total / 2), longest, total


def best_of(rounds):
    """Each export and report's best time over the rounds."""
    best = {}
    for per_trace in rounds:
        for trace, (e, t) in per_trace.items():
            if trace not in best:
                best[trace] = (e, dict(t))
            else:
                be, bt = best[trace]
                best[trace] = (min(be, e), {r: min(bt[r], t[r]) for r in bt})
    return best


def busy_ticks():
    """The machine's (busy, all) CPU time so far, in clock ticks (/proc/stat)."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:9]]
    return sum(f) - f[3] - f[4], sum(f)


def analyze_once(gate, nsys, run_dir, reuse=False):
    """(wall s, peak MiB, cores the rest of the machine used meanwhile, cores analyze used)."""
    with tempfile.NamedTemporaryFile() as t:
        command = ["/usr/bin/time", "-f", "%e %M %U %S", "-o", t.name, gate, "analyze", "--run-dir", run_dir]
        command += ["--reuse-stats"] if reuse else ["--nsys", nsys]
        busy0, _ = busy_ticks()
        start = time.monotonic()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.monotonic() - start
        busy1, _ = busy_ticks()
        fields = open(t.name).read().split()
        peak = int(fields[-3]) / 1024
        own = float(fields[-2]) + float(fields[-1])
        others = max(0.0, (busy1 - busy0) / os.sysconf("SC_CLK_TCK") - own) / wall
        return wall, peak, others, own / wall


def describe(label, runs, fl):
    walls = sorted(w for w, _, _, _ in runs)
    return ("  %s: best %.2f s, median %.2f s (%s): %.3fx / %.3fx the floor; cores used by analyze %s, by the rest of the machine %s"
            % (label, walls[0], statistics.median(walls), " ".join("%.2f" % w for w, _, _, _ in runs),
               walls[0] / fl, statistics.median(walls) / fl, " ".join("%.2f" % c for _, _, _, c in runs),
               " ".join("%.1f" % o for _, _, o, _ in runs)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("gate")
    p.add_argument("nsys")
    p.add_argument("run_dirs", nargs="+")
    p.add_argument("--repeat", type=int, default=3, help="rounds: each report alone, then analyze (the best counts)")
    p.add_argument("--runs", type=int, default=3, help="at least this many runs of analyze")
    p.add_argument("--baseline", help="another build of nsys-gate, timed in the same rounds")
    p.add_argument("--json", help="write the figures here")
    a = p.parse_args()
    a.nsys = os.path.abspath(a.nsys)
    print("load average before: " + open("/proc/loadavg").read().strip())
    results = {}
    for run_dir in a.run_dirs:
        run_dir = os.path.abspath(run_dir)
        calls = learn_calls(a.gate, a.nsys, run_dir)
        reports = asked_reports(run_dir)
        # in rounds, each the reports alone then analyze: both see the machine of the same minutes
        rounds, runs, base_runs, bares = [], [], [], []
        with tempfile.TemporaryDirectory(dir=run_dir) as scratch:
            bare = bare_calls(calls, a.nsys, scratch)
            for k in range(max(a.repeat, a.runs)):
                rounds.append(alone(a.nsys, run_dir, reports, scratch))
                if bare:
                    bares.append(bare_once(bare))
                if a.baseline and k % 2 == 1:
                    base_runs.append(analyze_once(a.baseline, a.nsys, run_dir))
                runs.append(analyze_once(a.gate, a.nsys, run_dir))
                if a.baseline and k % 2 == 0:
                    base_runs.append(analyze_once(a.baseline, a.nsys, run_dir))
        per_trace = best_of(rounds)
        fl, longest, total = floor(per_trace)
        walls = sorted(w for w, _, _, _ in runs)
        reuse = [analyze_once(a.gate, a.nsys, run_dir, reuse=True) for _ in range(3)]
        print("%s: %d trace(s), reports %s" % (run_dir, len(per_trace), ", ".join(reports)))
        for trace, (export, times) in per_trace.items():
            print("  %s: export %.2f s; %s" % (trace, export, ", ".join("%s %.2f s" % kv for kv in times.items())))
        print("  floor %.2f s (longest chain %.2f s, all work %.2f s / 2 = %.2f s)" % (fl, longest, total, total / 2))
        print(describe("analyze", runs, fl))
        if base_runs:
            print(describe("baseline", base_runs, fl))
        if bares:
            pairs = [r[0] / b for r, b in zip(runs, bares)]
            print("  bare (analyze's %d nsys stats processes at once, no nsys-gate): best %.2f s, median %.2f s (%s): %.3fx / %.3fx the floor; analyze / bare, each round: %s (median %.3fx)"
                  % (len(bare), min(bares), statistics.median(bares), " ".join("%.2f" % b for b in bares),
                     min(bares) / fl, statistics.median(bares) / fl, " ".join("%.2f" % r for r in pairs),
                     statistics.median(pairs)))
        print("  peak memory: largest process of the run %.1f MiB; nsys-gate's reading and analysis (--reuse-stats) %.1f MiB, %.2f s"
              % (max(r[1] for r in runs), max(r[1] for r in reuse), min(r[0] for r in reuse)))
        results[run_dir] = {"reports": reports, "per_trace": per_trace, "floor_s": fl, "longest_s": longest,
                            "total_s": total, "analyze_s": [r[0] for r in runs],
                            "others_cores": [r[2] for r in runs], "analyze_cores": [r[3] for r in runs],
                            "baseline_s": [r[0] for r in base_runs], "bare_s": bares,
                            "peak_mib": max(r[1] for r in runs),
                            "reuse_peak_mib": max(r[1] for r in reuse)}
    print("load average after: " + open("/proc/loadavg").read().strip())
    if a.json:
        json.dump(results, open(a.json, "w"), indent=2)


if __name__ == "__main__":
    main()
