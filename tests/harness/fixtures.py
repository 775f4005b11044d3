#!/usr/bin/env python3
"""Helpers for scripts/make-fixtures.sh: manifests, privacy and shape checks, synthetic GPU work.

Subcommands (each prints what it found on standard output and exits non-zero on failure):

  manifest      write a run directory's manifest.yaml the way the Python profiling harness does
                (PyYAML safe_dump, sorted keys, block style)
  check-private fail when a trace or its SQLite export holds a path or environment variable of
                the machine that recorded it
  check-pushpop read nsys's nvtx_pushpop_trace CSV (not RFC 4180: quotes are not doubled and
                newlines are raw, so the row is pinned down by its typed columns), compare the
                ranges with what the harness pushed and what the run should show
                (exit 3: only the timing is off, record again)
  add-gpu-work  turn the harness's `gpu:*` NVTX marks of a SQLite export into synthetic CUDA
                runtime calls, kernels and copies, in the tables and columns nsys itself uses
  check-gpu     compare an nvtx_gpu_proj_trace CSV with the synthetic work

Needs Python 3.8+ and PyYAML (the harness's own YAML library).
"""

import argparse
import json
import os
import re
import sqlite3
import statistics
import sys

# ------------------------------------------------------------------------------------------------
# Names the harness pushes (tests/harness/harness.c; keep in step)
# ------------------------------------------------------------------------------------------------

PLAIN_WORK = [
    ["preprocessing"],
    ["preprocessing", "resize"],
    ["inference"],
    ["postprocessing"],
    ["postprocessing", "resize"],
]

HOSTILE_PRE = 'pre,processing "quoted"'
HOSTILE_PRE_CHILD = "resize | \u7e2e\u653e | cafe\u0301 | \U0001F469\u200d\U0001F4BB \U0001F680"
HOSTILE_INFERENCE = "infer,\nence"
HOSTILE_POST = '<script>alert("x")</script> <b>bold</b> @octocat @org/team #123'
HOSTILE_POST_CHILD = ":leading colon `tick` ```fence```"
HOSTILE_EXTRA = ['"sync"', 'x",1,2,"y', "multi\nline"]

HOSTILE_WORK = [
    [HOSTILE_PRE],
    [HOSTILE_PRE, HOSTILE_PRE_CHILD],
    [HOSTILE_INFERENCE],
    [HOSTILE_POST],
    [HOSTILE_POST, HOSTILE_POST_CHILD],
] + [[name] for name in HOSTILE_EXTRA]


def llama_work(layers, tokens):
    """The work paths of --llama LAYERS passes for the given token indexes."""
    paths = [["embed"], ["sample"]]
    for t in tokens:
        for layer in range(layers):
            outer = f"layer_{layer}_token_{t}"
            paths += [[outer], [outer, f"ensure_layer_{layer}_weights"],
                      [outer, f"forward_layer_{layer}"]]
    return paths

DEFAULT_PATTERN = r"^iteration (\d+)$"

# ------------------------------------------------------------------------------------------------
# manifest
# ------------------------------------------------------------------------------------------------

DATA_SOURCES = {
    # the contract's example
    "dummy": {
        "description": {
            "image_shape": [64, 64, 3],
            "include_image": True,
            "record_count": 2,
            "tensor_shape": [4, 4],
            "type": "dummy",
        },
        "name": "dummy",
        "record_ids": ["dummy-0", "dummy-1"],
    },
    # COCO-style ids: plain `000000000139` is a string in YAML 1.1 but 139 in YAML 1.2
    "coco": {
        "description": {
            "annotations": "annotations/instances_val2017.json",
            "image_shape": [640, 480, 3],
            "record_count": 3,
            "split": "val2017",
            "type": "coco",
        },
        "name": "coco-val2017-subset",
        "record_ids": ["000000000139", "000000000285", "000000000632"],
    },
}


def cmd_manifest(args):
    import yaml  # imported here so that the other subcommands need no PyYAML

    source = DATA_SOURCES[args.data_source]
    command_line = (
        f"development/profiling/main.py --target {args.profile} --data-source {args.data_source}"
        f" --config development/profiling/smoke_config.yaml --device cuda:0"
        f" --warmup {args.warmup} --iterations {args.iterations} --record-loading eager"
        f" --run-id {args.run_id} --seed 0"
    )
    data = {
        "capture_range": None if args.capture_range == "null" else args.capture_range,
        "command_line": command_line,
        "cuda": {
            "synchronize_after_capture": True,
            "synchronize_after_warmup": True,
            "synchronize_before_capture": True,
            "synchronize_before_warmup": True,
            "synchronize_each_iteration": False,
        },
        "data_source": {"description": source["description"], "name": source["name"]},
        "device": "cuda:0",
        "expected_trace_path": (
            f"inference_profiling/snippets/{args.profile}/runs/{args.run_dir_name}/{args.trace_file}"
        ),
        "git_commit": None,
        "output_summaries": [{"dtype": "torch.float32", "shape": [4], "sum": 240.0}],
        "profile_name": args.profile,
        "record_ids": list(source["record_ids"]),
        "run_id": args.run_id,
        "target": {"import_path": None, "name": args.profile, "profile_prepare": False},
        "workload": {
            "iterations": args.iterations,
            "record_loading": "eager",
            "seed": 0,
            "validate_output": True,
            "warmup": args.warmup,
        },
    }
    if args.iteration_pattern is not None:
        data["iteration_pattern"] = args.iteration_pattern
    if args.trace_sha256 is not None:
        import hashlib

        with open(args.trace_sha256, "rb") as f:
            data["trace_sha256"] = hashlib.sha256(f.read()).hexdigest()
    text = yaml.safe_dump(data, sort_keys=True, default_flow_style=False)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {args.out}")


# ------------------------------------------------------------------------------------------------
# check-private
# ------------------------------------------------------------------------------------------------

# The only variables the recording environment may hold (LD_PRELOAD is nsys's own).
ALLOWED_ENV = {"PATH", "HOME", "LD_LIBRARY_PATH", "NSYS_NVTX_PROFILER_REGISTER_ONLY", "LD_PRELOAD",
               "RANK"}  # RANK: the rank of a per-rank recording, as a launcher sets it
# The processes a trace may list: nsys's own and the harness (recorded in a PID namespace).
ALLOWED_PROCESSES = {"./harness", "harness", "nsys", "nsys-launcher", "nsys-tee"}
# Values of the invoking environment too common to mean anything when found in a trace.
MIN_SECRET_LENGTH = 8


def forbidden_strings(args):
    """What must not appear: the repository, /root, /work, the invoking user's HOME, and the
    values of the invoking environment (besides those the minimal environment shares)."""
    forbidden = {"/root", "/work"}
    forbidden.add(os.path.realpath(args.repo))
    home = os.environ.get("HOME", "")
    if len(home) > 1:
        forbidden.add(home)
    shared = set(args.allow_value or [])
    for name, value in os.environ.items():
        if name in ALLOWED_ENV and name != "PATH" and name != "HOME":
            continue
        if len(value) >= MIN_SECRET_LENGTH and value not in shared and "/usr/bin:/bin" != value:
            forbidden.add(value)
    return sorted(forbidden)


def env_names_in_text(text):
    """Variable names in `NAME=value` / `NAME="value"` lists (nsys's DeviceEnvironment and
    ENVIRONMENT_VARIABLE rows)."""
    return set(re.findall(r'(?:^|;)([A-Za-z_][A-Za-z0-9_]*)=', text))


