#!/usr/bin/env bash
# Times `nsys-gate compare BASE... HEAD` over a long history: 100 base analyses and one head of
# 20,000 counted iterations each (about 7 MB of analysis.json apiece), with peak memory.
#
#   scripts/bench-compare.sh [--runs N] [--against BIN]
#
# The analyses are generated once and cached under target/bench-compare/: the gpu-work fixture
# analysed by this nsys-gate with real nsys 2024.2 (scripts/install-nsys.sh) gives their shape,
# scaled up by scripts/lib/bench-compare-gen.py (a few dozen host ranges, a GPU projection,
# gpu_work with a few kernels and copy groups; each base run its own level, about 1 % apart;
# the head 3 % slower). They are generated again when the generator changes.
#
# Measured (release build): hyperfine when it is installed (N runs, default 5, after one
# warm-up; median wall time), then N runs under /usr/bin/time for the peak resident set size
# (`Maximum resident set size`; median and largest). With --against BIN (another nsys-gate,
# e.g. a build of an older commit) the two binaries are instead taken in turn, N pairs, each
# run under /usr/bin/time: medians of wall time and peak memory of each, and their ratios.
#
# Environment: BENCH_RUNS (base runs, default 100), BENCH_ITERATIONS (default 20000).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=5 against=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --against) against=$(realpath "$2"); shift 2 ;;
    *) echo "usage: scripts/bench-compare.sh [--runs N] [--against BIN]" >&2; exit 2 ;;
  esac
done
bases=${BENCH_RUNS:-100}
iterations=${BENCH_ITERATIONS:-20000}
repo=$(pwd)
cargo build --release --locked --quiet
gate="$repo/target/release/nsys-gate"
cache="$repo/target/bench-compare"

# The shape: the gpu-work fixture analysed (in a folder of its name, as its manifest says).
template="$cache/template/gpu-work/analysis.json"
if [ ! -f "$template" ]; then
  nsys=$(scripts/install-nsys.sh 2024.2 | tail -n 1)
  rm -rf "$cache/template"; mkdir -p "$cache/template"
  cp -r tests/fixtures/gpu-work "$cache/template/gpu-work"
  "$gate" analyze --run-dir "$cache/template/gpu-work" --nsys "$nsys" >/dev/null
fi

data="$cache/r$bases-i$iterations"
stamp=$(cat scripts/lib/bench-compare-gen.py "$template" | sha256sum | cut -c1-16)
if [ "$(cat "$data/.complete" 2>/dev/null)" != "$stamp" ]; then
  echo "bench-compare: generating $bases base runs and a head of $iterations iterations in $data" >&2
  rm -rf "$data"
  python3 scripts/lib/bench-compare-gen.py "$template" "$data" --runs "$bases" --iterations "$iterations"
  echo "$stamp" > "$data/.complete"
fi
paths=()
for ((n = 0; n < bases; n++)); do paths+=("$data/base/$(printf 'run-%03d' "$n")/analysis.json"); done
paths+=("$data/head/analysis.json")
mb=$(du -cm "${paths[@]}" | tail -n 1 | cut -f1)
echo "bench-compare: $bases base runs + 1 head, $iterations iterations each, $mb MB of analysis.json" >&2

# timed BIN: one compare run under /usr/bin/time; prints "SECONDS KIB".
timed() {
  /usr/bin/time -f "%e %M" -o "$data/.time" "$1" compare "${paths[@]}" >/dev/null 2>"$data/.stderr" \
    || { cat "$data/.stderr" >&2; exit 1; }
  cat "$data/.time"
}
# summary LABEL: median wall time and peak RSS of "SECONDS KIB" lines on standard input.
summary() {
  python3 -c '
import statistics, sys
rows = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
t = [r[0] for r in rows]; m = [r[1] / 1024 for r in rows]
print("%s: wall median %.2f s (%s); peak RSS median %.1f MiB, largest %.1f MiB (of %d runs)"
      % (sys.argv[1], statistics.median(t), " ".join("%.2f" % x for x in t), statistics.median(m), max(m), len(rows)))
' "$1"
}

if [ -n "$against" ]; then
  new="" old=""
  for ((i = 0; i < runs; i++)); do
    old+="$(timed "$against")"$'\n'
    new+="$(timed "$gate")"$'\n'
  done
  summary "against ($against)" <<<"$old"
  summary "this build" <<<"$new"
  python3 -c '
import statistics, sys
old = [tuple(map(float, l.split())) for l in sys.argv[1].splitlines() if l.strip()]
new = [tuple(map(float, l.split())) for l in sys.argv[2].splitlines() if l.strip()]
med = lambda rows, k: statistics.median(r[k] for r in rows)
print("ratio this build / against: wall %.3f, peak RSS %.3f" % (med(new, 0) / med(old, 0), med(new, 1) / med(old, 1)))
' "$old" "$new"
else
  if command -v hyperfine >/dev/null; then
    hyperfine --runs "$runs" --warmup 1 --style basic --export-json "$data/.hyperfine.json" \
      -n "nsys-gate compare ($bases bases, $iterations iterations)" \
      "$(printf '%q ' "$gate" compare "${paths[@]}") >/dev/null" >&2
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print("hyperfine: median %.2f s (mean %.2f, min %.2f, max %.2f; %d runs)" % (r["median"], r["mean"], r["min"], r["max"], len(r["times"])))
' "$data/.hyperfine.json"
  fi
  out=""
  for ((i = 0; i < runs; i++)); do out+="$(timed "$gate")"$'\n'; done
  summary "/usr/bin/time" <<<"$out"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
