#!/usr/bin/env bash
# Record the test fixtures with real Nsight Systems: one run directory (manifest.yaml + trace)
# per scenario under tests/fixtures/, and the example run directory under examples/.
#
#   scripts/make-fixtures.sh [--list] [SCENARIO...]      (default: every scenario)
#
# Each scenario runs the NVTX harness (tests/harness/harness.c) under `nsys profile` in a
# neutral temporary folder, in PID and mount namespaces of its own (unshare), with a minimal
# environment: nsys stores in the trace the environment of the profiled process and of every
# ancestor up to PID 1, the list of processes it can see, its working folder and its own
# install folder. It converts the .qdstrm with QdstrmImporter and checks the result before
# keeping it:
#   - no path of this machine (repository, /root, /work, $HOME) and no variable of the invoking
#     environment in the SQLite export or in the report itself;
#   - `nsys stats` gives the push/pop ranges the scenario is about (and, where there is GPU
#     work, the GPU projection), and no timing warning the scenario is not about (first
#     iteration slow, high variance, slow iterations as CONTRACT.md defines them); a recording
#     whose timing came out noisy (the machine is shared) is made again, up to $ATTEMPTS times.
#
# Environment:
#   NSYS_VERSION     version recording the scenarios that do not pin one (default 2024.2)
#   NSYS_ROOT        folder holding <version>/prefix as scripts/install-nsys.sh makes it
#                    (default REPO/.nsys, where a missing version is installed)
#   FIXTURES_DIR     output folder of the fixtures (default REPO/tests/fixtures)
#   EXAMPLES_DIR     output folder of the examples (default REPO/examples)
#   FIXTURE_CSV_DIR  where the CSVs nsys printed are kept for inspection
#                    (default /tmp/fixture-csvs; never committed)
#   ATTEMPTS         recordings per scenario before giving up on noisy timing (default 12;
#                    llama-like at least 30: all 63 of its steady passes must come out clean)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
default_version=${NSYS_VERSION:-2024.2}
nsys_root=${NSYS_ROOT:-$repo/.nsys}
fixtures_dir=${FIXTURES_DIR:-$repo/tests/fixtures}
examples_dir=${EXAMPLES_DIR:-$repo/examples}
csv_dir=${FIXTURE_CSV_DIR:-/tmp/fixture-csvs}
attempts=${ATTEMPTS:-12}
tool=(python3 "$repo/tests/harness/fixtures.py")

SCENARIOS=(
  clean clean-2023.4 clean-2022.4
  missing-iterations unclosed-last
  capture-missing capture-multiple iterations-outside-capture
  duplicate-unexpected worker-thread no-capture-worker
  named-domain hostile-names no-nvtx capture-null custom-pattern slow-iterations llama-like
  gpu-projection gpu-projection-2023.4 gpu-projection-2022.4 gpu-iteration-without-work
  gpu-outside-capture gpu-outside-capture-2023.4
  gpu-work gpu-work-2023.4 gpu-work-2022.4 gpu-processes llama-gpu llama-cold
  compare-base compare-head
  ranks-2 ranks-2-2023.4 ranks-2-2022.4 ranks-4 ranks-missing ranks-per-trace
  ranks-base-1 ranks-base-2 ranks-base-3 ranks-base-4 ranks-base-5 ranks-head
  example-smoke-tensor
)
# One process driving two GPUs: each device's compute and NCCL communication (issue 35).
SCENARIOS+=(gpu-devices gpu-devices-2023.4 gpu-devices-2022.4 gpu-devices-head)
# Ranks on devices of their own: in one trace the first-started process on device 1; one trace
# per rank, rank R on device R (issue 35).
SCENARIOS+=(ranks-devices ranks-devices-per-trace)
# GPU metrics: the SM clock sampled at 10 kHz, 30 % lower during iterations 3-7 (issue 36).
SCENARIOS+=(gpu-clocks)

say() { echo "make-fixtures: $*" >&2; }
die() { say "$*"; exit 1; }