def cmd_check_private(args):
    problems = []
    needles = forbidden_strings(args)
    foreign_env = {n for n in os.environ if n not in ALLOWED_ENV and n != "_"}

    con = sqlite3.connect(f"file:{args.sqlite}?mode=ro", uri=True)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    env_rows = 0
    for table in tables:
        for row in con.execute(f'SELECT * FROM "{table}"'):
            for value in row:
                if isinstance(value, bytes):
                    value = value.decode("utf-8", "replace")
                if not isinstance(value, str):
                    continue
                for needle in needles:
                    if needle in value:
                        problems.append(f"{table}: holds {needle!r}")
                # environment blocks (NUL- or ';'-separated NAME=value lists)
                for var in re.findall(r'(?:^|[\0;])([A-Za-z_][A-Za-z0-9_]*)=', value):
                    if var in foreign_env:
                        problems.append(f"{table}: holds the variable {var} of this machine")
        # where nsys keeps the environment
        if table == "TARGET_INFO_SYSTEM_ENV":
            for (value,) in con.execute(
                "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment'"
            ):
                env_rows += 1
                extra = env_names_in_text(value) - ALLOWED_ENV
                if extra:
                    problems.append(f"DeviceEnvironment holds variables {sorted(extra)}")
        if table == "PROCESSES":
            for (name,) in con.execute("SELECT name FROM PROCESSES"):
                if name not in ALLOWED_PROCESSES:
                    problems.append(f"PROCESSES: a process of this machine: {name!r}")
        if table in ("META_DATA_CAPTURE", "EXPORT_META_DATA"):
            for name, value in con.execute(f'SELECT name, value FROM "{table}"'):
                if name.endswith("ENVIRONMENT_VARIABLE"):
                    env_rows += 1
                    var = value.split("=", 1)[0]
                    if var not in ALLOWED_ENV:
                        problems.append(f"{table}: environment variable {var}")
                if name.endswith("WORKING_DIR") and not value.startswith(args.neutral):
                    problems.append(f"{table}: working folder {value!r} is not the neutral one")
    con.close()

    # the report itself (partly plain text)
    for path in args.rep or []:
        with open(path, "rb") as f:
            blob = f.read()
        for needle in needles:
            if needle.encode() in blob:
                problems.append(f"{os.path.basename(path)}: holds {needle!r}")
        for name in foreign_env:
            if (name + "=").encode() in blob:
                problems.append(f"{os.path.basename(path)}: holds variable {name}=")

    if problems:
        for p in problems:
            print(f"PRIVATE: {p}")
        print(f"{len(problems)} problem(s); checked {len(needles)} forbidden strings")
        sys.exit(1)
    print(f"private: ok ({len(tables)} tables, {env_rows} environment rows, "
          f"{len(needles)} forbidden strings)")


# ------------------------------------------------------------------------------------------------
# nvtx_pushpop_trace CSV
# ------------------------------------------------------------------------------------------------

HEADER = ("Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,"
          "NumChild,RangeId,ParentId,RangeStack,NameTree")
ROW_HEAD = re.compile(r"(\d+),(\d+),(\d+),(\d+),(\d+),")
ROW_TAIL = re.compile(r",(\d+),(\d+),(\d+),(\d+),(\d+),(\d*|None),((?::\d+)+),")


def csv_field(value):
    """How nsys writes a value: wrapped in quotes when it holds a comma, nothing escaped."""
    return f'"{value}"' if "," in value else value


def csv_unfield(field):
    if len(field) >= 2 and field[0] == '"' and field[-1] == '"' and "," in field[1:-1]:
        return field[1:-1]
    return field


def read_pushpop(path):
    """Rows of nsys's push/pop CSV. A row is accepted only when every typed column agrees:
    Duration = End - Start = DurChild + DurNonChild, RangeStack ends with RangeId, NameTree is
    the name after Lvl pairs of dashes, and the next row (or the end) follows."""
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    if text == "":
        return None
    first, _, rest = text.partition("\n")
    if first.rstrip("\r") != HEADER:
        raise SystemExit(f"{path}: unexpected header {first!r}")
    rows, pos = [], len(first) + 1
    while pos < len(text):
        head = ROW_HEAD.match(text, pos)
        if head is None:
            raise SystemExit(f"{path}: no row at offset {pos}: {text[pos:pos + 80]!r}")
        start, end, dur, child, nonchild = map(int, head.groups())
        name_at = head.end()
        for tail in ROW_TAIL.finditer(text, name_at):
            pid, tid, lvl, nchild, rid = map(int, tail.groups()[:5])
            parent, stack = tail.group(6), tail.group(7)
            field = text[name_at:tail.start()]
            name = csv_unfield(field)
            tree = csv_field("-" * (2 * lvl) + name) + "\n"
            after = tail.end()
            if not (text.startswith(tree, after) and dur == end - start
                    and child + nonchild == dur and stack.split(":")[-1] == str(rid)):
                continue
            nxt = after + len(tree)
            if nxt < len(text) and ROW_HEAD.match(text, nxt) is None:
                continue
            rows.append({
                "start": start, "end": end, "duration": dur, "dur_child": child,
                "dur_nonchild": nonchild, "name": name, "pid": pid, "tid": tid, "lvl": lvl,
                "num_child": nchild, "id": rid,
                "parent": None if parent in ("", "None") else int(parent),
                "stack": stack,
            })
            pos = nxt
            break
        else:
            raise SystemExit(f"{path}: cannot pin down the row at offset {pos}: "
                             f"{text[pos:pos + 120]!r}")
    return rows


def strip_domain(name):
    return name.split(":", 1)[1] if ":" in name else None


def analyse(rows, capture_range, pattern, iterations):
    """The contract's reading of a push/pop trace (CONTRACT.md section 3), for fixture checks."""
    by_id = {r["id"]: r for r in rows}
    regex = re.compile(pattern)
    children = {}
    for r in rows:
        children.setdefault(r["parent"], []).append(r)

    def matches(r):
        return regex.fullmatch(r["name"]) is not None

    def index(r):
        return int(regex.fullmatch(r["name"]).group(1))

    captures = []
    if capture_range is not None:
        captures = [r for r in rows if r["parent"] is None
                    and (r["name"] == capture_range or strip_domain(r["name"]) == capture_range)]
    warnings = set()
    if capture_range is not None and not captures:
        warnings.add("capture_range_missing")
    if len(captures) > 1:
        warnings.add("capture_range_multiple")

    if captures:
        measured = [c for cap in captures for c in children.get(cap["id"], [])
                    if matches(c) and (c["pid"], c["tid"]) == (cap["pid"], cap["tid"])]
    else:
        def outermost(r):
            p = r["parent"]
            while p is not None:
                if matches(by_id[p]):
                    return False
                p = by_id[p]["parent"]
            return True

        per_thread = {}
        for r in rows:
            if matches(r) and outermost(r):
                per_thread.setdefault((r["pid"], r["tid"]), []).append(r)
        measured = []
        if per_thread:
            best = min(per_thread.items(), key=lambda kv: (
                -len(kv[1]), min(x["start"] for x in kv[1]), kv[0][0], kv[0][1]))
            measured = best[1]
    measured_ids = {r["id"] for r in measured}
    elsewhere = [r for r in rows if matches(r) and r["id"] not in measured_ids]
    if elsewhere:
        warnings.add("capture_range_exceeded")

    def child_names(r):
        return tuple(sorted(c["name"] for c in children.get(r["id"], [])))

    latest = max((r["end"] for r in rows), default=0)
    common = None
    if measured:
        sets = [child_names(r) for r in measured]
        common = max(set(sets), key=sets.count)
    complete = {}
    for r in measured:
        if captures:
            cap_end = by_id[r["parent"]]["end"]
            complete[r["id"]] = r["end"] != cap_end
        else:
            complete[r["id"]] = not (r["end"] == latest and child_names(r) != common)

    measured.sort(key=lambda r: (r["start"], r["id"]))
    seen, duplicates, later = set(), set(), set()
    for r in measured:
        i = index(r)
        if i in seen:
            duplicates.add(i)
            later.add(r["id"])
        seen.add(i)
    complete_indexes = {index(r) for r in measured if complete[r["id"]]}
    missing = [i for i in range(iterations) if i not in complete_indexes]
    unexpected = sorted({index(r) for r in measured if index(r) >= iterations})
    if missing:
        warnings.add("missing_iterations")
    if unexpected:
        warnings.add("unexpected_iterations")
    if duplicates:
        warnings.add("duplicate_iterations")

    stats_rows = [r for r in measured if complete[r["id"]] and r["id"] not in later]
    durations = [r["duration"] for r in stats_rows]
    slow = []
    if durations:
        median = statistics.median(durations)
        mad = statistics.median(abs(d - median) for d in durations)
        first = stats_rows[0]
        if first["duration"] > 1.5 * median:
            warnings.add("first_iteration_slow")
        mean = statistics.mean(durations)
        stdev = statistics.stdev(durations) if len(durations) > 1 else 0.0
        if mean > 0 and stdev / mean > 0.10:
            warnings.add("high_variance")
        slow = sorted(index(r) for r in stats_rows if r["duration"] > median + 5 * mad)
        if slow:
            warnings.add("slow_iterations")

    # ranges that are neither a capture range, nor a measured iteration, nor below one
    attributed = set(measured_ids) | {c["id"] for c in captures}

    def below_measured(r):
        p = r["parent"]
        while p is not None:
            if p in measured_ids:
                return True
            p = by_id[p]["parent"]
        return False

    unattributed = [r for r in rows if r["id"] not in attributed and not below_measured(r)]

    def scoped(r):
        path, p = [r["name"]], r["parent"]
        while p is not None and p not in measured_ids:
            path.insert(0, by_id[p]["name"])
            p = by_id[p]["parent"]
        return path

    work_paths = set()
    for r in rows:
        if r["id"] not in measured_ids and below_measured(r):
            work_paths.add(tuple(scoped(r)))

    return {
        "captures": len(captures),
        "measured": [index(r) for r in measured],
        "found": len(measured),
        "complete": sum(1 for r in measured if complete[r["id"]]),
        "incomplete": sorted(index(r) for r in measured if not complete[r["id"]]),
        "missing": missing,
        "unexpected": unexpected,
        "duplicates": sorted(duplicates),
        "elsewhere": len(elsewhere),
        "unattributed": len(unattributed),
        "slow": slow,
        "durations": durations,
        "first_ratio": (durations[0] / statistics.median(durations)) if durations else None,
        "warnings": sorted(warnings),
        "work_paths": sorted(work_paths),
        "distinct_work_paths": len(work_paths),
        "threads": len({(r["pid"], r["tid"]) for r in rows}),
        "rows": len(rows),
    }


