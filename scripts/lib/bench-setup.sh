# Shared by the benchmark scripts (sourced, not run): builds nsys-gate in release mode and the
# NVTX harness, makes the work folder, and records the harness under nsys 2024.2 without
# waits, from the work folder with a minimal environment; writes run directories' manifests.
# Sets repo, nsys, prefix, gate, work.
# Needs `keep` (a folder to leave the work folder in, or empty) set by the caller.

repo=$(pwd)
nsys=$(scripts/install-nsys.sh 2024.2)
prefix="$repo/.nsys/2024.2/prefix"
nvtx="$prefix/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nvtx/include"
cargo build --release --locked --quiet
gate="$repo/target/release/nsys-gate"

if [ -n "$keep" ]; then
  mkdir -p "$keep"; work=$(mktemp -d -p "$keep")
else
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fi
gcc -O2 -std=c11 -I "$nvtx" -o "$work/harness" tests/harness/harness.c -ldl -pthread

# record_harness HARNESS_ARGS...: work/trace.nsys-rep of the harness run with those arguments
# (converted from the .qdstrm where nsys leaves only that). nsys's errors are shown.
record_harness() {
  (
    cd "$work"
    env -i PATH=/usr/bin:/bin HOME="$work" NSYS_NVTX_PROFILER_REGISTER_ONLY=0 \
      "$nsys" profile --trace=nvtx --sample=none --cpuctxsw=none \
      --capture-range=nvtx --nvtx-capture='profile-target@*' --capture-range-end=stop \
      -o trace ./harness --no-wait "$@" >/dev/null
    if [ ! -f trace.nsys-rep ]; then
      LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu" \
        "$prefix/usr/lib/nsight-systems/host-linux-x64/QdstrmImporter" -i trace.qdstrm >/dev/null
    fi
  )
}

# write_manifest RUN_DIR TRACE ITERATIONS: RUN_DIR/manifest.yaml, the clean fixture's manifest
# for a run named after RUN_DIR's folder, with its trace file TRACE and ITERATIONS passes.
write_manifest() {
  sed -e "s/^  iterations: 5$/  iterations: $3/" \
      -e "s#runs/clean/trace.nsys-rep#runs/$(basename "$1")/$2#" \
      "$repo/tests/fixtures/clean/manifest.yaml" > "$1/manifest.yaml"
}