# ------------------------------------------------------------------------------------------------
# Scenarios. Each sets:
#   version     nsys version recording it
#   dest        run directory written
#   capture     --nvtx-capture value, or empty to record the whole run (no capture options)
#   harness     arguments of the harness
#   m_*         manifest: capture range (a name or null), iterations, warmup, pattern, data source,
#               run id, whether to record trace_sha256
#   expect      arguments of `fixtures.py check-pushpop` (what the push/pop report must show)
#   gpu         empty, or the `fixtures.py add-gpu-work --mode` giving the trace synthetic CUDA
#               work (the run directory then holds trace.sqlite)
#   gpu_work    `fixtures.py add-gpu-work --work`: projection (kernels and copies), full (also
#               memsets, pageable copies both ways, a hostile kernel name, TARGET_INFO_GPU),
#               llama, processes (full, a PyTorch kernel, and a second process whose
#               correlation ids overlap the first's), or devices (compute and NCCL kernels
#               on two GPUs, a peer-to-peer copy)
#   gpu_metrics `fixtures.py add-gpu-work --metrics`: none, or clock-drop (GPU metrics whose SM
#               clock drops by 30 % during iterations 3-7)
#   gpu_expect  arguments of `fixtures.py check-gpu`
#   ranks       0, or the ranks of a distributed run: the harness starts them itself
#               (`--ranks N`, one trace), or with per_trace=1 nsys records each alone
#               (`--rank R`, `-o trace_%q{RANK}` with RANK=R, one trace per rank)
#   rank_expect arguments of `fixtures.py check-ranks` (instead of check-pushpop)
#   rank_devices with gpu_work=rank-devices: each rank process's device, by PID (one trace:
#               `--devices` of add-gpu-work); one trace per rank: trace R's device
# ------------------------------------------------------------------------------------------------
scenario() {
  local name=$1
  version=$default_version
  dest=$fixtures_dir/$name
  capture='profile-target@*'
  harness=()
  m_capture=profile-target m_iterations=5 m_warmup=1 m_pattern='' m_source=dummy m_sha=0
  m_run_id=$name m_profile=smoke-tensor
  expect=()
  tries=$attempts
  gpu='' gpu_skip='' gpu_work=projection gpu_expect=() gpu_metrics=none
  ranks=0 per_trace=0 rank_expect=() rank_devices=()
  local plain=(--work plain --expect-unattributed 0)

  case $name in
    clean)
      m_warmup=2
      harness=(--warmup 2 --iterations 5)
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 "${plain[@]}") ;;
    clean-2023.4|clean-2022.4)
      version=${name#clean-}
      m_warmup=2
      [ "$version" = 2023.4 ] && { m_source=coco; m_sha=1; }
      harness=(--warmup 2 --iterations 5)
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 "${plain[@]}") ;;
    missing-iterations)
      harness=(--warmup 1 --iterations 5 --skip-from 3)
      expect=(--expect-found 3 --expect-complete 3 --expect-measured 0,1,2 "${plain[@]}"
              --expect-warnings missing_iterations) ;;
    unclosed-last)
      harness=(--warmup 1 --iterations 5 --unclosed-last)
      expect=(--expect-found 5 --expect-complete 4 --expect-measured 0,1,2,3,4
              --expect-unattributed 0 --expect-warnings missing_iterations) ;;
    capture-missing)
      capture=''
      harness=(--warmup 1 --iterations 5 --capture measure)
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 --work plain
              --expect-unattributed 7 --expect-warnings capture_range_missing) ;;
    capture-multiple)
      capture='' m_iterations=3 m_warmup=0
      harness=(--warmup 0 --iterations 3 --capture-twice)
      expect=(--expect-found 6 --expect-complete 6 --expect-measured 0,1,2,0,1,2 "${plain[@]}"
              --expect-warnings capture_range_multiple,duplicate_iterations) ;;
    iterations-outside-capture)
      capture='' m_warmup=0
      harness=(--warmup 0 --iterations 5 --outside-iterations 2)
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 --work plain
              --expect-unattributed 12 --expect-warnings capture_range_exceeded) ;;
    duplicate-unexpected)
      m_iterations=4
      harness=(--warmup 1 --indexes 0,1,1,2,3,7)
      expect=(--expect-found 6 --expect-complete 6 --expect-measured 0,1,1,2,3,7 "${plain[@]}"
              --expect-warnings duplicate_iterations,unexpected_iterations) ;;
    worker-thread)
      harness=(--warmup 1 --iterations 5 --worker-thread 3)
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 --work plain
              --expect-unattributed 18 --expect-warnings capture_range_exceeded) ;;
    no-capture-worker)
      capture='' m_capture=null m_warmup=0
      harness=(--warmup 0 --no-capture-range --iterations 2 --worker-thread 5)
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 --work plain
              --expect-unattributed 12 --expect-warnings capture_range_exceeded) ;;
    named-domain)
      m_pattern='^harness:iteration (\d+)$'
      harness=(--warmup 1 --iterations 5 --domain harness)
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 "${plain[@]}"
              --name-prefix harness:) ;;
    hostile-names)
      m_iterations=3
      harness=(--warmup 1 --iterations 3 --hostile-names)
      expect=(--expect-found 3 --expect-complete 3 --expect-measured 0,1,2 --work hostile
              --expect-unattributed 0) ;;
    no-nvtx)
      capture=''
      harness=(--warmup 1 --iterations 5 --no-nvtx)
      expect=(--expect-empty) ;;
    capture-null)
      capture='' m_capture=null m_warmup=0
      harness=(--warmup 0 --no-capture-range --iterations 5)
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 "${plain[@]}") ;;
    custom-pattern)
      m_pattern='^step\[(\d+)\]$'
      harness=(--warmup 1 --iterations 5 --iteration-format 'step[%d]')
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 "${plain[@]}") ;;
    slow-iterations)
      m_iterations=8
      harness=(--warmup 1 --iterations 8 --slow 0,5)
      expect=(--expect-found 8 --expect-complete 8 "${plain[@]}" --expect-slow 0,5
              --expect-warnings first_iteration_slow,high_variance,slow_iterations) ;;
    llama-like)
      # the shape of a public GPU LLM inference trace, scaled down about 5x: 64 passes
      # `token_N_processing` of 8 layers whose range names hold decimal indexes (1,536 distinct
      # scoped names), the first pass ~15x the steady ones (a prompt's prefill). One pass 15x
      # the median is, by CONTRACT.md's definitions, also high variance and a slow iteration.
      # The 63 steady passes must all stay under median + 5 x MAD: --realtime, and more tries.
      tries=$((attempts > 30 ? attempts : 30))
      m_iterations=64 m_profile=llama-tiny m_pattern='^token_(\d+)_processing$'
      harness=(--warmup 1 --iterations 64 --llama 8 --first-pass-factor 15 --realtime
               --iteration-format 'token_%d_processing')
      expect=(--expect-found 64 --expect-complete 64 --expect-measured "$(seq -s, 0 63)"
              --work llama --layers 8 --expect-unattributed 0 --expect-slow 0
              --expect-first-ratio 12,18
              --expect-warnings first_iteration_slow,high_variance,slow_iterations) ;;
    gpu-projection|gpu-projection-2023.4|gpu-projection-2022.4|gpu-work|gpu-work-2023.4|gpu-work-2022.4)
      case $name in *-2023.4) version=2023.4 ;; *-2022.4) version=2022.4 ;; esac
      [ "$name" = gpu-projection-2023.4 ] && m_source=coco
      case $name in gpu-work*) gpu_work=full ;; esac
      harness=(--warmup 1 --iterations 5 --gpu-markers)
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 "${plain[@]}")
      gpu=all
      gpu_expect=(--expect-name profile-target=1 --expect-name inference=5
                  --expect-name preprocessing=5 --expect-name resize=5)
      for i in 0 1 2 3 4; do gpu_expect+=(--expect-name "iteration $i=1"); done
      if [ "$version" = 2023.4 ]; then
        gpu_expect+=(--expect-rows 22 --expect-root 1)   # the synthetic root row: the loader's copy
      else
        gpu_expect+=(--expect-rows 21 --expect-root 0)
      fi ;;
    gpu-processes)
      # two processes whose CUDA correlation ids overlap (each process counts its own), as the
      # tensor-parallel workers of an inference server: the harness's work (as gpu-work, plus a
      # PyTorch kernel with a ~1,100-character name in preprocessing > resize), and a second
      # process on GPU 1 with ranges worker_step > forward over each inference, launching two
      # kernels (one sharing its base name with the first process's conv2d_fprop_kernel)
      harness=(--warmup 1 --iterations 5 --gpu-markers)
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 --work plain
              --expect-unattributed 10)
      gpu=all gpu_work=processes
      gpu_expect=(--expect-rows 31 --expect-root 0 --expect-name profile-target=1
                  --expect-name inference=5 --expect-name preprocessing=5 --expect-name resize=5
                  --expect-name worker_step=5 --expect-name forward=5)
      for i in 0 1 2 3 4; do gpu_expect+=(--expect-name "iteration $i=1"); done ;;
    llama-gpu)
      # the public GPU LLM inference trace's shape *with* its GPU work (llama-like has none),
      # smaller: 16 passes of 8 layers. forward_layer_L launches a GEMM over most of its time
      # (GPU-bound), ensure_layer_L_weights does host work and launches nothing (host-bound),
      # layer_L_token_T, embed and sample stay under 5 % of the host time (no advice).
      tries=$((attempts > 30 ? attempts : 30))
      m_iterations=16 m_profile=llama-tiny m_pattern='^token_(\d+)_processing$'
      harness=(--warmup 1 --iterations 16 --llama 8 --gpu-markers --realtime
               --iteration-format 'token_%d_processing')
      expect=(--expect-found 16 --expect-complete 16 --expect-measured "$(seq -s, 0 15)"
              --work llama --layers 8 --expect-unattributed 0)
      gpu=all gpu_work=llama
      # profile-target, 16 passes, and per pass embed, sample, 8 layer_L_token_T and 8
      # forward_layer_L: 305 projection rows; ensure_layer_L_weights launched nothing
      gpu_expect=(--expect-rows 305 --expect-root 0 --expect-name profile-target=1
                  --expect-name embed=16 --expect-name sample=16 --expect-name token_3_processing=1
                  --expect-name layer_0_token_0=1 --expect-name forward_layer_7=16
                  --expect-name ensure_layer_0_weights=0) ;;
    llama-cold)
      # llama-gpu with a cold first pass and no warm-up, as the public llama3 trace's first
      # token (152 ms against a steady 10 ms): each forward_layer_L of token 0 does 3 ms of host
      # work before it launches its kernels, so that token 0 takes ~13x a steady pass and,
      # over all 16 passes, forward_layer_# spans under half of its host time (host-bound by
      # the totals) while the 15 steady ones keep it GPU-bound. Token 0 is the one slow
      # iteration.
      tries=$((attempts > 30 ? attempts : 30))
      m_iterations=16 m_warmup=0 m_profile=llama-tiny m_pattern='^token_(\d+)_processing$'
      harness=(--warmup 0 --iterations 16 --llama 8 --gpu-markers --realtime --cold-forward-us 3000
               --iteration-format 'token_%d_processing')
      expect=(--expect-found 16 --expect-complete 16 --expect-measured "$(seq -s, 0 15)"
              --work llama --layers 8 --expect-unattributed 0 --expect-slow 0
              --expect-first-ratio 11,16
              --expect-warnings first_iteration_slow,high_variance,slow_iterations)
      gpu=all gpu_work=llama
      gpu_expect=(--expect-rows 305 --expect-root 0 --expect-name profile-target=1
                  --expect-name embed=16 --expect-name sample=16 --expect-name token_0_processing=1
                  --expect-name forward_layer_7=16 --expect-name ensure_layer_0_weights=0) ;;
    gpu-iteration-without-work)
      harness=(--warmup 1 --iterations 5 --gpu-markers)
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 "${plain[@]}")
      gpu=skip-iteration gpu_skip=2
      gpu_expect=(--expect-rows 17 --expect-root 0 --expect-name "iteration 2=0"
                  --expect-name inference=4) ;;
    gpu-outside-capture|gpu-outside-capture-2023.4)
      harness=(--warmup 1 --iterations 5 --gpu-markers)
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 "${plain[@]}")
      gpu=outside-only
      if [ "$name" = gpu-outside-capture-2023.4 ]; then
        version=2023.4
        gpu_expect=(--expect-rows 1 --expect-root 1)
      else
        # 2024.2 filters out the root row: a 0-byte CSV, and nsys prints neither PROCESSED nor SKIPPED
        gpu_expect=(--expect-rows 0)
      fi ;;
    gpu-devices|gpu-devices-2023.4|gpu-devices-2022.4|gpu-devices-head)
      # one process driving two GPUs (fixtures.py DEVICE_KERNELS): per inference, compute
      # kernels on each device and an NCCL all-reduce on a stream of its own overlapping them
      # for part of its time (exposed per iteration by construction: device 0 200 us, device 1
      # 250 us), and a peer-to-peer copy from device 0 to device 1
      # gpu-devices-head: device 1's all-reduce 100 us later, 350 us exposed (+40 %)
      case $name in gpu-devices-20*) version=${name#gpu-devices-} ;; esac
      tries=$((attempts > 30 ? attempts : 30))
      harness=(--warmup 1 --iterations 5 --realtime)
      expect=(--expect-found 5 --expect-complete 5 --expect-measured 0,1,2,3,4 "${plain[@]}")
      gpu=all gpu_work=devices
      [ "$name" = gpu-devices-head ] && gpu_work=devices-late
      gpu_expect=(--expect-rows 11 --expect-root 0 --expect-name profile-target=1
                  --expect-name inference=5 --expect-name preprocessing=0)
      for i in 0 1 2 3 4; do gpu_expect+=(--expect-name "iteration $i=1"); done ;;
    gpu-clocks)
      # gpu-work's work over 12 iterations, and GPU metrics (fixtures.py add_gpu_metrics): GPU
      # 0's SM clock at 1,410 MHz, 987 MHz (30 % lower) from the start of iteration 3 to the
      # end of iteration 7
      m_iterations=12
      harness=(--warmup 1 --iterations 12 --gpu-markers)
      expect=(--expect-found 12 --expect-complete 12 --expect-measured "$(seq -s, 0 11)" "${plain[@]}")
      gpu=all gpu_work=full gpu_metrics=clock-drop
      gpu_expect=(--expect-root 0 --expect-name profile-target=1 --expect-name inference=12)
      for i in 0 3 11; do gpu_expect+=(--expect-name "iteration $i=1"); done ;;
    compare-base|compare-head)
      # The same program at two known speeds: head does 510 us more in every inference, 20 %
      # of a pass of about 2.55 ms (nsys-gate compare must find it slower by about 20 %).
      m_iterations=20 m_warmup=1
      harness=(--warmup 1 --iterations 20)
      [ "$name" = compare-head ] && harness+=(--extra-inference-us 510)
      expect=(--expect-found 20 --expect-complete 20 "${plain[@]}") ;;
    ranks-2|ranks-2-2023.4|ranks-2-2022.4|ranks-per-trace)
      # two ranks of a distributed run, 10 passes each; rank 1 does 510 us more in every
      # inference (20 % of a pass of about 2.55 ms), so it is the slowest rank of every step
      case $name in *-2023.4) version=2023.4 ;; *-2022.4) version=2022.4 ;; esac
      [ "$name" = ranks-per-trace ] && per_trace=1
      ranks=2 m_iterations=10 m_warmup=1
      harness=(--warmup 1 --iterations 10 --rank-extra-us 1:510)
      rank_expect=(--expect-counts 10,10 --slow-rank 1 --min-slowest 9) ;;
    ranks-4)
      ranks=4 m_iterations=10 m_warmup=1
      harness=(--warmup 1 --iterations 10 --rank-extra-us 2:510)
      rank_expect=(--expect-counts 10,10,10,10 --slow-rank 2 --min-slowest 9) ;;
    ranks-missing)
      # rank 1 stops after 8 of its 10 passes
      ranks=2 m_iterations=10 m_warmup=1
      harness=(--warmup 1 --iterations 10 --rank-skip-from 1:8)
      rank_expect=(--expect-counts 10,8) ;;
    ranks-base-*|ranks-head)
      # a history of two-rank runs, and a head whose rank 1 does 200 us more in every inference
      # (8 % of a pass)
      ranks=2 m_iterations=10 m_warmup=1
      harness=(--warmup 1 --iterations 10)
      rank_expect=(--expect-counts 10,10)
      if [ "$name" = ranks-head ]; then
        harness+=(--rank-extra-us 1:200)
        rank_expect+=(--slow-rank 1 --min-slowest 8)
      fi ;;
    ranks-devices|ranks-devices-per-trace)
      # two ranks, 5 passes each, rank 1 (the second process started) 510 us slower in every
      # inference; each rank's compute and NCCL kernels on a device of its own (fixtures.py
      # RANK_KERNELS: per iteration compute 700 us, communication 500 us, exposed 200 us).
      # One trace: the first-started process on device 1, the second on device 0, so that
      # numbering by device and by process order disagree. One trace per rank: rank R on
      # device R.
      ranks=2 m_iterations=5 m_warmup=1
      harness=(--warmup 1 --iterations 5 --rank-extra-us 1:510)
      rank_expect=(--expect-counts 5,5 --slow-rank 1 --min-slowest 4)
      gpu=all gpu_work=rank-devices rank_devices=(1 0)
      if [ "$name" = ranks-devices-per-trace ]; then per_trace=1 rank_devices=(0 1); fi ;;
    example-smoke-tensor)
      version=2024.2
      m_run_id=20261129T120000Z m_iterations=8 m_warmup=1
      dest=$examples_dir/smoke-tensor/runs/$m_run_id
      harness=(--warmup 1 --iterations 8)
      expect=(--expect-found 8 --expect-complete 8 "${plain[@]}") ;;
    *)
      die "unknown scenario '$name' (see --list)" ;;
  esac
}