TIMING_WARNINGS = {"first_iteration_slow", "high_variance", "slow_iterations"}


def cmd_check_pushpop(args):
    rows = read_pushpop(args.csv)
    if rows is None:
        if args.expect_empty:
            print("push/pop: empty, as expected (no NVTX data)")
            return
        raise SystemExit(f"{args.csv}: empty push/pop report")
    if args.expect_empty:
        raise SystemExit(f"{args.csv}: expected no NVTX data, found {len(rows)} rows")

    capture = None if args.capture_range == "null" else args.capture_range
    result = analyse(rows, capture, args.pattern, args.iterations)
    summary = {k: v for k, v in result.items() if k not in ("work_paths", "durations")}
    print("push/pop:", json.dumps(summary, ensure_ascii=False))
    if args.summary_out:
        with open(args.summary_out, "w", encoding="utf-8") as f:
            json.dump(result, f, ensure_ascii=False, indent=1)
            f.write("\n")

    problems, timing = [], []
    expected = {
        "found": args.expect_found,
        "complete": args.expect_complete,
        "unattributed": args.expect_unattributed,
    }
    for key, value in expected.items():
        if value is not None and result[key] != value:
            problems.append(f"{key}: expected {value}, got {result[key]}")
    if args.expect_measured is not None:
        want = [int(x) for x in args.expect_measured.split(",")]
        if result["measured"] != want:
            problems.append(f"measured indexes: expected {want}, got {result['measured']}")
    want_warnings = set(filter(None, (args.expect_warnings or "").split(",")))
    got = set(result["warnings"])
    for code in sorted(want_warnings ^ got):
        (timing if code in TIMING_WARNINGS else problems).append(
            f"warning {code}: expected {'present' if code in want_warnings else 'absent'}")
    if args.expect_slow is not None:
        want = [int(x) for x in args.expect_slow.split(",") if x]
        if result["slow"] != want:
            timing.append(f"slow iterations: expected {want}, got {result['slow']}")

    if args.expect_first_ratio is not None:
        low, high = (float(x) for x in args.expect_first_ratio.split(","))
        ratio = result["first_ratio"]
        if ratio is None or not low <= ratio <= high:
            timing.append(f"first iteration / median: expected {low}-{high}, got {ratio}")

    if args.work is not None:
        if args.work == "llama":
            base = llama_work(args.layers, sorted(set(result["measured"])))
        else:
            base = {"plain": PLAIN_WORK, "hostile": HOSTILE_WORK}[args.work]
        want = sorted(tuple(args.name_prefix + n for n in path) for path in base)
        if result["work_paths"] != want:
            problems.append("work ranges below the iterations differ:\n  expected "
                            + json.dumps(want, ensure_ascii=False) + "\n  got      "
                            + json.dumps(result["work_paths"], ensure_ascii=False))

    for p in problems:
        print(f"SHAPE: {p}")
    for p in timing:
        print(f"TIMING: {p} (durations {result['durations']})")
    if problems:
        sys.exit(1)
    if timing:
        sys.exit(3)
    print("push/pop: as intended")


# ------------------------------------------------------------------------------------------------
# check-ranks
# ------------------------------------------------------------------------------------------------


def cmd_check_ranks(args):
    """The iterations of each process (a rank, ranks ordered by PID) under its own capture range:
    the counts each rank must have, and (timing) the slower rank slowest in enough indexes and
    every rank's passes steady (coefficient of variation under 0.15). One CSV per trace: the
    ranks of each trace follow the previous one's."""
    per_pid = {}
    for trace, path in enumerate(args.csv):
        rows = read_pushpop(path) or []
        by_id = {r["id"]: r for r in rows}
        regex = re.compile(args.pattern)
        for r in rows:
            parent = by_id.get(r["parent"]) if r["parent"] is not None else None
            if parent is None or parent["parent"] is not None or parent["name"] != args.capture_range:
                continue
            m = regex.fullmatch(r["name"])
            if m:
                per_pid.setdefault((trace, r["pid"]), {})[int(m.group(1))] = r["duration"]
    ranks = [per_pid[p] for p in sorted(per_pid)]
    print("ranks:", json.dumps([{"trace": t, "pid": p, "iterations": len(per_pid[(t, p)])}
                                for t, p in sorted(per_pid)]))
    want = [int(x) for x in args.expect_counts.split(",")]
    if [len(r) for r in ranks] != want:
        print(f"SHAPE: iterations per rank: expected {want}, got {[len(r) for r in ranks]}")
        sys.exit(1)
    timing = []
    for k, r in enumerate(ranks):
        values = list(r.values())
        mean = sum(values) / len(values)
        sd = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
        if mean > 0 and sd / mean > 0.15:
            timing.append(f"rank {k}: cv {sd / mean:.3f} (durations {values})")
    if args.slow_rank is not None:
        slowest = 0
        for index in ranks[args.slow_rank]:
            times = [(r.get(index, -1), k) for k, r in enumerate(ranks)]
            if max(times)[1] == args.slow_rank:
                slowest += 1
        if slowest < args.min_slowest:
            timing.append(f"rank {args.slow_rank} slowest in {slowest} indexes, "
                          f"expected at least {args.min_slowest}")
    for p in timing:
        print(f"TIMING: {p}")
    if timing:
        sys.exit(3)
    print("ranks: as intended")


# ------------------------------------------------------------------------------------------------
# add-gpu-work
# ------------------------------------------------------------------------------------------------

# The tables the projection report reads; their CREATE statements are taken from a non-lazy
# export (`nsys export --lazy=false`) by the same nsys, so they are exactly what nsys writes.
CUDA_TABLES = ["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL",
               "CUPTI_ACTIVITY_KIND_MEMCPY"]
# With `--work full` (the gpu-work fixtures): memsets and the GPUs' descriptions too, which
# `cuda_gpu_trace` needs (it is skipped without TARGET_INFO_GPU).
FULL_TABLES = ["CUPTI_ACTIVITY_KIND_MEMSET", "TARGET_INFO_GPU"]
GPU_NAME = "NVIDIA A100-SXM4-80GB"
MEMCPY_DTOH = 2
# `--work full`: the second kernel of `inference` has a name with commas, quotes and
# templates (`",` inside it, as no real CSV reader expects), a small kernel runs in
# `preprocessing > resize` beside its copy (pageable host memory), and `inference` also sets
# memory and copies its output back to pageable host memory.
FULL_KERNELS = {
    "resize": ("resize_bilinear_kernel",
               "void resize_bilinear_kernel<uchar3, float>(uchar3 const*, float*, int, int)",
               30_000),
    "inference-2": ("attention_kernel",
                    'void attention_kernel<"causal",64, cutlass::half_t>(int, float const*, "x",1,2)',
                    1_400_000),
}
MEMSET_NS, MEMSET_BYTES = 5_000, 4096
DTOH_NS, DTOH_BYTES = 20_000, 16384

EVENT_TYPE_MARK = 34
EVENT_TYPE_PUSHPOP = 59
EVENT_CLASS_CUDA_RUNTIME = 0
MEMCPY_HTOD = 1
MEM_KIND_PAGEABLE, MEM_KIND_PINNED, MEM_KIND_DEVICE = 0, 1, 2
LAUNCH_REGULAR = 1

API_NS = 4_000        # a launch call on the host
QUEUE_NS = 6_000      # from the end of the call to the start of the work on the GPU

