#!/usr/bin/env bash
# Measures what a full `nsys-gate analyze` costs over the bare `nsys stats` call it makes, on a
# real trace with about a million NVTX ranges recorded from the test harness.
#
#   scripts/bench-nsys.sh [ITERATIONS]     (default 166667 passes: about 1,000,000 ranges)
#
# Needs nsys 2024.2 (scripts/install-nsys.sh) and gcc; builds nsys-gate in release mode.
# Takes a few minutes: nsys itself needs about a minute per million ranges. Nothing is kept.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$(pwd)
iterations=${1:-166667}

nsys=$(scripts/install-nsys.sh 2024.2)
prefix="$repo/.nsys/2024.2/prefix"
nvtx="$prefix/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nvtx/include"
cargo build --release --locked --quiet
gate="$repo/target/release/nsys-gate"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -std=c11 -I "$nvtx" -o "$work/harness" tests/harness/harness.c -ldl -pthread

echo "bench-nsys: recording $iterations passes with nsys 2024.2 (no waits)" >&2
(
  cd "$work"
  env -i PATH=/usr/bin:/bin HOME="$work" NSYS_NVTX_PROFILER_REGISTER_ONLY=0 \
    "$nsys" profile --trace=nvtx --sample=none --cpuctxsw=none \
    --capture-range=nvtx --nvtx-capture='profile-target@*' --capture-range-end=stop \
    -o trace ./harness --no-wait --warmup 1 --iterations "$iterations" >/dev/null
  if [ ! -f trace.nsys-rep ]; then
    LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu" \
      "$prefix/usr/lib/nsight-systems/host-linux-x64/QdstrmImporter" -i trace.qdstrm >/dev/null
  fi
)

run="$work/runs/big"
mkdir -p "$run"
mv "$work/trace.nsys-rep" "$run/trace.nsys-rep"
sed -e "s/^  iterations: 5$/  iterations: $iterations/" \
    -e "s#runs/clean/trace.nsys-rep#runs/big/trace.nsys-rep#" \
    tests/fixtures/clean/manifest.yaml > "$run/manifest.yaml"

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
ranges=$(($(wc -l < "$run/stats/nsys_nvtx_pushpop_trace.csv") - 1))
echo "ranges in the push/pop report: $ranges"
echo "bare nsys stats (best of 2):   $best_stats s"
echo "nsys-gate analyze (best of 2): $best_gate s"
awk -v g="$best_gate" -v s="$best_stats" 'BEGIN { printf "overhead: %.1f %%\n", (g - s) * 100 / s }'
