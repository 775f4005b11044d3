#!/usr/bin/env bash
# Records the traces of `cargo bench --bench ranks` (sourced by nothing; run by the bench):
# the NVTX harness as 8 ranks x 1,000 passes without waits, recorded by nsys 2024.2
#   DIR/one/trace.nsys-rep          the harness forks the 8 ranks itself, one trace
#   DIR/per/trace_R.nsys-rep        the harness run once per rank (`--rank R`), nsys given
#                                   `-o trace_%q{RANK}` and RANK=R: one trace per rank
# each with its manifest (the clean fixture's, `world_size: 8`). A run directory already
# recorded (its `.recorded` mark) is kept: the traces are made once and cached under target/.
#
#   scripts/lib/bench-ranks-record.sh DIR [RANKS] [PASSES]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
dir=$(realpath -m "$1")
ranks=${2:-8}
passes=${3:-1000}
repo=$(pwd)
nsys=$(scripts/install-nsys.sh 2024.2)
prefix="$repo/.nsys/2024.2/prefix"
nvtx="$prefix/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nvtx/include"
mkdir -p "$dir"
if [ ! -x "$dir/harness" ]; then
  gcc -O2 -std=c11 -I "$nvtx" -o "$dir/harness" tests/harness/harness.c -ldl -pthread
fi

# profile RUN OUTPUT ENV... -- HARNESS_ARGS...: nsys profile of the harness in RUN, every rank
# recorded (`--capture-range-end=none`: with `stop` the first rank to pop its range ends it)
profile() {
  local run=$1 output=$2
  shift 2
  local env=()
  while [ "$1" != -- ]; do env+=("$1"); shift; done
  shift
  (
    cd "$run"
    env -i PATH=/usr/bin:/bin HOME="$run" NSYS_NVTX_PROFILER_REGISTER_ONLY=0 "${env[@]}" \
      "$nsys" profile --trace=nvtx --sample=none --cpuctxsw=none \
      --capture-range=nvtx --nvtx-capture='profile-target@*' --capture-range-end=none \
      -o "$output" "$dir/harness" --no-wait --warmup 1 --iterations "$passes" "$@" >profile.log 2>&1
  )
}

# import RUN NAME: RUN/NAME.nsys-rep from the .qdstrm where nsys leaves only that
import() {
  if [ ! -f "$1/$2.nsys-rep" ]; then
    (cd "$1" && LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu" \
      "$prefix/usr/lib/nsight-systems/host-linux-x64/QdstrmImporter" -i "$2.qdstrm" >/dev/null)
  fi
  rm -f "$1/$2.qdstrm"
}

# manifest RUN TRACE: the clean fixture's manifest for RUN with its trace path and 8 ranks
manifest() {
  sed -e "s/^  iterations: 5$/  iterations: $passes/" \
      -e "s/^  warmup: 2$/  warmup: 1/" \
      -e "s#runs/clean/trace.nsys-rep#runs/$(basename "$1")/$2#" \
      "$repo/tests/fixtures/clean/manifest.yaml" > "$1/manifest.yaml"
  printf 'world_size: %s\n' "$ranks" >> "$1/manifest.yaml"
}

if [ ! -f "$dir/one/.recorded" ]; then
  rm -rf "$dir/one"; mkdir -p "$dir/one"
  echo "bench-ranks: recording $ranks ranks x $passes passes in one trace" >&2
  profile "$dir/one" trace -- --ranks "$ranks"
  import "$dir/one" trace
  manifest "$dir/one" trace.nsys-rep
  touch "$dir/one/.recorded"
fi
if [ ! -f "$dir/per/.recorded" ]; then
  rm -rf "$dir/per"; mkdir -p "$dir/per"
  echo "bench-ranks: recording $ranks ranks x $passes passes, one trace per rank" >&2
  for ((r = 0; r < ranks; r++)); do
    profile "$dir/per" 'trace_%q{RANK}' RANK=$r -- --rank "$r"
    import "$dir/per" "trace_$r"
  done
  manifest "$dir/per" 'trace_%q{RANK}.nsys-rep'
  touch "$dir/per/.recorded"
fi