# Kernels a mark stands for, by where the mark is (the innermost range's name).
KERNELS = {
    # first and second launch of `inference`; the second runs past the range's end
    "inference": [
        ("conv2d_fprop_kernel",
         "void conv2d_fprop_kernel<float, 128, 4>(float const*, float const*, float*, int)",
         350_000),
        ("gemm_relu_kernel",
         "void gemm_relu_kernel<float, 64, 64, 8>(float const*, float const*, float*, int, int, int)",
         1_400_000),
    ],
    # launched inside the capture range, outside every iteration (output validation)
    None: [("reduce_sum_kernel", "void reduce_sum_kernel<float, 256>(float const*, float*, int)",
            90_000)],
}
COPY_NS = {"resize": (45_000, 64 * 64 * 3 * 4), "loader": (160_000, 4 * 1024 * 1024)}

# `--work llama` (the llama-gpu fixture, harness --llama with --gpu-markers): the kernels a mark
# stands for, by the innermost range's name with its numbers written `#`, one per launch in the
# range (the last repeats). forward_layer_L's GEMM covers most of it (the GPU-bound range);
# ensure_layer_L_weights launches nothing (host work).
LLAMA_KERNELS = {
    "embed": [("embedding_lookup_kernel",
               "void embedding_lookup_kernel<__nv_bfloat16>(int const*, __nv_bfloat16 const*, "
               "__nv_bfloat16*, int)", 20_000)],
    "forward_layer_#": [
        ("gemm_bf16_kernel",
         "void gemm_bf16_kernel<128, 128, 32>(__nv_bfloat16 const*, __nv_bfloat16 const*, "
         "__nv_bfloat16*, int, int, int)", 120_000),
        ("rmsnorm_kernel",
         "void rmsnorm_kernel<__nv_bfloat16>(__nv_bfloat16 const*, __nv_bfloat16*, int)",
         10_000),
    ],
    "sample": [("argmax_sampling_kernel",
                "void argmax_sampling_kernel<float>(float const*, int*, int)", 12_000)],
}


# `--work processes` (the gpu-processes fixture): a PyTorch kernel as nsys 2024.2 demangles it
# (`<unnamed>` namespaces, `(int)4` arguments, bracketed lambdas: ~1,100 characters), launched
# in `preprocessing > resize` after the copy.
PYTORCH_KERNEL = (
    "distribution_elementwise_grid_stride_kernel",
    "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4, "
    "void at::native::templates::cuda::normal_and_transform<float, float, (unsigned long)4, "
    "at::CUDAGeneratorImpl *, void at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *>"
    "(const at::TensorBase &, double, double, T1)::[lambda() (instance 1)]::operator ()() const::"
    "[lambda() (instance 2)]::operator ()() const::[lambda(curandStatePhilox4_32_10 *) (instance 2)]>"
    "(at::TensorIteratorBase &, T4)::[lambda(int, float) (instance 1)], "
    "void at::native::<unnamed>::distribution_nullary_kernel<float, float, (int)4, at::CUDAGeneratorImpl *, "
    "void at::native::templates::cuda::normal_and_transform<float, float, (unsigned long)4, "
    "at::CUDAGeneratorImpl *, void at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *>"
    "(const at::TensorBase &, double, double, T1)::[lambda() (instance 1)]::operator ()() const::"
    "[lambda() (instance 2)]::operator ()() const::[lambda(curandStatePhilox4_32_10 *) (instance 2)]>"
    "(at::TensorIteratorBase &, T4)::[lambda(int, float) (instance 1)]>(at::TensorIteratorBase &, "
    "T4, const T3 &, T5)::[lambda(int, float4) (instance 1)]>(long, at::PhiloxCudaState, T3, T4)",
    12_000,
)
# The second process (a tensor-parallel worker on GPU 1): per `inference` of the first, a
# `worker_step` range holding `forward`, which launches these two kernels. The first shares its
# base name with the first process's `conv2d_fprop_kernel<float, 128, 4>`.
WORKER_KERNELS = [
    ("conv2d_fprop_kernel",
     "void conv2d_fprop_kernel<__half, 64, 8>(__half const*, __half const*, __half*, int)",
     300_000, 1_000),
    ("ncclDevKernel_AllReduce_Sum_f16_RING_LL",
     "ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
     200_000, 500_000),
]


def add_second_process(con):
    """A second process's NVTX ranges and CUDA work, its correlation ids counted from the same
    start as the first's (each process counts its own, so they overlap): `worker_step` >
    `forward` over each `inference` of the first process, on the second process's main thread,
    launching WORKER_KERNELS on GPU 1. Returns what it added."""
    (first_tid,) = con.execute(
        "SELECT e.globalTid FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON e.textId = s.id"
        " WHERE e.eventType = ? AND coalesce(s.value, e.text) = 'inference' LIMIT 1",
        (EVENT_TYPE_PUSHPOP,)).fetchone()
    first_gpid = first_tid & 0xFFFFFFFFFF000000
    pids = [p for (p,) in con.execute("SELECT pid FROM PROCESSES")]
    pid = max(pids) + 1
    gpid = (first_gpid & ~(0xFFFFFF << 24)) | (pid << 24)
    tid = gpid | pid
    name = con.execute("SELECT name FROM PROCESSES WHERE globalPid = ?", (first_gpid,)).fetchone()
    insert(con, "PROCESSES", globalPid=gpid, pid=pid, name=name[0] if name else "./harness")
    thread = con.execute("SELECT nameId, priority FROM ThreadNames WHERE globalTid = ?",
                         (first_tid,)).fetchone()
    if thread:
        insert(con, "ThreadNames", nameId=thread[0], priority=thread[1], globalTid=tid)
    insert(con, "TARGET_INFO_GPU", vmId=0, id=1, name=GPU_NAME, busLocation="0000:0f:00.0",
           isDiscrete=1, totalMemory=85899345920, smCount=108, cuDevice=1,
           computeMajor=8, computeMinor=0)
    inferences = con.execute(
        """SELECT e.start, e.end FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON e.textId = s.id
           WHERE e.eventType = ? AND e.globalTid = ? AND coalesce(s.value, e.text) = 'inference'
           ORDER BY e.start""", (EVENT_TYPE_PUSHPOP, first_tid)).fetchall()
    launch = string_id(con, "cudaLaunchKernel_v7000")
    correlation, grid_id, stream_free, kernels = 100, 1_000_000, 0, 0
    for start, end in inferences:
        step = (start + 2_000, end - 2_000)
        forward = (step[0] + 1_000, step[1] - 1_000)
        for text, (a, b) in (("worker_step", step), ("forward", forward)):
            insert(con, "NVTX_EVENTS", start=a, end=b, eventType=EVENT_TYPE_PUSHPOP, text=text,
                   globalTid=tid, domainId=0)
        for short, demangled, duration, offset in WORKER_KERNELS:
            correlation += 1
            api_start = forward[0] + offset
            api_end = api_start + API_NS
            gpu_start = max(api_end + QUEUE_NS, stream_free)
            insert(con, "CUPTI_ACTIVITY_KIND_RUNTIME", start=api_start, end=api_end,
                   eventClass=EVENT_CLASS_CUDA_RUNTIME, globalTid=tid, correlationId=correlation,
                   nameId=launch, returnValue=0)
            insert(con, "CUPTI_ACTIVITY_KIND_KERNEL", start=gpu_start, end=gpu_start + duration,
                   deviceId=1, contextId=2, streamId=7, correlationId=correlation,
                   globalPid=gpid, demangledName=string_id(con, demangled),
                   shortName=string_id(con, short), launchType=LAUNCH_REGULAR, cacheConfig=0,
                   registersPerThread=32, gridX=128, gridY=1, gridZ=1, blockX=256, blockY=1,
                   blockZ=1, staticSharedMemory=0, dynamicSharedMemory=0,
                   localMemoryPerThread=0, localMemoryTotal=0, gridId=grid_id,
                   sharedMemoryExecuted=0)
            grid_id += 1
            stream_free = gpu_start + duration
            kernels += 1
    return {"pid": pid, "ranges": 2 * len(inferences), "kernels": kernels,
            "correlation_ids": [101, correlation]}


def string_id(con, value):
    row = con.execute("SELECT id FROM StringIds WHERE value = ?", (value,)).fetchone()
    if row:
        return row[0]
    next_id = con.execute("SELECT ifnull(max(id), 0) + 1 FROM StringIds").fetchone()[0]
    con.execute("INSERT INTO StringIds (id, value) VALUES (?, ?)", (next_id, value))
    return next_id


