#!/usr/bin/env bash
# Builds a GPU-heavy trace and times how nsys-gate runs its reports: one sequential `nsys stats`
# call against the export-once, concurrent-processes path.
#
#   scripts/bench-gpu-work.sh [--keep DIR] [PASSES]   (default 23334 passes)
#
# The trace: the NVTX harness (tests/harness/harness.c, no waits, GPU marks) recorded with nsys
# 2024.2, exported to SQLite, with synthetic CUDA work injected at the marks
# (`tests/harness/fixtures.py add-gpu-work --work full`): 23,334 passes give about 140,000
# NVTX push/pop ranges and 163,000 GPU operations (kernels, copies, memsets), in a `.sqlite`
# trace (so no export step). A second run directory holds the same recording as an NVTX-only
# `.nsys-rep` (nsys exports it; the GPU reports find no CUDA data).
#
# Measured with hyperfine when it is installed (median of 5 runs, `--export-markdown` into
# DIR/results), else with a loop (median of 5):
#   1. the sequential baseline: one `nsys stats` call with the two NVTX reports,
#      cuda_gpu_kern_sum, cuda_gpu_mem_time_sum and cuda_gpu_mem_size_sum, on the .sqlite;
#   2. `nsys-gate analyze --nsys-processes N` on the .sqlite for N = 1, 2, 3 (five reports:
#      the two NVTX reports, cuda_gpu_kern_sum, cuda_gpu_trace, cuda_api_trace);
#   3. on the NVTX-only .nsys-rep: the bare `nsys stats` call of the two NVTX reports (what
#      analyze ran before the GPU-work reports, plus its reading) against `nsys-gate analyze` (default);
#   4. what the kernels per range cost nsys-gate itself: `analyze --reuse-stats` on the CSVs
#      of (2), against the same with `cuda_api_trace` marked skipped in the stamp (no join);
#   5. interleaved: the sequential call of (1) and `analyze` (default) taken in turn, PAIRS
#      times (default 7), with the median of each and of the pairs' ratios; the same for the
#      two commands of (3). On a machine whose
#      speed drifts (a shared host), pairs taken in turn compare like with like where
#      hyperfine's blocks, minutes apart, may not.
#
# Needs nsys 2024.2 (scripts/install-nsys.sh), gcc, python3; builds nsys-gate in release mode.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
keep=""
if [ "${1:-}" = "--keep" ]; then keep=$(realpath -m "$2"); shift 2; fi
passes=${1:-23334}
# shellcheck source=scripts/lib/bench-setup.sh
source scripts/lib/bench-setup.sh

echo "bench-gpu-work: recording $passes passes with nsys 2024.2 (no waits, GPU marks)" >&2
record_harness --gpu-markers --warmup 1 --iterations "$passes"
(
  cd "$work"
  "$nsys" export --type sqlite --force-overwrite=true -o trace.sqlite trace.nsys-rep >/dev/null 2>&1
  "$nsys" export --type sqlite --lazy=false --force-overwrite=true -o schema.sqlite trace.nsys-rep >/dev/null 2>&1
)
python3 tests/harness/fixtures.py add-gpu-work --sqlite "$work/trace.sqlite" \
  --schema-from "$work/schema.sqlite" --work full >&2

mkdir -p "$work/runs/gpu" "$work/runs/nvtx" "$work/results"
mv "$work/trace.sqlite" "$work/runs/gpu/trace.sqlite"
mv "$work/trace.nsys-rep" "$work/runs/nvtx/trace.nsys-rep"
write_manifest "$work/runs/gpu" trace.sqlite "$passes"
write_manifest "$work/runs/nvtx" trace.nsys-rep "$passes"
gpu="$work/runs/gpu" rep="$work/runs/nvtx"
bare="$work/bare"; mkdir -p "$bare"

ranges=$(sqlite3 "$gpu/trace.sqlite" "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59" 2>/dev/null || echo '?')
ops=$(sqlite3 "$gpu/trace.sqlite" "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL) + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY) + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET)" 2>/dev/null || echo '?')
echo "bench-gpu-work: $ranges push/pop ranges, $ops GPU operations" >&2

sequential=("$nsys" stats --report nvtx_pushpop_trace,nvtx_gpu_proj_trace,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum
            --format csv --timeunit nsec --output "$bare/seq" --force-overwrite=true "$gpu/trace.sqlite")
bare_nvtx=("$nsys" stats --report nvtx_pushpop_trace,nvtx_gpu_proj_trace --format csv --timeunit nsec
           --output "$bare/nvtx" --sqlite "$bare/trace.sqlite" --force-export=true --force-overwrite=true "$rep/trace.nsys-rep")
q() { printf '%q ' "$@"; }