# ------------------------------------------------------------------------------------------------
# Recording
# ------------------------------------------------------------------------------------------------

work=$(mktemp -d /tmp/nsys-gate-fixtures.XXXXXX)
keep_work=0
cleanup() {
  if [ "$keep_work" = 1 ]; then say "work folder kept for inspection: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# nsys records its own install folder in the trace: run it from a hard-linked (else copied)
# tree inside the neutral folder, never from the repository.
prepare_nsys() {
  local v=$1 prefix=$work/nsight-systems-$1
  if [ ! -d "$prefix" ]; then
    if [ ! -x "$nsys_root/$v/prefix/usr/bin/nsys" ]; then
      [ "$nsys_root" = "$repo/.nsys" ] || die "no Nsight Systems $v in $nsys_root"
      say "installing Nsight Systems $v"
      "$repo/scripts/install-nsys.sh" "$v" >/dev/null
    fi
    cp -al "$nsys_root/$v/prefix" "$prefix" 2>/dev/null || {
      rm -rf "$prefix"
      cp -a "$nsys_root/$v/prefix" "$prefix"
    }
    gcc -O2 -std=c11 -Wall -Wextra -Werror \
      -I "$prefix/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nvtx/include" \
      -o "$work/harness-$v" "$repo/tests/harness/harness.c" -ldl -pthread
  fi
  echo "$prefix"
}

# Which `unshare` options give a PID namespace here (root, or an unprivileged user namespace).
unshare_opts=()
find_unshare() {
  if unshare --pid --fork --mount-proc true 2>/dev/null; then
    unshare_opts=(--pid --fork --mount-proc)
  elif unshare --user --map-root-user --pid --fork --mount-proc true 2>/dev/null; then
    unshare_opts=(--user --map-root-user --pid --fork --mount-proc)
  else
    die "cannot create a PID namespace with unshare(1); it is needed to keep this machine's processes out of the traces"
  fi
  # the mount point of the private session folder (nsys creates it world-writable too)
  [ -d /tmp/nvidia ] || { mkdir -p /tmp/nvidia && chmod 1777 /tmp/nvidia; }
}

# in_sandbox PREFIX DIR COMMAND...: run COMMAND in DIR with a minimal environment, in PID and
# mount namespaces of its own. nsys records the environment of the profiled process, of its
# own processes and of their ancestors up to PID 1, and the list of every process it can see:
# in the namespace that is nsys itself and the harness. nsys's session state (/tmp/nvidia,
# /dev/shm) is private too: PIDs repeat from one namespace to the next, and nsys 2022.4 refuses
# to start ("Agent launcher failed.") next to the state a previous namespace left for its PID.
in_sandbox() {
  local prefix=$1 dir=$2
  shift 2
  (cd "$dir" && unshare "${unshare_opts[@]}" /bin/sh -c \
    'mount -t tmpfs -o mode=1777 nsys-session /tmp/nvidia &&
     mount -t tmpfs -o mode=1777 nsys-shm /dev/shm && exec "$@"' sh \
    env -i PATH=/usr/bin:/bin HOME="$dir" LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu" \
    NSYS_NVTX_PROFILER_REGISTER_ONLY=0 "$@")
}

# record_once NAME PREFIX RUN: one recording into RUN/ (trace.nsys-rep, stats/, logs); returns
# 3 when it is worth recording again. (Called as `record_once || rc=$?`, so `set -e` does not
# apply inside: every step that can fail says so itself.)
record_once() {
  local name=$1 prefix=$2 run=$3 reports
  rm -rf "$run"
  mkdir -p "$run/stats"
  cp "$work/harness-$version" "$run/harness"
  local nsys=(in_sandbox "$prefix" "$run" "$prefix/usr/bin/nsys")
  local opts=(--trace=nvtx --sample=none --cpuctxsw=none)
  # several ranks: the capture ends when the last process exits (with `stop` it ends when the
  # first rank pops its capture range, and the slower ranks lose their last passes)
  local end=stop
  [ "$ranks" -gt 0 ] && end=none
  [ -n "$capture" ] && opts+=(--capture-range=nvtx --nvtx-capture="$capture" --capture-range-end=$end)

  if [ "$ranks" -gt 0 ]; then
    record_ranks "$name" "$prefix" "$run" "${opts[@]}"
    return
  fi
  "${nsys[@]}" profile "${opts[@]}" -o trace ./harness "${harness[@]}" \
    >"$run/profile.log" 2>&1 || { cat "$run/profile.log" >&2; die "$name: nsys profile failed"; }
  if [ ! -f "$run/trace.nsys-rep" ]; then
    # the importer now and then fails on a sound .qdstrm (InvalidArgumentException); record again
    in_sandbox "$prefix" "$run" "$prefix/usr/lib/nsight-systems/host-linux-x64/QdstrmImporter" \
      -i trace.qdstrm >"$run/import.log" 2>&1 || {
        tail -n 3 "$run/import.log" >&2
        say "$name: QdstrmImporter failed"
        return 3
      }
  fi
  [ -f "$run/trace.nsys-rep" ] || die "$name: no trace.nsys-rep (see $run)"
  rm -f "$run/trace.qdstrm"

  if [ "$version" = 2022.4 ]; then reports=nvtxpptrace,nvtxgpuproj; else reports=nvtx_pushpop_trace,nvtx_gpu_proj_trace; fi
  if [ -z "$gpu" ]; then
    "${nsys[@]}" stats --report "$reports" --format csv --timeunit nsec \
      --output stats/nsys --sqlite stats/trace.sqlite --force-export=true --force-overwrite=true \
      trace.nsys-rep >"$run/stats.log" 2>&1 || { cat "$run/stats.log" >&2; die "$name: nsys stats failed"; }
  else
    { "${nsys[@]}" export --type sqlite --force-overwrite=true -o trace.sqlite trace.nsys-rep &&
      "${nsys[@]}" export --type sqlite --lazy=false --force-overwrite=true -o stats/schema.sqlite \
        trace.nsys-rep; } >"$run/export.log" 2>&1 || { cat "$run/export.log" >&2; die "$name: nsys export failed"; }
    local mode=(--mode "$gpu" --work "$gpu_work" --metrics "$gpu_metrics")
    [ -n "$gpu_skip" ] && mode+=(--skip-iteration "$gpu_skip")
    [ -n "$m_pattern" ] && mode+=(--pattern "$m_pattern")
    "${tool[@]}" add-gpu-work --sqlite "$run/trace.sqlite" --schema-from "$run/stats/schema.sqlite" \
      "${mode[@]}" || die "$name: could not add the synthetic GPU work"
    rm -f "$run/stats/schema.sqlite"
    "${nsys[@]}" stats --report "$reports" --format csv --timeunit nsec \
      --output stats/nsys --force-overwrite=true trace.sqlite \
      >"$run/stats.log" 2>&1 || { cat "$run/stats.log" >&2; die "$name: nsys stats failed"; }
  fi
}

# record_ranks NAME PREFIX RUN OPTS...: a distributed run, one trace (the harness starts the
# ranks) or one per rank (trace_R.nsys-rep, nsys given `-o trace_%q{RANK}` and RANK=R); the
# push/pop report of each under stats/R/ (one trace: stats/)
record_ranks() {
  local name=$1 prefix=$2 run=$3 reports traces=() r
  shift 3
  local opts=("$@")
  if [ "$version" = 2022.4 ]; then reports=nvtxpptrace; else reports=nvtx_pushpop_trace; fi
  if [ "$per_trace" = 1 ]; then
    for ((r = 0; r < ranks; r++)); do
      in_sandbox "$prefix" "$run" RANK=$r "$prefix/usr/bin/nsys" profile "${opts[@]}" \
        -o 'trace_%q{RANK}' ./harness "${harness[@]}" --rank $r \
        >"$run/profile-$r.log" 2>&1 || { cat "$run/profile-$r.log" >&2; die "$name: nsys profile failed"; }
      traces+=("trace_$r")
    done
  else
    in_sandbox "$prefix" "$run" "$prefix/usr/bin/nsys" profile "${opts[@]}" -o trace \
      ./harness "${harness[@]}" --ranks "$ranks" \
      >"$run/profile.log" 2>&1 || { cat "$run/profile.log" >&2; die "$name: nsys profile failed"; }
    traces=(trace)
  fi
  for t in "${traces[@]}"; do
    if [ ! -f "$run/$t.nsys-rep" ]; then
      in_sandbox "$prefix" "$run" "$prefix/usr/lib/nsight-systems/host-linux-x64/QdstrmImporter" \
        -i "$t.qdstrm" >"$run/import.log" 2>&1 || { say "$name: QdstrmImporter failed"; return 3; }
    fi
    [ -f "$run/$t.nsys-rep" ] || die "$name: no $t.nsys-rep (see $run)"
    rm -f "$run/$t.qdstrm"
    mkdir -p "$run/stats/$t"
    if [ -n "$gpu" ]; then
      # synthetic CUDA work in the export (RUN/T.sqlite, the trace kept), as record_once does
      local devices
      if [ "$per_trace" = 1 ]; then devices=${rank_devices[${t#trace_}]}
      else devices=$(IFS=,; echo "${rank_devices[*]}"); fi
      { in_sandbox "$prefix" "$run" "$prefix/usr/bin/nsys" export --type sqlite \
          --force-overwrite=true -o "$t.sqlite" "$t.nsys-rep" &&
        in_sandbox "$prefix" "$run" "$prefix/usr/bin/nsys" export --type sqlite --lazy=false \
          --force-overwrite=true -o "stats/$t/schema.sqlite" "$t.nsys-rep"; } \
        >"$run/export-$t.log" 2>&1 || { cat "$run/export-$t.log" >&2; die "$name: nsys export failed"; }
      "${tool[@]}" add-gpu-work --sqlite "$run/$t.sqlite" --schema-from "$run/stats/$t/schema.sqlite" \
        --mode "$gpu" --work "$gpu_work" --devices "$devices" || die "$name: could not add the synthetic GPU work"
      rm -f "$run/stats/$t/schema.sqlite"
      in_sandbox "$prefix" "$run" "$prefix/usr/bin/nsys" stats --report "$reports" --format csv \
        --timeunit nsec --output "stats/$t/nsys" --force-overwrite=true "$t.sqlite" \
        >"$run/stats-$t.log" 2>&1 || { cat "$run/stats-$t.log" >&2; die "$name: nsys stats failed"; }
      continue
    fi
    in_sandbox "$prefix" "$run" "$prefix/usr/bin/nsys" stats --report "$reports" --format csv \
      --timeunit nsec --output "stats/$t/nsys" --sqlite "stats/$t/trace.sqlite" \
      --force-export=true --force-overwrite=true "$t.nsys-rep" >"$run/stats-$t.log" 2>&1 ||
      { cat "$run/stats-$t.log" >&2; die "$name: nsys stats failed"; }
  done
}

# check_ranks NAME RUN: the private checks and `fixtures.py check-ranks` over every trace
check_ranks() {
  local name=$1 run=$2 csvs=() t
  for t in "$run"/stats/*/; do
    t=$(basename "$t")
    local sqlite=$run/stats/$t/trace.sqlite
    [ -n "$gpu" ] && sqlite=$run/$t.sqlite
    "${tool[@]}" check-private --sqlite "$sqlite" --rep "$run/$t.nsys-rep" \
      --repo "$repo" --neutral "$work" || return 1
    if [ "$version" = 2022.4 ]; then csvs+=(--csv "$run/stats/$t/nsys_nvtxpptrace.csv")
    else csvs+=(--csv "$run/stats/$t/nsys_nvtx_pushpop_trace.csv"); fi
  done
  "${tool[@]}" check-ranks "${csvs[@]}" --capture-range "$m_capture" "${rank_expect[@]}"
}

# check NAME RUN PREFIX: 0 keep, 3 record again (noisy timing), anything else: fail
check() {
  local name=$1 run=$2 prefix=$3 pushpop gpucsv sqlite
  if [ "$ranks" -gt 0 ]; then check_ranks "$name" "$run"; return; fi
  if [ "$version" = 2022.4 ]; then
    pushpop=$run/stats/nsys_nvtxpptrace.csv gpucsv=$run/stats/nsys_nvtxgpuproj.csv
  else
    pushpop=$run/stats/nsys_nvtx_pushpop_trace.csv gpucsv=$run/stats/nsys_nvtx_gpu_proj_trace.csv
  fi
  if [ -n "$gpu" ]; then sqlite=$run/trace.sqlite; else sqlite=$run/stats/trace.sqlite; fi

  "${tool[@]}" check-private --sqlite "$sqlite" --rep "$run/trace.nsys-rep" \
    --repo "$repo" --neutral "$work" || return 1

  local pattern=()
  [ -n "$m_pattern" ] && pattern=(--pattern "$m_pattern")
  local rc=0
  "${tool[@]}" check-pushpop --csv "$pushpop" --capture-range "$m_capture" \
    --iterations "$m_iterations" "${pattern[@]}" "${expect[@]}" \
    --summary-out "$run/pushpop-summary.json" || rc=$?
  [ "$rc" = 0 ] || return "$rc"

  if [ -n "$gpu" ]; then
    "${tool[@]}" check-gpu --csv "$gpucsv" "${gpu_expect[@]}" || return 1
  else
    # a CPU-only trace: nsys skips the projection and leaves a 0-byte CSV
    local why='does not contain CUDA API data'
    [ "$name" = no-nvtx ] && why='does not contain NV Tools Extension (NVTX) data'
    if [ -s "$gpucsv" ] || ! grep -q "SKIPPED: .*$why" "$run/stats.log"; then
      say "$name: expected the GPU projection to be skipped ($why)"
      return 1
    fi
  fi
  if [ "$name" = no-nvtx ] && ! grep -q 'SKIPPED: .*does not contain NV Tools Extension (NVTX) data' "$run/stats.log"; then
    say "$name: expected the push/pop report to be skipped for lack of NVTX data"
    return 1
  fi
  return 0
}

make_one() {
  local name=$1
  scenario "$name"
  local prefix run=$work/run-$name attempt=1 rc
  prefix=$(prepare_nsys "$version")
  say "$name: recording with nsys $version"
  while :; do
    rc=0
    record_once "$name" "$prefix" "$run" || rc=$?
    [ "$rc" = 0 ] && { check "$name" "$run" "$prefix" || rc=$?; }
    [ "$rc" = 0 ] && break
    if [ "$rc" = 3 ] && [ "$attempt" -lt "$tries" ]; then
      attempt=$((attempt + 1))
      say "$name: timing too noisy (or import failed), recording again (attempt $attempt of $tries)"
      sleep 1
      continue
    fi
    keep_work=1
    die "$name: the recording is not what the scenario needs (see $run)"
  done

  # keep it
  local trace_file=trace.nsys-rep
  [ -n "$gpu" ] && trace_file=trace.sqlite
  rm -rf "$dest"
  mkdir -p "$dest"
  if [ "$per_trace" = 1 ] && [ -n "$gpu" ]; then
    cp "$run"/trace_*.sqlite "$dest/"
    trace_file='trace_%q{RANK}.sqlite'
  elif [ "$per_trace" = 1 ]; then
    cp "$run"/trace_*.nsys-rep "$dest/"
    trace_file='trace_%q{RANK}.nsys-rep'
  else
    cp "$run/$trace_file" "$dest/$trace_file"
  fi
  local manifest=(--out "$dest/manifest.yaml" --profile "$m_profile" --run-id "$m_run_id"
                  --run-dir-name "$(basename "$dest")" --trace-file "$trace_file"
                  --capture-range "$m_capture" --iterations "$m_iterations" --warmup "$m_warmup"
                  --data-source "$m_source")
  [ -n "$m_pattern" ] && manifest+=(--iteration-pattern "$m_pattern")
  [ "$m_sha" = 1 ] && manifest+=(--trace-sha256 "$dest/$trace_file")
  "${tool[@]}" manifest "${manifest[@]}" >/dev/null

  # what nsys printed, for people to look at (not committed)
  mkdir -p "$csv_dir/$name"
  rm -f "$csv_dir/$name"/*
  cp "$run"/stats/*.csv "$run"/stats/*/*.csv "$run/stats.log" "$run/pushpop-summary.json" "$csv_dir/$name/" 2>/dev/null || true
  echo "$version" > "$csv_dir/$name/nsys-version"
  say "$name: kept $(du -ch "$dest"/trace* | tail -n 1 | cut -f1) $dest (nsys $version, attempt $attempt)"
}

main() {
  local selected=()
  for arg in "$@"; do
    case $arg in
      --list) printf '%s\n' "${SCENARIOS[@]}"; exit 0 ;;
      -h|--help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
      -*) die "unknown option '$arg'" ;;
      *) selected+=("$arg") ;;
    esac
  done
  [ "${#selected[@]}" -gt 0 ] || selected=("${SCENARIOS[@]}")
  for name in "${selected[@]}"; do scenario "$name"; done   # fail early on a typo

  command -v gcc >/dev/null || die "gcc is needed to build the harness"
  python3 -c 'import yaml' 2>/dev/null || die "PyYAML is needed (pip install pyyaml)"
  find_unshare

  local started=$SECONDS
  for name in "${selected[@]}"; do make_one "$name"; done
  say "recorded ${#selected[@]} scenario(s) in $((SECONDS - started)) s; CSVs in $csv_dir"
}

main "$@"