def insert(con, table, **values):
    columns = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    con.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(values.values()))


class EnclosingRanges:
    """Push/pop ranges of a thread open at a time, outermost first (name, start, end), for
    times asked in increasing order per thread: one sweep over each thread's ranges (a query
    per mark made large traces quadratic)."""

    def __init__(self, con):
        self.ranges = {}
        for name, start, end, tid in con.execute(
                """SELECT coalesce(s.value, e.text), e.start, e.end, e.globalTid FROM NVTX_EVENTS AS e
                   LEFT JOIN StringIds AS s ON e.textId = s.id
                   WHERE e.eventType = ? ORDER BY e.globalTid, e.start, e.end DESC""",
                (EVENT_TYPE_PUSHPOP,)):
            self.ranges.setdefault(tid, []).append((name, start, end))
        self.next = {tid: 0 for tid in self.ranges}
        self.open = {tid: [] for tid in self.ranges}

    def at(self, tid, ts):
        ranges = self.ranges.get(tid, [])
        stack = self.open.setdefault(tid, [])
        i = self.next.get(tid, 0)
        while i < len(ranges) and ranges[i][1] <= ts:
            stack.append(ranges[i])
            i += 1
        self.next[tid] = i
        stack[:] = [r for r in stack if r[2] is None or r[2] >= ts]
        return list(stack)


def cmd_add_gpu_work(args):
    llama = args.work == "llama"
    tables = CUDA_TABLES + (FULL_TABLES if args.work in ("full", "llama", "processes", "devices",
                                                         "devices-late", "rank-devices") else [])
    if args.metrics != "none":
        tables = tables + METRICS_TABLES
    schema = sqlite3.connect(f"file:{args.schema_from}?mode=ro", uri=True)
    ddl = []
    for table in tables:
        rows = schema.execute(
            "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL "
            "ORDER BY type = 'table' DESC", (table,)).fetchall()
        if not rows:
            raise SystemExit(f"{args.schema_from}: no {table} (export it with --lazy=false)")
        ddl.extend(r[0] for r in rows)
    schema.close()

    con = sqlite3.connect(args.sqlite)
    for table in tables:
        exists = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                             (table,)).fetchone()
        if exists:
            raise SystemExit(f"{args.sqlite}: already has {table}; expected a CPU-only export")
    for statement in ddl:
        con.execute(statement)

    if args.work in ("devices", "devices-late", "rank-devices"):
        if args.work == "rank-devices":
            added = add_rank_devices_work(con, [int(d) for d in args.devices.split(",")])
        else:
            added = add_devices_work(con, DEVICE_LATE_US if args.work == "devices-late" else 0)
        con.commit()
        con.execute("VACUUM")
        con.close()
        print("gpu work:", json.dumps(added))
        return

    marks = con.execute(
        """SELECT e.start, e.globalTid, coalesce(s.value, e.text) FROM NVTX_EVENTS AS e
           LEFT JOIN StringIds AS s ON e.textId = s.id
           WHERE e.eventType = ? AND coalesce(s.value, e.text) LIKE 'gpu:%'
           ORDER BY e.start""", (EVENT_TYPE_MARK,)).fetchall()
    if not marks:
        raise SystemExit(f"{args.sqlite}: no gpu:* marks (record the harness with --gpu-markers)")

    full = args.work in ("full", "processes")
    if full or llama:
        insert(con, "TARGET_INFO_GPU", vmId=0, id=0, name=GPU_NAME, busLocation="0000:07:00.0",
               isDiscrete=1, totalMemory=85899345920, smCount=108, cuDevice=0,
               computeMajor=8, computeMinor=0)
    pattern = re.compile(args.pattern)
    enclosing = EnclosingRanges(con)
    launch = string_id(con, "cudaLaunchKernel_v7000")
    memcpy = string_id(con, "cudaMemcpyAsync_v3020")
    memset = string_id(con, "cudaMemsetAsync_v3020")
    correlation, grid_id = 100, 1

    def add_kernel(tid, pid, api_start, names, duration):
        """A launch call at api_start and its kernel on stream 7; returns the call's end."""
        nonlocal correlation, grid_id
        short, demangled = names
        correlation += 1
        api_end = api_start + API_NS
        gpu_start = max(api_end + QUEUE_NS, stream_free.get(7, 0))
        insert(con, "CUPTI_ACTIVITY_KIND_RUNTIME", start=api_start, end=api_end,
               eventClass=EVENT_CLASS_CUDA_RUNTIME, globalTid=tid, correlationId=correlation,
               nameId=launch, returnValue=0)
        insert(con, "CUPTI_ACTIVITY_KIND_KERNEL", start=gpu_start, end=gpu_start + duration,
               deviceId=0, contextId=1, streamId=7, correlationId=correlation,
               globalPid=pid, demangledName=string_id(con, demangled),
               shortName=string_id(con, short), launchType=LAUNCH_REGULAR, cacheConfig=0,
               registersPerThread=32, gridX=256, gridY=1, gridZ=1, blockX=128, blockY=1,
               blockZ=1, staticSharedMemory=0, dynamicSharedMemory=0,
               localMemoryPerThread=0, localMemoryTotal=0, gridId=grid_id,
               sharedMemoryExecuted=0)
        grid_id += 1
        stream_free[7] = gpu_start + duration
        return api_end

    def add_copy(tid, pid, api_start, kind, src, dst, size, duration, stream):
        nonlocal correlation
        correlation += 1
        api_end = api_start + API_NS
        gpu_start = max(api_end + QUEUE_NS, stream_free.get(stream, 0), stream_free.get(7, 0)
                        if kind == MEMCPY_DTOH else 0)
        insert(con, "CUPTI_ACTIVITY_KIND_RUNTIME", start=api_start, end=api_end,
               eventClass=EVENT_CLASS_CUDA_RUNTIME, globalTid=tid, correlationId=correlation,
               nameId=memcpy, returnValue=0)
        insert(con, "CUPTI_ACTIVITY_KIND_MEMCPY", start=gpu_start, end=gpu_start + duration,
               deviceId=0, contextId=1, streamId=stream, correlationId=correlation,
               globalPid=pid, bytes=size, copyKind=kind, srcKind=src,
               dstKind=dst, srcDeviceId=0, srcContextId=1, dstDeviceId=0,
               dstContextId=1)
        stream_free[stream] = gpu_start + duration
        return api_end

    def add_memset(tid, pid, api_start):
        nonlocal correlation
        correlation += 1
        api_end = api_start + API_NS
        gpu_start = max(api_end + QUEUE_NS, stream_free.get(7, 0))
        insert(con, "CUPTI_ACTIVITY_KIND_RUNTIME", start=api_start, end=api_end,
               eventClass=EVENT_CLASS_CUDA_RUNTIME, globalTid=tid, correlationId=correlation,
               nameId=memset, returnValue=0)
        insert(con, "CUPTI_ACTIVITY_KIND_MEMSET", start=gpu_start, end=gpu_start + MEMSET_NS,
               deviceId=0, contextId=1, streamId=7, correlationId=correlation,
               globalPid=pid, value=0, bytes=MEMSET_BYTES, memKind=MEM_KIND_DEVICE)
        stream_free[7] = gpu_start + MEMSET_NS
        return api_end

    # the GPU runs one stream per kind of work; work on a stream never overlaps
    stream_free = {}
    per_thread_launches = {}
    inserted = {"kernels": 0, "copies": 0, "outside": 0, "skipped": 0}
    for ts, tid, what in marks:
        stack = enclosing.at(tid, ts)
        names = [s[0] for s in stack]
        iteration = next((n for n in names if pattern.fullmatch(n)), None)
        index = int(pattern.fullmatch(iteration).group(1)) if iteration else None
        if args.mode == "outside-only" and stack:
            inserted["skipped"] += 1
            continue
        if args.mode == "skip-iteration" and index == args.skip_iteration:
            inserted["skipped"] += 1
            continue
        pid = tid & 0xFFFFFFFFFF000000
        api_start = ts + 1_000
        if llama and what == "gpu:kernel" and stack:
            kernels = LLAMA_KERNELS.get(re.sub(r"[0-9]+", "#", names[-1]))
            if kernels:
                # the nth launch of this instance of the range (its thread and start)
                nth = per_thread_launches.get((tid, stack[-1][1]), 0)
                per_thread_launches[(tid, stack[-1][1])] = nth + 1
                short, demangled, duration = kernels[min(nth, len(kernels) - 1)]
                add_kernel(tid, pid, api_start, (short, demangled), duration)
                inserted["kernels"] += 1
                continue
        if full:
            # Every call of a mark starts 1 µs after the one before it (all inside its range).
            if what == "gpu:memcpy" and stack:
                add_kernel(tid, pid, api_start, FULL_KERNELS["resize"][:2],
                           FULL_KERNELS["resize"][2])
                add_copy(tid, pid, api_start + 5_000, MEMCPY_HTOD, MEM_KIND_PAGEABLE,
                         MEM_KIND_DEVICE, COPY_NS["resize"][1], COPY_NS["resize"][0], 14)
                inserted["kernels"] += 1
                inserted["copies"] += 1
                if args.work == "processes":
                    add_kernel(tid, pid, api_start + 10_000, PYTORCH_KERNEL[:2],
                               PYTORCH_KERNEL[2])
                    inserted["kernels"] += 1
                continue
            if what == "gpu:kernel" and names and names[-1].endswith("inference"):
                nth = per_thread_launches.get((tid, index), 0)
                per_thread_launches[(tid, index)] = nth + 1
                if nth == 0:
                    short, demangled, duration = KERNELS["inference"][0]
                    add_kernel(tid, pid, api_start, (short, demangled), duration)
                    add_memset(tid, pid, api_start + 5_000)
                    inserted["kernels"] += 1
                    inserted["memsets"] = inserted.get("memsets", 0) + 1
                else:
                    short, demangled, duration = FULL_KERNELS["inference-2"]
                    add_kernel(tid, pid, api_start, (short, demangled), duration)
                    add_copy(tid, pid, api_start + 5_000, MEMCPY_DTOH, MEM_KIND_DEVICE,
                             MEM_KIND_PAGEABLE, DTOH_BYTES, DTOH_NS, 16)
                    inserted["kernels"] += 1
                    inserted["copies"] += 1
                continue
        api_end = api_start + API_NS
        correlation += 1
        if what == "gpu:memcpy":
            where = "resize" if stack else "loader"
            duration, size = COPY_NS[where]
            stream = 14 if where == "resize" else 15
            gpu_start = max(api_end + QUEUE_NS, stream_free.get(stream, 0))
            insert(con, "CUPTI_ACTIVITY_KIND_RUNTIME", start=api_start, end=api_end,
                   eventClass=EVENT_CLASS_CUDA_RUNTIME, globalTid=tid, correlationId=correlation,
                   nameId=memcpy, returnValue=0)
            insert(con, "CUPTI_ACTIVITY_KIND_MEMCPY", start=gpu_start, end=gpu_start + duration,
                   deviceId=0, contextId=1, streamId=stream, correlationId=correlation,
                   globalPid=pid, bytes=size, copyKind=MEMCPY_HTOD, srcKind=MEM_KIND_PINNED,
                   dstKind=MEM_KIND_DEVICE, srcDeviceId=0, srcContextId=1, dstDeviceId=0,
                   dstContextId=1)
            stream_free[stream] = gpu_start + duration
            inserted["copies"] += 1
        elif what == "gpu:kernel":
            key = "inference" if names and names[-1].endswith("inference") else None
            if key == "inference":
                nth = per_thread_launches.get((tid, index), 0)
                per_thread_launches[(tid, index)] = nth + 1
                short, demangled, duration = KERNELS["inference"][min(nth, 1)]
            else:
                short, demangled, duration = KERNELS[None][0]
            stream = 7
            gpu_start = max(api_end + QUEUE_NS, stream_free.get(stream, 0))
            insert(con, "CUPTI_ACTIVITY_KIND_RUNTIME", start=api_start, end=api_end,
                   eventClass=EVENT_CLASS_CUDA_RUNTIME, globalTid=tid, correlationId=correlation,
                   nameId=launch, returnValue=0)
            insert(con, "CUPTI_ACTIVITY_KIND_KERNEL", start=gpu_start, end=gpu_start + duration,
                   deviceId=0, contextId=1, streamId=stream, correlationId=correlation,
                   globalPid=pid, demangledName=string_id(con, demangled),
                   shortName=string_id(con, short), launchType=LAUNCH_REGULAR, cacheConfig=0,
                   registersPerThread=32, gridX=256, gridY=1, gridZ=1, blockX=128, blockY=1,
                   blockZ=1, staticSharedMemory=0, dynamicSharedMemory=0,
                   localMemoryPerThread=0, localMemoryTotal=0, gridId=grid_id,
                   sharedMemoryExecuted=0)
            grid_id += 1
            stream_free[stream] = gpu_start + duration
            inserted["kernels"] += 1
        else:
            raise SystemExit(f"unknown mark {what!r}")
        if not stack:
            inserted["outside"] += 1
    if args.work == "processes":
        inserted["second_process"] = add_second_process(con)
    if args.metrics == "clock-drop":
        inserted["metrics"] = add_gpu_metrics(con, pattern, CLOCK_DROP_ITERATIONS)
    con.commit()
    con.execute("VACUUM")
    con.close()
    print("gpu work:", json.dumps(inserted))


