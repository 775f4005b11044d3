#!/usr/bin/env bash
# Measures what a full `nsys-gate analyze` costs over the bare `nsys stats` call it makes, on a
# real trace with about a million NVTX ranges recorded from the test harness.
#
#   scripts/bench-nsys.sh [--keep DIR] [ITERATIONS]   (default 166667 passes: about 1,000,000 ranges)
#
# Then times `nsys-gate analyze --reuse-stats` on the CSVs nsys wrote (best and median of 5, peak
# memory per push/pop row): the analysis alone, on reports as nsys really writes them, each run
# writing a new analysis.json (replacing an old one adds the file system's work of freeing it).
#
# Needs nsys 2024.2 (scripts/install-nsys.sh) and gcc; builds nsys-gate in release mode.
# Takes a few minutes: nsys itself needs about a minute per million ranges. Nothing is kept
# unless --keep DIR is given (the run directory is then left in DIR/big).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
keep=""
if [ "${1:-}" = "--keep" ]; then keep=$(realpath -m "$2"); shift 2; fi
iterations=${1:-166667}
# shellcheck source=scripts/lib/bench-setup.sh
source scripts/lib/bench-setup.sh

echo "bench-nsys: recording $iterations passes with nsys 2024.2 (no waits)" >&2
record_harness --warmup 1 --iterations "$iterations"

run="$work/runs/big"
mkdir -p "$run"
mv "$work/trace.nsys-rep" "$run/trace.nsys-rep"
write_manifest "$run" trace.nsys-rep "$iterations"

seconds() { local start end; start=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; end=$(date +%s.%N); awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

best_stats=""; best_gate=""
for attempt in 1 2; do
  bare="$work/bare"; rm -rf "$bare"; mkdir -p "$bare"
  t=$(seconds "$nsys" stats --report nvtx_pushpop_trace,nvtx_gpu_proj_trace --format csv --timeunit nsec \
        --output "$bare/nsys" --sqlite "$bare/trace.sqlite" --force-export=true --force-overwrite=true \
        "$run/trace.nsys-rep")
  echo "bench-nsys: attempt $attempt: bare nsys stats $t s" >&2
  if [ -z "$best_stats" ] || lt "$t" "$best_stats"; then best_stats=$t; fi
  rm -rf "$run/stats" "$run/analysis.json"
  t=$(seconds "$gate" analyze --run-dir "$run" --nsys "$nsys")
  echo "bench-nsys: attempt $attempt: nsys-gate analyze $t s" >&2
  if [ -z "$best_gate" ] || lt "$t" "$best_gate"; then best_gate=$t; fi
done
reuse=()
for attempt in 1 2 3 4 5; do
  rm -f "$run/analysis.json"
  /usr/bin/time -f "%e %M" -o "$work/time" "$gate" analyze --reuse-stats --run-dir "$run" --nsys "$nsys" >/dev/null 2>&1 || true
  reuse+=("$(cat "$work/time")")
done
ranges=$(($(wc -l < "$run/stats/nsys_nvtx_pushpop_trace.csv") - 1))
pushpop_mb=$(awk -v b="$(stat -c %s "$run/stats/nsys_nvtx_pushpop_trace.csv")" 'BEGIN { printf "%.1f", b / 1e6 }')
proj_mb=$(awk -v b="$(stat -c %s "$run/stats/nsys_nvtx_gpu_proj_trace.csv")" 'BEGIN { printf "%.1f", b / 1e6 }')
echo "ranges in the push/pop report: $ranges"
echo "bare nsys stats (best of 2):   $best_stats s"
echo "nsys-gate analyze (best of 2): $best_gate s"
awk -v g="$best_gate" -v s="$best_stats" 'BEGIN { printf "overhead: %.1f %%\n", (g - s) * 100 / s }'
echo "CSVs: push/pop $pushpop_mb MB, projection $proj_mb MB"
printf '%s\n' "${reuse[@]}" | sort -n | awk -v n="$ranges" '
  { t[NR] = $1; if ($2 > m) m = $2 }
  END { printf "nsys-gate analyze --reuse-stats: best %.2f s, median %.2f s (of %d); peak %.1f MiB, %.0f bytes per push/pop row\n",
               t[1], t[int((NR + 1) / 2)], NR, m / 1024, m * 1024 / n }'
if [ -n "$keep" ]; then ln -sfn "$run" "$keep/big"; echo "kept: $keep/big"; fi
