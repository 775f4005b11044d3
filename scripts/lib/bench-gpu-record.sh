#!/usr/bin/env bash
# Records the GPU-heavy trace of scripts/bench-gpu-work.sh once and caches it:
# DIR/gpu/trace.sqlite (the NVTX harness, PASSES passes without waits, recorded by nsys 2024.2,
# exported, with synthetic CUDA work injected at its marks: 163,339 GPU operations at the
# default 23,334 passes) and its manifest. A run directory already made (its `.recorded` mark) is kept.
#
#   scripts/lib/bench-gpu-record.sh DIR [PASSES]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
dir=$(realpath -m "$1")
passes=${2:-23334}
[ -f "$dir/gpu/.recorded" ] && exit 0
repo=$(pwd)
nsys=$(scripts/install-nsys.sh 2024.2)
prefix="$repo/.nsys/2024.2/prefix"
nvtx="$prefix/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nvtx/include"
work="$dir/work"
rm -rf "$work" "$dir/gpu"; mkdir -p "$work" "$dir/gpu"
gcc -O2 -std=c11 -I "$nvtx" -o "$work/harness" tests/harness/harness.c -ldl -pthread
echo "bench-gpu-record: recording $passes passes with nsys 2024.2 (no waits, GPU marks)" >&2
(
  cd "$work"
  env -i PATH=/usr/bin:/bin HOME="$work" NSYS_NVTX_PROFILER_REGISTER_ONLY=0 \
    "$nsys" profile --trace=nvtx --sample=none --cpuctxsw=none \
    --capture-range=nvtx --nvtx-capture='profile-target@*' --capture-range-end=stop \
    -o trace ./harness --no-wait --gpu-markers --warmup 1 --iterations "$passes" >/dev/null
  if [ ! -f trace.nsys-rep ]; then
    LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu" \
      "$prefix/usr/lib/nsight-systems/host-linux-x64/QdstrmImporter" -i trace.qdstrm >/dev/null
  fi
  "$nsys" export --type sqlite --force-overwrite=true -o trace.sqlite trace.nsys-rep >/dev/null 2>&1
  "$nsys" export --type sqlite --lazy=false --force-overwrite=true -o schema.sqlite trace.nsys-rep >/dev/null 2>&1
)
python3 tests/harness/fixtures.py add-gpu-work --sqlite "$work/trace.sqlite" \
  --schema-from "$work/schema.sqlite" --work full >&2
mv "$work/trace.sqlite" "$dir/gpu/trace.sqlite"
sed -e "s/^  iterations: 5$/  iterations: $passes/" -e "s/^  warmup: 2$/  warmup: 1/" \
    -e "s#runs/clean/trace.nsys-rep#runs/gpu/trace.sqlite#" \
    "$repo/tests/fixtures/clean/manifest.yaml" > "$dir/gpu/manifest.yaml"
rm -rf "$work"
touch "$dir/gpu/.recorded"