# ------------------------------------------------------------------------------------------------
# add-gpu-work --metrics clock-drop (the gpu-clocks fixture): GPU metrics as
# `nsys profile --gpu-metrics-device=all` records them, sampled at 10 kHz on GPU 0, the SM clock
# 30 % lower during the counted iterations 3-7.
# ------------------------------------------------------------------------------------------------

# Both tables' CREATE statements come from the non-lazy export, as the CUDA tables' do (the
# columns NVIDIA's export documentation gives for 2023.4 and 2024.2; 2022.4's export has
# neither table).
METRICS_TABLES = ["TARGET_INFO_GPU_METRICS", "GPU_METRICS"]
METRICS_HZ = 10_000
# typeId: <hardware:8><VM:8><source:16><event tag:24><GPU:8>, as NVIDIA's recipes decompose it.
METRICS_SOURCE = 4
METRICS_TYPE = (METRICS_SOURCE << 32) | (1 << 8)
# The metric set's first metrics, with a made-up metricId each (nsys says they are not stable):
# the SM clock and the SYS clock, both in hertz as NVIDIA documents them, and GR Active (%).
METRICS = [(0, "GPC Clock Frequency"), (1, "SYS Clock Frequency"), (2, "GR Active")]
SM_CLOCK_HZ = 1_410_000_000       # an A100's boost clock, also written as its clockRate
SM_CLOCK_LOW_HZ = 987_000_000     # 30 % lower
SYS_CLOCK_HZ = 1_155_000_000
CLOCK_DROP_ITERATIONS = range(3, 8)


def add_gpu_metrics(con, pattern, low_iterations):
    """GPU 0's metrics every 100 µs from the first NVTX event to the last one's end: the SM clock
    at SM_CLOCK_LOW_HZ from the start of the first of `low_iterations` to the end of the last,
    SM_CLOCK_HZ elsewhere (1 MHz of jitter on every other sample, as the GPC clock wavers), a
    steady SYS clock, and GR Active. Returns what it added."""
    con.execute("UPDATE TARGET_INFO_GPU SET clockRate = ? WHERE id = 0", (SM_CLOCK_HZ,))
    for metric_id, name in METRICS:
        insert(con, "TARGET_INFO_GPU_METRICS", typeId=METRICS_TYPE, sourceId=METRICS_SOURCE,
               typeName="GPU Metrics", metricId=metric_id, metricName=name)
    first, last = con.execute("SELECT min(start), max(coalesce(end, start)) FROM NVTX_EVENTS"
                              ).fetchone()
    low = []
    for start, end, name in con.execute(
            """SELECT e.start, e.end, coalesce(s.value, e.text) FROM NVTX_EVENTS AS e
               LEFT JOIN StringIds AS s ON e.textId = s.id WHERE e.eventType = ?""",
            (EVENT_TYPE_PUSHPOP,)):
        m = pattern.fullmatch(name or "")
        if m and int(m.group(1)) in low_iterations:
            low.append((start, end))
    if not low:
        raise SystemExit("no iteration of the clock drop in the trace")
    low_start, low_end = min(s for s, _ in low), max(e for _, e in low)
    step = 1_000_000_000 // METRICS_HZ
    samples = 0
    for n, ts in enumerate(range(first - step, last + 2 * step, step)):
        sm = SM_CLOCK_LOW_HZ if low_start <= ts < low_end else SM_CLOCK_HZ
        sm += (n % 2) * 1_000_000
        for metric_id, value in ((0, sm), (1, SYS_CLOCK_HZ), (2, 80)):
            insert(con, "GPU_METRICS", timestamp=ts, typeId=METRICS_TYPE, metricId=metric_id,
                   value=value)
        samples += 1
    return {"samples": samples, "low_ns": [low_start, low_end]}