rm -rf "$work/runs/gpu-noapi"
"$gate" analyze --run-dir "$gpu" --nsys "$nsys" >/dev/null 2>&1 || true
cp -r "$gpu" "$work/runs/gpu-noapi"
python3 - "$work/runs/gpu-noapi/stats/nsys-gate-stats.json" <<'PY'
import json, sys
stamp = json.load(open(sys.argv[1]))
stamp["reports"]["cuda_api_trace"] = {"status": "skipped", "message": "left out for the measurement"}
json.dump(stamp, open(sys.argv[1], "w"), indent=2)
PY
medians() {  # hyperfine's JSON export: the median of each command
  python3 - "$1" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("%s: median %.2f s (min %.2f, max %.2f)" % (r["command"], r["median"], r["min"], r["max"]))
PY
}

if command -v hyperfine >/dev/null; then
  hyperfine --runs 5 --warmup 1 --style basic --export-markdown "$work/results/reuse.md" \
    --export-json "$work/results/reuse.json" \
    -n "analyze --reuse-stats" "$(q "$gate" analyze --reuse-stats --run-dir "$gpu")" \
    -n "analyze --reuse-stats, no kernels per range" "$(q "$gate" analyze --reuse-stats --run-dir "$work/runs/gpu-noapi")"
  hyperfine --runs 5 --warmup 1 --style basic --export-markdown "$work/results/sqlite.md" \
    --export-json "$work/results/sqlite.json" \
    -n "sequential nsys stats (5 reports)" "$(q "${sequential[@]}")" \
    -n "analyze --nsys-processes 1" "$(q "$gate" analyze --run-dir "$gpu" --nsys "$nsys" --nsys-processes 1)" \
    -n "analyze --nsys-processes 2" "$(q "$gate" analyze --run-dir "$gpu" --nsys "$nsys" --nsys-processes 2)" \
    -n "analyze --nsys-processes 3" "$(q "$gate" analyze --run-dir "$gpu" --nsys "$nsys" --nsys-processes 3)"
  hyperfine --runs 5 --warmup 1 --style basic --export-markdown "$work/results/nsys-rep.md" \
    --export-json "$work/results/nsys-rep.json" \
    -n "bare nsys stats (2 NVTX reports, with export)" "$(q "${bare_nvtx[@]}")" \
    -n "analyze (default)" "$(q "$gate" analyze --run-dir "$rep" --nsys "$nsys")"
  for r in reuse sqlite nsys-rep; do medians "$work/results/$r.json"; done
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
else
  median() {  # median of 5 runs of a command, in seconds
    local t=() i start end
    for i in 1 2 3 4 5; do
      start=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; end=$(date +%s.%N)
      t+=("$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')")
    done
    printf '%s\n' "${t[@]}" | sort -n | sed -n 3p
  }
  echo "sequential nsys stats (5 reports): $(median "${sequential[@]}") s"
  for n in 1 2 3; do
    echo "analyze --nsys-processes $n: $(median "$gate" analyze --run-dir "$gpu" --nsys "$nsys" --nsys-processes "$n") s"
  done
  echo "bare nsys stats (2 NVTX reports, with export): $(median "${bare_nvtx[@]}") s"
  echo "analyze (default) on the .nsys-rep: $(median "$gate" analyze --run-dir "$rep" --nsys "$nsys") s"
fi
# interleaved LABEL1 CMD1... -- LABEL2 CMD2...: the two commands in turn, PAIRS times.
interleaved() {
  python3 - "${PAIRS:-7}" "$@" <<'PY'
import statistics, subprocess, sys, time
pairs, rest = int(sys.argv[1]), sys.argv[2:]
split = rest.index("--")
commands = {rest[0]: rest[1:split], rest[split + 1]: rest[split + 2:]}
times = {name: [] for name in commands}
for _ in range(pairs):
    for name, command in commands.items():
        start = time.monotonic()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times[name].append(time.monotonic() - start)
for name, t in times.items():
    print("interleaved, %s: median %.2f s (%s)" % (name, statistics.median(t), " ".join("%.2f" % x for x in t)))
first, second = times.values()
print("interleaved: ratio of the medians %.3f; median of the %d pairs' ratios %.3f"
      % (statistics.median(second) / statistics.median(first), pairs,
         statistics.median(b / a for a, b in zip(first, second))))
PY
}
interleaved "sequential nsys stats (5 reports)" "${sequential[@]}" \
  -- "analyze (default) on the .sqlite" "$gate" analyze --run-dir "$gpu" --nsys "$nsys"
interleaved "bare nsys stats (2 NVTX reports, with export)" "${bare_nvtx[@]}" \
  -- "analyze (default) on the .nsys-rep" "$gate" analyze --run-dir "$rep" --nsys "$nsys"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$keep" ]; then ln -sfn "$work" "$keep/last"; echo "kept: $keep/last"; fi
