#!/usr/bin/env python3
"""Two builds of nsys-gate measured in turn on the same inputs (Python 3.11 standard library).

On a shared machine single runs move by 20 % from one minute to the next, so the two builds are
taken in turn (A B A B ...), and each is also counted in instructions (callgrind: the same count
on every run, whatever the load).

    # the analyze benchmark's pipeline, in its child mode, on the run directories that
    # `cargo bench --bench analyze -- --keep DIR` left (DIR/<rows>/clean):
    scripts/bench-pair.py bench OLD_BENCH_BINARY NEW_BENCH_BINARY DIR [--pairs 7] [--callgrind]
    # `nsys-gate analyze --reuse-stats` of two release binaries on run directories:
    scripts/bench-pair.py cli OLD_NSYS_GATE NEW_NSYS_GATE RUN_DIR... [--pairs 7] [--callgrind]

Prints, per input, the median of each measure for each build, the ratio new/old of the
medians, the median of the pairs' ratios, and with --callgrind the instruction counts and
their ratio. A bench binary is target/release/deps/analyze-* after `cargo bench --bench analyze
--no-run` (the newest one); build the old commit in a worktree of its own with its own target
folder.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def bench_once(binary, run_dir, written):
    out = subprocess.run([binary, "--child", "--written", str(written), "--dir", run_dir],
                         capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("result "))
    fields = dict(kv.split("=", 1) for kv in line.split()[1:])
    return {"pipeline s": float(fields["pipeline_s"]), "render s": float(fields["render_s"]),
            "peak MiB": int(fields["peak_kib"]) / 1024}


def cli_once(binary, run_dir):
    with tempfile.NamedTemporaryFile() as t:
        start = time.monotonic()
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t.name, binary, "analyze",
                        "--reuse-stats", "--run-dir", run_dir],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.monotonic() - start
        return {"wall s": wall, "peak MiB": int(open(t.name).read().split()[-1]) / 1024}


def instructions(command):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "callgrind.out")
        run = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + command,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        m = re.search(r"Collected : (\d+)", run.stderr)
        if not m:
            sys.exit("callgrind failed: " + run.stderr[-2000:])
        return int(m.group(1))


def report(name, old, new):
    print("%s (%d pairs)" % (name, len(old)))
    for key in old[0]:
        o = [r[key] for r in old]
        n = [r[key] for r in new]
        print("  %-11s old median %9.3f  new median %9.3f  new/old %.3f  (pairs' ratios: median %.3f)"
              % (key, statistics.median(o), statistics.median(n), statistics.median(n) / statistics.median(o),
                 statistics.median(b / a for a, b in zip(o, n))))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["bench", "cli"])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--callgrind", action="store_true")
    args = parser.parse_args()
    if args.mode == "bench":
        root = args.inputs[0]
        cases = []
        for size in sorted(os.listdir(root), key=lambda s: int(s) if s.isdigit() else 0):
            run_dir = os.path.join(root, size, "clean")
            if not os.path.isdir(run_dir):
                continue
            with open(os.path.join(run_dir, "stats", "nsys_nvtx_pushpop_trace.csv"), "rb") as f:
                written = sum(1 for _ in f) - 1
            cases.append(("%s push/pop rows" % size, lambda b, d=run_dir, w=written: bench_once(b, d, w),
                          lambda b, d=run_dir, w=written: [b, "--child", "--written", str(w), "--dir", d]))
    else:
        cases = [(d, lambda b, d=d: cli_once(b, d),
                  lambda b, d=d: [b, "analyze", "--reuse-stats", "--run-dir", d]) for d in args.inputs]
    for name, once, command in cases:
        old, new = [], []
        for _ in range(args.pairs):
            old.append(once(args.old))
            new.append(once(args.new))
        report(name, old, new)
        if args.callgrind:
            o, n = instructions(command(args.old)), instructions(command(args.new))
            print("  instructions old %d  new %d  new/old %.4f" % (o, n, n / o))
        sys.stdout.flush()
    print("load average: " + " ".join(open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()