# ------------------------------------------------------------------------------------------------
# add-gpu-work --work devices (the gpu-devices fixtures): one process driving two GPUs, each
# with compute kernels and an NCCL all-reduce on a stream of its own that overlaps the compute
# for part of its time, so that each device's exposed communication is known by construction.
# ------------------------------------------------------------------------------------------------

MEMCPY_PTOP = 10
NCCL_STREAM = 20
# Per `inference` of the main thread, from G (100 µs after the range's start): each entry is
# (device, stream, short name, demangled name, start after G, duration), in µs.
DEVICE_KERNELS = [
    (0, 7, "gemm_fp16_kernel",
     "void gemm_fp16_kernel<128, 128, 32>(__half const*, __half const*, __half*, int, int, int)",
     0, 600),
    (0, 8, "bias_gelu_kernel", "void bias_gelu_kernel<__half>(__half*, __half const*, int)",
     500, 200),
    (0, NCCL_STREAM, "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
     "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 400, 500),
    (1, 7, "gemm_fp16_kernel",
     "void gemm_fp16_kernel<128, 128, 32>(__half const*, __half const*, __half*, int, int, int)",
     0, 800),
    (1, NCCL_STREAM, "ncclKernel_AllReduce_RING_LL_Sum_float",
     "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 650, 400),
]
# A peer-to-peer copy from device 0 to device 1 after the all-reduces: (start after G,
# duration, bytes).
DEVICE_PEER_COPY = (1100, 30, 64 * 1024)
# What each device does per iteration, by construction (µs): compute (overlaps counted once),
# communication, and communication while no compute kernel runs.
DEVICE_EXPECTED = {0: {"compute": 700, "communication": 500, "exposed": 200},
                   1: {"compute": 800, "communication": 400, "exposed": 250}}
# `--work devices-late` (the gpu-devices-head fixture): device 1's all-reduce starts this much
# later (µs), so that 100 µs more of it is exposed (350 µs, +40 %); device 0 is unchanged.
DEVICE_LATE_US = 100


def add_devices_work(con, late_us=0):
    """The gpu-devices work: DEVICE_KERNELS and DEVICE_PEER_COPY launched from each `inference`
    of the main thread (a call each, 10 µs apart from 10 µs into the range), with a
    TARGET_INFO_GPU row per device. Returns what it added."""
    for device, bus in ((0, "0000:07:00.0"), (1, "0000:0f:00.0")):
        insert(con, "TARGET_INFO_GPU", vmId=0, id=device, name=GPU_NAME, busLocation=bus,
               isDiscrete=1, totalMemory=85899345920, smCount=108, cuDevice=device,
               computeMajor=8, computeMinor=0)
    inferences = con.execute(
        """SELECT e.start, e.end, e.globalTid FROM NVTX_EVENTS AS e
           LEFT JOIN StringIds AS s ON e.textId = s.id
           WHERE e.eventType = ? AND coalesce(s.value, e.text) = 'inference'
           ORDER BY e.start""", (EVENT_TYPE_PUSHPOP,)).fetchall()
    if not inferences:
        raise SystemExit("no `inference` ranges to launch the devices' work from")
    launch = string_id(con, "cudaLaunchKernel_v7000")
    memcpy = string_id(con, "cudaMemcpyPeerAsync_v4000")
    correlation, grid_id, kernels, copies = 100, 1, 0, 0
    us = 1_000
    for start, end, tid in inferences:
        gpid = tid & 0xFFFFFFFFFF000000
        g = start + 100 * us
        if end is None or end <= start + 10 * us * (len(DEVICE_KERNELS) + 2):
            raise SystemExit(f"`inference` at {start} is too short for the launches")
        api = start + 10 * us
        for device, stream, short, demangled, offset, duration in DEVICE_KERNELS:
            if device == 1 and stream == NCCL_STREAM:
                offset += late_us
            correlation += 1
            insert(con, "CUPTI_ACTIVITY_KIND_RUNTIME", start=api, end=api + API_NS,
                   eventClass=EVENT_CLASS_CUDA_RUNTIME, globalTid=tid,
                   correlationId=correlation, nameId=launch, returnValue=0)
            insert(con, "CUPTI_ACTIVITY_KIND_KERNEL", start=g + offset * us,
                   end=g + (offset + duration) * us, deviceId=device, contextId=device + 1,
                   streamId=stream, correlationId=correlation, globalPid=gpid,
                   demangledName=string_id(con, demangled), shortName=string_id(con, short),
                   launchType=LAUNCH_REGULAR, cacheConfig=0, registersPerThread=32,
                   gridX=256, gridY=1, gridZ=1, blockX=128, blockY=1, blockZ=1,
                   staticSharedMemory=0, dynamicSharedMemory=0, localMemoryPerThread=0,
                   localMemoryTotal=0, gridId=grid_id, sharedMemoryExecuted=0)
            grid_id += 1
            kernels += 1
            api += 10 * us
        offset, duration, size = DEVICE_PEER_COPY
        correlation += 1
        insert(con, "CUPTI_ACTIVITY_KIND_RUNTIME", start=api, end=api + API_NS,
               eventClass=EVENT_CLASS_CUDA_RUNTIME, globalTid=tid, correlationId=correlation,
               nameId=memcpy, returnValue=0)
        insert(con, "CUPTI_ACTIVITY_KIND_MEMCPY", start=g + offset * us,
               end=g + (offset + duration) * us, deviceId=0, contextId=1, streamId=21,
               correlationId=correlation, globalPid=gpid, bytes=size, copyKind=MEMCPY_PTOP,
               srcKind=MEM_KIND_DEVICE, dstKind=MEM_KIND_DEVICE, srcDeviceId=0,
               srcContextId=1, dstDeviceId=1, dstContextId=2)
        copies += 1
    expected = {d: dict(e) for d, e in DEVICE_EXPECTED.items()}
    expected[1]["exposed"] += late_us
    return {"iterations": len(inferences), "kernels": kernels, "copies": copies,
            "expected_per_iteration_us": expected}


# ------------------------------------------------------------------------------------------------
# add-gpu-work --work rank-devices --devices D,... (the ranks-devices fixtures): each process that
# runs `inference` ranges (a rank), taken by PID, launches device 0's work of DEVICE_KERNELS
# on a device of its own (the k-th process on the k-th of --devices): compute on two streams
# and an NCCL all-reduce on a third overlapping them for part of its time (per iteration by
# construction: compute 700 us, communication 500 us, exposed 200 us).
# ------------------------------------------------------------------------------------------------


def add_rank_devices_work(con, devices):
    """RANK_KERNELS launched from each `inference` of each rank process (by PID) on its device,
    correlation ids counted from the same start in each process (each counts its own), and a
    TARGET_INFO_GPU row for every device of the node (0 to the highest given). Returns what
    it added."""
    for device in range(max(devices) + 1):
        insert(con, "TARGET_INFO_GPU", vmId=0, id=device, name=GPU_NAME,
               busLocation=f"0000:{7 + 8 * device:02x}:00.0", isDiscrete=1,
               totalMemory=85899345920, smCount=108, cuDevice=device, computeMajor=8,
               computeMinor=0)
    inferences = con.execute(
        """SELECT e.start, e.end, e.globalTid FROM NVTX_EVENTS AS e
           LEFT JOIN StringIds AS s ON e.textId = s.id
           WHERE e.eventType = ? AND coalesce(s.value, e.text) = 'inference'
           ORDER BY e.start""", (EVENT_TYPE_PUSHPOP,)).fetchall()
    processes = sorted({tid & 0xFFFFFFFFFF000000 for _, _, tid in inferences},
                       key=lambda gpid: (gpid >> 24) & 0xFFFFFF)
    if len(processes) != len(devices):
        raise SystemExit(f"{len(processes)} processes run `inference`, --devices gives "
                         f"{len(devices)}")
    device_of = dict(zip(processes, devices))
    launch = string_id(con, "cudaLaunchKernel_v7000")
    correlation = {gpid: 100 for gpid in processes}
    grid_id, kernels, us = 1, {}, 1_000
    for start, end, tid in inferences:
        gpid = tid & 0xFFFFFFFFFF000000
        device = device_of[gpid]
        g = start + 100 * us
        if end is None or end <= start + 10 * us * (len(RANK_KERNELS) + 2):
            raise SystemExit(f"`inference` at {start} is too short for the launches")
        api = start + 10 * us
        for stream, short, demangled, offset, duration in RANK_KERNELS:
            correlation[gpid] += 1
            insert(con, "CUPTI_ACTIVITY_KIND_RUNTIME", start=api, end=api + API_NS,
                   eventClass=EVENT_CLASS_CUDA_RUNTIME, globalTid=tid,
                   correlationId=correlation[gpid], nameId=launch, returnValue=0)
            insert(con, "CUPTI_ACTIVITY_KIND_KERNEL", start=g + offset * us,
                   end=g + (offset + duration) * us, deviceId=device, contextId=device + 1,
                   streamId=stream, correlationId=correlation[gpid], globalPid=gpid,
                   demangledName=string_id(con, demangled), shortName=string_id(con, short),
                   launchType=LAUNCH_REGULAR, cacheConfig=0, registersPerThread=32,
                   gridX=256, gridY=1, gridZ=1, blockX=128, blockY=1, blockZ=1,
                   staticSharedMemory=0, dynamicSharedMemory=0, localMemoryPerThread=0,
                   localMemoryTotal=0, gridId=grid_id, sharedMemoryExecuted=0)
            grid_id += 1
            kernels[device] = kernels.get(device, 0) + 1
            api += 10 * us
    return {"devices_by_pid": {str((g >> 24) & 0xFFFFFF): d for g, d in device_of.items()},
            "kernels_by_device": kernels,
            "expected_per_iteration_us": DEVICE_EXPECTED[0]}


# One rank's work per `inference` (device 0's of DEVICE_KERNELS, on the rank's device):
# (stream, short name, demangled name, start after G, duration), in µs.
RANK_KERNELS = [(stream, short, demangled, offset, duration)
                for device, stream, short, demangled, offset, duration in DEVICE_KERNELS
                if device == 0]


# ------------------------------------------------------------------------------------------------
# check-gpu
# ------------------------------------------------------------------------------------------------

GPU_HEADER = ("Name,Projected Start (ns),Projected Duration (ns),Orig Start (ns),"
              "Orig Duration (ns),Style,PID,TID,NumGPUOps,Lvl,NumChild,RangeId,ParentId,RangeStack")


def cmd_check_gpu(args):
    import csv

    with open(args.csv, encoding="utf-8", newline="") as f:
        text = f.read()
    if args.expect_rows == 0 and text == "":
        print("gpu projection: empty, as expected")
        return
    lines = text.splitlines()
    if not lines or lines[0] != GPU_HEADER:
        raise SystemExit(f"{args.csv}: unexpected header {lines[:1]!r}")
    rows = list(csv.DictReader(lines))  # the fixtures' GPU names are plain
    names = {}
    for r in rows:
        names[r["Name"]] = names.get(r["Name"], 0) + 1
    ops = {}
    for r in rows:
        ops[r["Name"]] = ops.get(r["Name"], 0) + int(r["NumGPUOps"])
    print("gpu projection:", json.dumps({"rows": len(rows), "names": names, "ops": ops}))
    problems = []
    if args.expect_rows is not None and len(rows) != args.expect_rows:
        problems.append(f"rows: expected {args.expect_rows}, got {len(rows)}")
    if args.expect_root is not None:
        root = names.get("", 0)
        if root != args.expect_root:
            problems.append(f"synthetic root rows: expected {args.expect_root}, got {root}")
    for item in args.expect_name or []:
        name, count = item.rsplit("=", 1)
        if names.get(name, 0) != int(count):
            problems.append(f"rows named {name!r}: expected {count}, got {names.get(name, 0)}")
    for p in problems:
        print(f"GPU: {p}")
    if problems:
        sys.exit(1)
    print("gpu projection: as intended")


# ------------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("manifest")
    p.add_argument("--out", required=True)
    p.add_argument("--profile", default="smoke-tensor")
    p.add_argument("--run-id", required=True)
    p.add_argument("--run-dir-name", required=True)
    p.add_argument("--trace-file", default="trace.nsys-rep")
    p.add_argument("--capture-range", required=True, help="a name, or null")
    p.add_argument("--iterations", type=int, required=True)
    p.add_argument("--warmup", type=int, required=True)
    p.add_argument("--iteration-pattern")
    p.add_argument("--data-source", choices=sorted(DATA_SOURCES), default="dummy")
    p.add_argument("--trace-sha256", metavar="TRACE", help="record the trace's SHA-256")
    p.set_defaults(func=cmd_manifest)

    p = sub.add_parser("check-private")
    p.add_argument("--sqlite", required=True)
    p.add_argument("--rep", action="append")
    p.add_argument("--repo", required=True)
    p.add_argument("--neutral", required=True, help="the neutral folder the recording ran in")
    p.add_argument("--allow-value", action="append",
                   help="a value of the invoking environment the recording may share")
    p.set_defaults(func=cmd_check_private)

    p = sub.add_parser("check-pushpop")
    p.add_argument("--csv", required=True)
    p.add_argument("--capture-range", required=True)
    p.add_argument("--pattern", default=DEFAULT_PATTERN)
    p.add_argument("--iterations", type=int, required=True)
    p.add_argument("--expect-empty", action="store_true")
    p.add_argument("--expect-found", type=int)
    p.add_argument("--expect-complete", type=int)
    p.add_argument("--expect-unattributed", type=int)
    p.add_argument("--expect-measured")
    p.add_argument("--expect-warnings", default="")
    p.add_argument("--expect-slow")
    p.add_argument("--work", choices=["plain", "hostile", "llama"])
    p.add_argument("--layers", type=int, default=8, help="with --work llama: harness --llama")
    p.add_argument("--expect-first-ratio", metavar="MIN,MAX",
                   help="the first counted iteration's duration over the median (timing)")
    p.add_argument("--name-prefix", default="")
    p.add_argument("--summary-out")
    p.set_defaults(func=cmd_check_pushpop)

    p = sub.add_parser("check-ranks")
    p.add_argument("--csv", action="append", required=True, help="one per trace")
    p.add_argument("--capture-range", required=True)
    p.add_argument("--pattern", default=DEFAULT_PATTERN)
    p.add_argument("--expect-counts", required=True, help="iterations per rank, by PID: 10,10")
    p.add_argument("--slow-rank", type=int)
    p.add_argument("--min-slowest", type=int, default=0)
    p.set_defaults(func=cmd_check_ranks)

    p = sub.add_parser("add-gpu-work")
    p.add_argument("--sqlite", required=True)
    p.add_argument("--schema-from", required=True, metavar="SQLITE",
                   help="a non-lazy export by the same nsys, whose CUDA tables are copied")
    p.add_argument("--pattern", default=DEFAULT_PATTERN)
    p.add_argument("--mode", choices=["all", "skip-iteration", "outside-only"], default="all")
    p.add_argument("--skip-iteration", type=int)
    p.add_argument("--work", choices=["projection", "full", "llama", "processes", "devices",
                                            "devices-late", "rank-devices"],
                   default="projection",
                   help="full: also memsets, copies to and from pageable memory, a kernel with "
                        "a hostile name and TARGET_INFO_GPU (the gpu-work fixtures); llama: "
                        "the kernels of harness --llama --gpu-markers passes (LLAMA_KERNELS) "
                        "and TARGET_INFO_GPU (the llama-gpu fixture); processes: full, a "
                        "PyTorch kernel, and a second process with its own ranges and kernels "
                        "whose correlation ids overlap the first's (the gpu-processes fixture); "
                        "devices: compute and NCCL kernels on two GPUs, overlapping for part "
                        "of their time, and a peer-to-peer copy (the gpu-devices fixtures); "
                        "devices-late: the same with device 1's all-reduce 100 us later "
                        "(gpu-devices-head); rank-devices: each rank process's compute and "
                        "NCCL kernels on its own device (--devices, the ranks-devices fixtures)")
    p.add_argument("--devices", default="0",
                   help="with --work rank-devices: each rank process's device, by PID (1,0)")
    p.add_argument("--metrics", choices=["none", "clock-drop"], default="none",
                   help="clock-drop: GPU metrics on GPU 0 at 10 kHz, its SM clock 30 %% lower "
                        "during iterations 3-7 (the gpu-clocks fixture)")
    p.set_defaults(func=cmd_add_gpu_work)

    p = sub.add_parser("check-gpu")
    p.add_argument("--csv", required=True)
    p.add_argument("--expect-rows", type=int)
    p.add_argument("--expect-root", type=int)
    p.add_argument("--expect-name", action="append", help="NAME=COUNT")
    p.set_defaults(func=cmd_check_gpu)

    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
