//! Tests of manifest reading. Expected values marked "PyYAML" were produced by PyYAML 6.0.3's
//! `yaml.safe_load` on the same text.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use super::error::ManifestErrorKind;
use super::model::DEFAULT_ITERATION_PATTERN;
use super::node::to_json;
use super::read::MAX_MANIFEST_BYTES;
use super::*;

fn parse_str(text: &str) -> Result<Manifest, ManifestError> {
    parse(text.as_bytes(), Path::new("manifest.yaml"))
}

/// The error's full display.
fn error(text: &str) -> String {
    parse_str(text).unwrap_err().to_string()
}

/// The error's first line (without a hint).
fn error_line(text: &str) -> String {
    error(text).lines().next().unwrap().to_owned()
}

/// Required keys only.
const MINIMAL: &str = "\
capture_range: profile-target
profile_name: smoke-tensor
run_id: 20261129T120000Z
workload:
  iterations: 2
";

/// `MINIMAL` plus more top-level lines.
fn with(extra: &str) -> String {
    format!("{MINIMAL}{extra}")
}

/// `MINIMAL` with one top-level key's line replaced (or removed, when `line` is empty).
fn replacing(key: &str, line: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for l in MINIMAL.lines() {
        if l.starts_with(&format!("{key}:")) {
            out.push_str(line);
            if !line.is_empty() {
                out.push('\n');
            }
            skipping = true;
            continue;
        }
        if skipping && l.starts_with(' ') {
            continue;
        }
        skipping = false;
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Runs `f` on a thread with a 256 KiB stack: input depth must not turn into stack depth.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .expect("no stack overflow or panic")
}

/// The example of CONTRACT.md §1, verbatim (comments, a flow sequence, and `command_line`
/// folded over three lines as a plain multi-line scalar).
const CONTRACT_EXAMPLE: &str = r#"capture_range: profile-target          # top-level NVTX range that nsys captured (--nvtx-capture=NAME@*)
command_line: development/profiling/main.py --target smoke-tensor --data-source dummy
  --config development/profiling/smoke_config.yaml --device cuda:0 --warmup 1 --iterations
  2 --record-loading eager --run-id 20261129T120000Z --seed 0
cuda:                                  # the synchronization policy
  synchronize_after_capture: true
  synchronize_after_warmup: true
  synchronize_before_capture: true
  synchronize_before_warmup: true
  synchronize_each_iteration: false
data_source:
  description:
    image_shape: [64, 64, 3]           # (block style in real files)
    include_image: true
    record_count: 2
    tensor_shape: [4, 4]
    type: dummy
  name: dummy
device: cuda:0
expected_trace_path: inference_profiling/snippets/smoke-tensor/runs/20261129T120000Z/trace.nsys-rep
git_commit: null                       # or the commit SHA
output_summaries:
- dtype: torch.float32
  shape: [4]
  sum: 240.0
profile_name: smoke-tensor
record_ids:
- dummy-0
- dummy-1
run_id: 20261129T120000Z
target:
  import_path: null
  name: smoke-tensor
  profile_prepare: false
workload:
  iterations: 2
  record_loading: eager
  seed: 0
  validate_output: true
  warmup: 1
"#;

const COMMAND_LINE: &str = "development/profiling/main.py --target smoke-tensor \
    --data-source dummy --config development/profiling/smoke_config.yaml --device cuda:0 \
    --warmup 1 --iterations 2 --record-loading eager --run-id 20261129T120000Z --seed 0";

#[test]
fn contract_example_reads_completely() {
    let m = parse_str(CONTRACT_EXAMPLE).unwrap();
    assert_eq!(
        m,
        Manifest {
            profile_name: "smoke-tensor".into(),
            run_id: "20261129T120000Z".into(),
            capture_range: Some("profile-target".into()),
            iterations: 2,
            iteration_pattern: DEFAULT_ITERATION_PATTERN.into(),
            trace_sha256: None,
            trace_sha256_per_rank: None,
            expected_trace_path: Some(
                "inference_profiling/snippets/smoke-tensor/runs/20261129T120000Z/trace.nsys-rep"
                    .into()
            ),
            device: Some("cuda:0".into()),
            git_commit: None,
            command_line: Some(COMMAND_LINE.into()),
            record_count: Some(2),
            // `printf '["dummy-0","dummy-1"]' | sha256sum`
            record_ids_sha256: Some(
                "bc77803b3131b3db89feca2e27f6ea69db90ec208782466238c21ebe06e99134".into()
            ),
            target: Some(
                json!({"import_path": null, "name": "smoke-tensor", "profile_prepare": false})
            ),
            workload: json!({
                "iterations": 2, "record_loading": "eager", "seed": 0,
                "validate_output": true, "warmup": 1
            }),
            cuda: Some(json!({
                "synchronize_after_capture": true,
                "synchronize_after_warmup": true,
                "synchronize_before_capture": true,
                "synchronize_before_warmup": true,
                "synchronize_each_iteration": false
            })),
            data_source: Some(json!({
                "description": {
                    "image_shape": [64, 64, 3], "include_image": true, "record_count": 2,
                    "tensor_shape": [4, 4], "type": "dummy"
                },
                "name": "dummy"
            })),
            extra: BTreeMap::new(),
            near_misses: vec![],
        }
    );
}

/// Exactly what `yaml.safe_dump(..., sort_keys=True)` wrote for the example with a third record
/// id `000000000139`, `run_id` "20261129" and `git_commit` "0123456" (PyYAML quotes the last
/// two, since they would read back as integers, but not the record id, which would not).
const PYYAML_DUMP: &str = "\
capture_range: profile-target
command_line: development/profiling/main.py --target smoke-tensor --data-source dummy
  --config development/profiling/smoke_config.yaml --device cuda:0 --warmup 1 --iterations
  2 --record-loading eager --run-id 20261129T120000Z --seed 0
cuda:
  synchronize_after_capture: true
  synchronize_after_warmup: true
  synchronize_before_capture: true
  synchronize_before_warmup: true
  synchronize_each_iteration: false
data_source:
  description:
    image_shape:
    - 64
    - 64
    - 3
    include_image: true
    record_count: 2
    tensor_shape:
    - 4
    - 4
    type: dummy
  name: dummy
device: cuda:0
expected_trace_path: inference_profiling/snippets/smoke-tensor/runs/20261129T120000Z/trace.nsys-rep
git_commit: '0123456'
output_summaries:
- dtype: torch.float32
  shape:
  - 4
  sum: 240.0
profile_name: smoke-tensor
record_ids:
- dummy-0
- dummy-1
- 000000000139
run_id: '20261129'
target:
  import_path: null
  name: smoke-tensor
  profile_prepare: false
workload:
  iterations: 2
  record_loading: eager
  seed: 0
  validate_output: true
  warmup: 1
";

#[test]
fn pyyaml_dump_reads_as_pyyaml_reads_it() {
    let m = parse_str(PYYAML_DUMP).unwrap();
    assert_eq!(m.run_id, "20261129");
    assert_eq!(m.git_commit.as_deref(), Some("0123456"));
    assert_eq!(m.record_count, Some(3));
    assert_eq!(m.command_line.as_deref(), Some(COMMAND_LINE));
    assert_eq!(
        m.data_source.unwrap()["description"]["image_shape"],
        json!([64, 64, 3])
    );

    // The whole document as JSON, against PyYAML's `json.dumps(yaml.safe_load(text))`.
    let root = yaml::load(PYYAML_DUMP, Path::new("manifest.yaml")).unwrap();
    let expected: serde_json::Value = serde_json::from_str(
        r#"{"capture_range": "profile-target", "command_line": "development/profiling/main.py --target smoke-tensor --data-source dummy --config development/profiling/smoke_config.yaml --device cuda:0 --warmup 1 --iterations 2 --record-loading eager --run-id 20261129T120000Z --seed 0", "cuda": {"synchronize_after_capture": true, "synchronize_after_warmup": true, "synchronize_before_capture": true, "synchronize_before_warmup": true, "synchronize_each_iteration": false}, "data_source": {"description": {"image_shape": [64, 64, 3], "include_image": true, "record_count": 2, "tensor_shape": [4, 4], "type": "dummy"}, "name": "dummy"}, "device": "cuda:0", "expected_trace_path": "inference_profiling/snippets/smoke-tensor/runs/20261129T120000Z/trace.nsys-rep", "git_commit": "0123456", "output_summaries": [{"dtype": "torch.float32", "shape": [4], "sum": 240.0}], "profile_name": "smoke-tensor", "record_ids": ["dummy-0", "dummy-1", "000000000139"], "run_id": "20261129", "target": {"import_path": null, "name": "smoke-tensor", "profile_prepare": false}, "workload": {"iterations": 2, "record_loading": "eager", "seed": 0, "validate_output": true, "warmup": 1}}"#,
    )
    .unwrap();
    assert_eq!(to_json(&root), expected);
}

/// Tricky YAML 1.1, against PyYAML (`json.dumps(yaml.safe_load(text))`, with non-finite floats
/// written `.inf`/`.nan` and the set as a sorted list).
#[test]
fn tricky_document_matches_pyyaml() {
    let text = "\
plain:
  a: 000000000139
  b: 0755
  c: 0b101
  d: 0x1F
  e: 1_000
  f: 190:20:30
  g: 1e3
  h: 1.e+3
  i: -.5
  j: .5
  k: 190:20:30.15
  l: -.inf
  m: .NaN
  n: yes
  o: Off
  p: yEs
  q: ~
  r:
  s: 0o17
  t: 1:60
  u: 20261129
  v: 20261129T120000Z
  w: 18446744073709551615
  x: -9223372036854775808
  y: 3.14_15
  z: 09
quoted:
  a: '0755'
  b: \"yes\"
  c: ! '123'
  d: !!str 0755
  e: !!int '0x10'
  f: !!float '1'
  g: !!null whatever
keys:
  10: int
  0x2: hex
  yes: bool
  ~: null
  1.5: float
  \"3\": string
folded: this plain scalar
  is folded over
    several lines

  with a blank line
block: |
  keep
  lines
anchors:
  base: &base {x: 1, y: 2}
  copy: *base
  merged:
    <<: *base
    y: 3
  multi:
    <<: [{a: 1}, {a: 2, b: 2}]
set: !!set {a: null, b: null}
";
    let expected: serde_json::Value = serde_json::from_str(
        r#"{"anchors": {"base": {"x": 1, "y": 2}, "copy": {"x": 1, "y": 2}, "merged": {"x": 1, "y": 3}, "multi": {"a": 1, "b": 2}}, "block": "keep\nlines\n", "folded": "this plain scalar is folded over several lines\nwith a blank line", "keys": {"1.5": "float", "10": "int", "2": "hex", "3": "string", "null": null, "true": "bool"}, "plain": {"a": "000000000139", "b": 493, "c": 5, "d": 31, "e": 1000, "f": 685230, "g": "1e3", "h": 1000.0, "i": "-.5", "j": 0.5, "k": 685230.15, "l": "-.inf", "m": ".nan", "n": true, "o": false, "p": "yEs", "q": null, "r": null, "s": "0o17", "t": "1:60", "u": 20261129, "v": "20261129T120000Z", "w": 18446744073709551615, "x": -9223372036854775808, "y": 3.1415, "z": "09"}, "quoted": {"a": "0755", "b": "yes", "c": 123, "d": "0755", "e": 16, "f": 1.0, "g": null}, "set": ["a", "b"]}"#,
    )
    .unwrap();
    let root = yaml::load(text, Path::new("manifest.yaml")).unwrap();
    assert_eq!(to_json(&root), expected);
}

#[test]
fn record_id_with_leading_zeros_stays_a_string() {
    let m = parse_str(&with(
        "record_ids:\n- 000000000139\n- 0755\nids:\n- 000000000139\n",
    ))
    .unwrap();
    assert_eq!(m.record_count, Some(2));
    assert_eq!(m.extra["ids"], json!(["000000000139"]));
}

#[test]
fn integers_beyond_64_bits_become_strings() {
    let m = parse_str(&with(
        "big: 18446744073709551616\nhuge: 0x1_0000_0000_0000_0000_0000_0000_0000_0000\n",
    ))
    .unwrap();
    assert_eq!(m.extra["big"], json!("18446744073709551616"));
    assert_eq!(
        m.extra["huge"],
        json!("0x1_0000_0000_0000_0000_0000_0000_0000_0000")
    );
}

#[test]
fn tags_and_binary_and_timestamps() {
    let m = parse_str(&with(
        "when: 2026-11-29 12:00:00\nblob: !!binary |\n  aGVs\n  bG8=\nstamp: !!timestamp 2026-11-29\n",
    ))
    .unwrap();
    assert_eq!(m.extra["when"], json!("2026-11-29 12:00:00"));
    assert_eq!(m.extra["blob"], json!("aGVs\nbG8=\n"));
    assert_eq!(m.extra["stamp"], json!("2026-11-29"));
}

// ---------------------------------------------------------------------------------------------
// Required keys

#[test]
fn each_required_key_missing_is_named() {
    for key in ["capture_range", "profile_name", "run_id", "workload"] {
        assert_eq!(
            error(&replacing(key, "")),
            format!("manifest.yaml: missing required key `{key}`"),
        );
    }
    assert_eq!(
        error(&replacing("workload", "workload:\n  warmup: 1")),
        "manifest.yaml:4: missing required key `workload.iterations`",
    );
}

#[test]
fn missing_key_hints_at_a_near_miss() {
    assert_eq!(
        error(&replacing("run_id", "run-id: 20261129T120000Z")),
        "manifest.yaml: missing required key `run_id`\n\
         (hint: found `run-id` on line 3; did you mean `run_id`?)",
    );
    assert_eq!(
        error(&replacing("workload", "workload:\n  iteration: 2")),
        "manifest.yaml:4: missing required key `workload.iterations`\n\
         (hint: found `workload.iteration` on line 5; did you mean `workload.iterations`?)",
    );
    assert_eq!(
        error(&replacing(
            "workload",
            "iterations: 2\nworkload:\n  warmup: 1"
        )),
        "manifest.yaml:5: missing required key `workload.iterations`\n\
         (hint: found `iterations` on line 4; did you mean `workload.iterations`?)",
    );
}

#[test]
fn identifiers_must_be_strings() {
    assert_eq!(
        error_line(&replacing("profile_name", "profile_name: [a, b]")),
        "manifest.yaml:2: `profile_name` must be a non-empty string, found a sequence",
    );
    assert_eq!(
        error(&replacing("run_id", "run_id: yes")),
        "manifest.yaml:3: `run_id` must be a non-empty string, found boolean `yes`\n\
         (hint: quote the value to make it a string: `run_id: \"yes\"`)",
    );
    assert_eq!(
        error_line(&replacing("run_id", "run_id: 1.50")),
        "manifest.yaml:3: `run_id` must be a non-empty string, found float 1.50",
    );
    assert_eq!(
        error_line(&replacing("run_id", "run_id:")),
        "manifest.yaml:3: `run_id` must be a non-empty string, found null",
    );
    assert_eq!(
        error_line(&replacing("profile_name", "profile_name: ''")),
        "manifest.yaml:2: `profile_name` must be a non-empty string, found string \"\"",
    );
}

#[test]
fn integer_identifiers_are_kept_as_written() {
    let m = parse_str(&replacing("run_id", "run_id: 20261129")).unwrap();
    assert_eq!(m.run_id, "20261129");
    // YAML 1.1 reads `0042` as octal 34; the user meant the name they typed.
    let m = parse_str(&replacing("profile_name", "profile_name: 0042")).unwrap();
    assert_eq!(m.profile_name, "0042");
    let m = parse_str(&replacing("run_id", "run_id: !!str 7")).unwrap();
    assert_eq!(m.run_id, "7");
}

#[test]
fn capture_range_must_be_a_string_or_null() {
    assert_eq!(
        error(&replacing("capture_range", "capture_range: 5")),
        "manifest.yaml:1: `capture_range` must be a string or null, found integer 5\n\
         (hint: quote the value to make it a string: `capture_range: \"5\"`)",
    );
    assert_eq!(
        error_line(&replacing("capture_range", "capture_range: {a: 1}")),
        "manifest.yaml:1: `capture_range` must be a string or null, found a mapping",
    );
    assert_eq!(
        error_line(&replacing("capture_range", "capture_range: ''")),
        "manifest.yaml:1: `capture_range` must be a non-empty string or null, found an empty string",
    );
    for null in ["null", "~", "", "Null"] {
        let m = parse_str(&replacing(
            "capture_range",
            &format!("capture_range: {null}"),
        ))
        .unwrap();
        assert_eq!(m.capture_range, None, "{null:?}");
    }
    let m = parse_str(&replacing("capture_range", "capture_range: 'null'")).unwrap();
    assert_eq!(m.capture_range.as_deref(), Some("null"));
}

#[test]
fn iterations_must_be_a_positive_integer() {
    let iterations = |value: &str| {
        let text = replacing("workload", &format!("workload:\n  iterations: {value}"));
        parse_str(&text).map(|m| m.iterations)
    };
    for (value, found) in [
        ("0", "integer 0"),
        ("-1", "integer -1"),
        ("1.5", "float 1.5"),
        ("2.0", "float 2.0"),
        ("\"2\"", "string \"2\""),
        ("two", "string \"two\""),
        ("yes", "boolean `yes`"),
        ("null", "null"),
        ("[2]", "a sequence"),
        ("18446744073709551616", "integer 18446744073709551616"),
    ] {
        assert_eq!(
            iterations(value)
                .unwrap_err()
                .to_string()
                .lines()
                .next()
                .unwrap(),
            format!(
                "manifest.yaml:5: `workload.iterations` must be an integer >= 1, found {found}"
            ),
        );
    }
    assert!(iterations("\"2\"")
        .unwrap_err()
        .to_string()
        .ends_with("\n(hint: write the number without quotes)"));
    assert_eq!(iterations("1").unwrap(), 1);
    assert_eq!(iterations("0x10").unwrap(), 16);
    assert_eq!(iterations("1_000").unwrap(), 1000);
    assert_eq!(iterations("18446744073709551615").unwrap(), u64::MAX);
}

#[test]
fn workload_must_be_a_mapping() {
    assert_eq!(
        error_line(&replacing("workload", "workload: 2")),
        "manifest.yaml:4: `workload` must be a mapping holding `iterations`, found integer 2",
    );
    assert_eq!(
        error_line(&replacing("workload", "workload: null")),
        "manifest.yaml:4: `workload` must be a mapping holding `iterations`, found null",
    );
}

#[test]
fn the_brief_s_example_line_numbers() {
    let text = "\
capture_range: x
profile_name: p
run_id: r
workload:
  record_loading: eager
  seed: 0


  validate_output: true
  warmup: 1



  iterations: two
";
    assert_eq!(
        error(text),
        "manifest.yaml:14: `workload.iterations` must be an integer >= 1, found string \"two\"",
    );
}

// ---------------------------------------------------------------------------------------------
// Optional keys

#[test]
fn optional_keys_may_be_absent_or_null() {
    let m = parse_str(MINIMAL).unwrap();
    assert_eq!(m.iteration_pattern, DEFAULT_ITERATION_PATTERN);
    assert_eq!(
        (
            m.trace_sha256,
            m.expected_trace_path,
            m.device,
            m.git_commit
        ),
        (None, None, None, None)
    );
    assert_eq!((m.record_count, m.target, m.cuda), (None, None, None));
    assert_eq!(m.workload, json!({"iterations": 2}));

    let m = parse_str(&with(
        "iteration_pattern: null\ntrace_sha256: ~\ndevice:\ngit_commit: null\nrecord_ids: null\n\
         target: null\ncuda: ~\ndata_source:\ncommand_line: null\nexpected_trace_path: null\n",
    ))
    .unwrap();
    assert_eq!(m.iteration_pattern, DEFAULT_ITERATION_PATTERN);
    assert_eq!(m.record_count, None);
    assert!(m.extra.is_empty());
}

#[test]
fn informational_scalars_are_kept_as_written() {
    let m = parse_str(&with(
        "git_commit: 0123456\ndevice: 0\ncommand_line: yes\nexpected_trace_path: 1.50\n",
    ))
    .unwrap();
    assert_eq!(m.git_commit.as_deref(), Some("0123456"));
    assert_eq!(m.device.as_deref(), Some("0"));
    assert_eq!(m.command_line.as_deref(), Some("yes"));
    assert_eq!(m.expected_trace_path.as_deref(), Some("1.50"));
}

#[test]
fn optional_keys_of_the_wrong_shape_are_errors() {
    for (line, message) in [
        (
            "git_commit: [a]",
            "manifest.yaml:6: `git_commit` must be a string or null, found a sequence",
        ),
        (
            "device: {a: 1}",
            "manifest.yaml:6: `device` must be a string or null, found a mapping",
        ),
        (
            "target: smoke",
            "manifest.yaml:6: `target` must be a mapping or null, found string \"smoke\"",
        ),
        (
            "cuda: [1]",
            "manifest.yaml:6: `cuda` must be a mapping or null, found a sequence",
        ),
        (
            "data_source: 3",
            "manifest.yaml:6: `data_source` must be a mapping or null, found integer 3",
        ),
        (
            "record_ids: dummy-0",
            "manifest.yaml:6: `record_ids` must be a list or null, found string \"dummy-0\"",
        ),
        (
            "iteration_pattern: 5",
            "manifest.yaml:6: `iteration_pattern` must be a string (a regular expression with one \
             capture group), found integer 5",
        ),
    ] {
        assert_eq!(error_line(&with(&format!("{line}\n"))), message);
    }
}

#[test]
fn iteration_pattern_is_checked() {
    let pattern = |p: &str| parse_str(&with(&format!("iteration_pattern: '{p}'\n")));
    assert_eq!(
        pattern(r"^step (\d+)$").unwrap().iteration_pattern,
        r"^step (\d+)$"
    );
    assert_eq!(
        pattern(r"^(?:iter|step) (?P<index>\d+)$")
            .unwrap()
            .iteration_pattern,
        r"^(?:iter|step) (?P<index>\d+)$"
    );
    assert_eq!(
        pattern(r"^iteration \d+$").unwrap_err().to_string(),
        "manifest.yaml:6: `iteration_pattern` must have exactly one capture group for the \
         iteration index, found 0\n(hint: capture the index, as in `^iteration (\\d+)$`)",
    );
    assert_eq!(
        pattern(r"^(iter|step) (\d+)$").unwrap_err().to_string(),
        "manifest.yaml:6: `iteration_pattern` must have exactly one capture group for the \
         iteration index, found 2\n(hint: make the other groups non-capturing: `(?:...)`)",
    );
    let bad = pattern(r"^iteration (\d+$").unwrap_err();
    assert!(matches!(bad.kind(), ManifestErrorKind::BadRegex { .. }));
    assert!(
        bad.to_string().starts_with(
            "manifest.yaml:6: `iteration_pattern` is not a valid regular expression:\n"
        ),
        "{bad}"
    );
}

#[test]
fn trace_sha256_is_checked_and_lowercased() {
    let digest = "AB".repeat(32);
    let m = parse_str(&with(&format!("trace_sha256: {digest}\n"))).unwrap();
    assert_eq!(m.trace_sha256, Some("ab".repeat(32)));
    // All decimal digits: a YAML integer, whose text is still the digest.
    let digits = "1".repeat(64);
    let m = parse_str(&with(&format!("trace_sha256: {digits}\n"))).unwrap();
    assert_eq!(m.trace_sha256, Some(digits));
    assert_eq!(
        error(&with("trace_sha256: abc123\n")),
        "manifest.yaml:6: `trace_sha256` must be 64 hexadecimal digits (a sha-256 digest) or null, \
         found string \"abc123\" (6 characters)",
    );
    assert!(
        error(&with(&format!("trace_sha256: {}\n", "g".repeat(64)))).contains("(64 characters)")
    );
    assert!(error(&with("trace_sha256: [a]\n")).ends_with("found a sequence"));
}

// ---------------------------------------------------------------------------------------------
// Unknown keys

#[test]
fn unknown_keys_are_kept_in_extra() {
    let m = parse_str(&with(
        "notes: nightly run\nhost:\n  name: gpu-01\n  cores: [0, 1]\n7: seven\ntrue: yes\n\
         output_summaries: []\n",
    ))
    .unwrap();
    assert_eq!(
        serde_json::to_value(&m.extra).unwrap(),
        json!({
            "7": "seven",
            "host": {"cores": [0, 1], "name": "gpu-01"},
            "notes": "nightly run",
            "true": true,
        })
    );
    assert!(m.near_misses.is_empty());
}

#[test]
fn near_misses_are_reported() {
    let m = parse_str(&with(
        "iteration_patern: '^it (\\d+)$'\ncapture-range: x\ntrace_sha: abc\niterations: 3\n\
         devices: cuda:0\n",
    ))
    .unwrap();
    let misses: Vec<(&str, &str, usize)> = m
        .near_misses
        .iter()
        .map(|miss| (miss.key.as_str(), miss.suggestion.as_str(), miss.line))
        .collect();
    assert_eq!(
        misses,
        [
            ("iteration_patern", "iteration_pattern", 6),
            ("capture-range", "capture_range", 7),
            ("trace_sha", "trace_sha256", 8),
            ("iterations", "workload.iterations", 9),
            ("devices", "device", 10),
        ]
    );
    // Still kept, and still not used.
    assert_eq!(m.iteration_pattern, DEFAULT_ITERATION_PATTERN);
    assert_eq!(m.extra.len(), 5);

    let m = parse_str(&replacing(
        "workload",
        "workload:\n  iterations: 2\n  warmpu: 1\n  seeds: 0\n  batch_size: 8",
    ))
    .unwrap();
    let misses: Vec<(&str, &str)> = m
        .near_misses
        .iter()
        .map(|miss| (miss.key.as_str(), miss.suggestion.as_str()))
        .collect();
    assert_eq!(
        misses,
        [
            ("workload.warmpu", "workload.warmup"),
            ("workload.seeds", "workload.seed")
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// YAML structure

#[test]
fn duplicate_keys_name_both_lines() {
    assert_eq!(
        error(&with("run_id: again\n")),
        "manifest.yaml:6: duplicate key `run_id` (first defined on line 3)",
    );
    assert_eq!(
        error(&replacing(
            "workload",
            "workload:\n  iterations: 2\n  seed: 0\n  iterations: 3"
        )),
        "manifest.yaml:7: duplicate key `iterations` (first defined on line 5)",
    );
    // Same key once resolved: `1` and `0x1` are both the integer 1.
    assert_eq!(
        error(&with("x: {1: a,\n  0x1: b}\n")),
        "manifest.yaml:7: duplicate key `1` (first defined on line 6)",
    );
}

#[test]
fn merged_keys_may_be_overridden() {
    let m = parse_str(&with(
        "base: &base {a: 1, b: 2}\nderived:\n  <<: *base\n  b: 3\n",
    ))
    .unwrap();
    assert_eq!(m.extra["derived"], json!({"a": 1, "b": 3}));
    assert_eq!(
        error_line(&with("x: {<<: 1}\n")),
        "manifest.yaml:6: invalid yaml: a `<<` merge key needs a mapping or a list of mappings, \
         found integer 1",
    );
    assert_eq!(
        error_line(&with("x: <<\n")),
        "manifest.yaml:6: invalid yaml: a plain `<<` is only allowed as a mapping key (PyYAML \
         cannot read it as a value; quote it to make it a string)",
    );
    assert!(error(&with("x: =\n")).contains("a plain `=` is only allowed as a mapping key"));
    let m = parse_str(&with("x: {=: 1}\ny: '<<'\n")).unwrap();
    assert_eq!(m.extra["x"], json!({"=": 1}));
    assert_eq!(m.extra["y"], json!("<<"));
}

#[test]
fn unsupported_and_invalid_tags_are_errors() {
    assert_eq!(
        error(&with("x: !foo bar\n")),
        "manifest.yaml:6: invalid yaml: unsupported tag `!foo` on a scalar (PyYAML's safe loader \
         cannot read it either)",
    );
    assert_eq!(
        error(&with("x: !!python/tuple [1]\n")),
        "manifest.yaml:6: invalid yaml: unsupported tag `!!python/tuple` on a sequence (PyYAML's \
         safe loader cannot read it either)",
    );
    assert_eq!(
        error(&with("x: !!int abc\n")),
        "manifest.yaml:6: invalid yaml: \"abc\" cannot be read as an integer (tag `!!int`)",
    );
    assert_eq!(
        error(&with("x: 0b_\n")),
        "manifest.yaml:6: invalid yaml: \"0b_\" looks like an integer but cannot be read as one \
         (quote it to make it a string)",
    );
    assert_eq!(
        error(&with("x: !!str [1]\n")),
        "manifest.yaml:6: invalid yaml: tag `!!str` cannot be applied to a sequence",
    );
    assert!(
        error(&with("? [1]\n: x\n")).contains("a mapping key must be a scalar, found a sequence")
    );
}

#[test]
fn syntax_errors_have_line_and_column() {
    assert_eq!(
        error(&with("x: a: b\n")),
        "manifest.yaml:6:5: invalid yaml: mapping values are not allowed in this context",
    );
    let e = parse_str(&with("x: [1, 2\n")).unwrap_err();
    assert!(matches!(e.kind(), ManifestErrorKind::Syntax { .. }));
    assert!(e.line().is_some() && e.column().is_some(), "{e}");
    assert!(error(&with("x: *nowhere\n")).starts_with("manifest.yaml:6:4: invalid yaml:"));
}

#[test]
fn recursive_alias_is_an_error() {
    assert!(error(&with("x: &a [1, *a]\n")).contains("recursive aliases are not allowed"),);
}

#[test]
fn control_characters_are_refused() {
    assert_eq!(
        error(&with("x: a\u{1}b\n")),
        "manifest.yaml:6:5: invalid yaml: unacceptable character U+0001: control characters are \
         not allowed",
    );
}

#[test]
fn empty_documents_are_refused() {
    for text in [
        "",
        "\n\n",
        "# only a comment\n",
        "---\n",
        "~\n",
        "null\n",
        "---\n...\n",
    ] {
        assert_eq!(
            error(text),
            "manifest.yaml: the manifest is empty",
            "{text:?}"
        );
    }
}

#[test]
fn top_level_must_be_a_mapping() {
    assert_eq!(
        error("- capture_range: x\n- run_id: r\n"),
        "manifest.yaml:1: the manifest must be a mapping of keys to values, found a sequence",
    );
    assert_eq!(
        error("just text\n"),
        "manifest.yaml:1: the manifest must be a mapping of keys to values, found string \"just text\"",
    );
}

#[test]
fn multiple_documents_are_refused() {
    assert_eq!(
        error(&format!("{MINIMAL}---\n{MINIMAL}")),
        "manifest.yaml:6: expected a single yaml document, found a second one here",
    );
    assert_eq!(
        error(&format!("{MINIMAL}---\n")),
        "manifest.yaml:6: expected a single yaml document, found a second one here",
    );
    // An explicit start and end around one document are fine.
    assert!(parse_str(&format!("%YAML 1.1\n---\n{MINIMAL}...\n")).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Encodings and limits

#[test]
fn invalid_utf8_names_line_and_offset() {
    let mut bytes = with("x: caf").into_bytes();
    let offset = bytes.len();
    bytes.extend_from_slice(b"\xe9\n");
    let e = parse(&bytes, Path::new("runs/a/manifest.yaml")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "runs/a/manifest.yaml:6: not valid utf-8: byte 0xe9 at byte offset {offset} (the \
             manifest must be utf-8 text)"
        )
    );
    let e = parse(b"a: \xe2\x82", Path::new("manifest.yaml")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "manifest.yaml:1: not valid utf-8: the file ends inside a character at byte offset 3"
    );
}

#[test]
fn byte_order_marks_are_honoured() {
    let mut utf8 = b"\xef\xbb\xbf".to_vec();
    utf8.extend_from_slice(MINIMAL.as_bytes());
    assert_eq!(
        parse(&utf8, Path::new("m")).unwrap(),
        parse_str(MINIMAL).unwrap()
    );
    for big_endian in [false, true] {
        let mut utf16 = if big_endian {
            vec![0xFE, 0xFF]
        } else {
            vec![0xFF, 0xFE]
        };
        for unit in MINIMAL.encode_utf16() {
            utf16.extend_from_slice(&if big_endian {
                unit.to_be_bytes()
            } else {
                unit.to_le_bytes()
            });
        }
        assert_eq!(
            parse(&utf16, Path::new("m")).unwrap(),
            parse_str(MINIMAL).unwrap()
        );
    }
    assert!(parse(b"\xff\xfea\x00:", Path::new("m"))
        .unwrap_err()
        .to_string()
        .contains("odd number of bytes"));
}

#[test]
fn oversized_manifests_are_refused() {
    let mut text = with("padding: |\n");
    while (text.len() as u64) <= MAX_MANIFEST_BYTES {
        text.push_str("  0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n");
    }
    assert_eq!(
        error(&text),
        "manifest.yaml: the manifest is larger than 16777216 bytes (16 MiB); refusing to read it"
    );

    let path = std::env::temp_dir().join(format!("nsys-gate-manifest-{}.yaml", std::process::id()));
    std::fs::write(&path, &text).unwrap();
    let e = read_bytes(&path).unwrap_err();
    assert!(matches!(e.kind(), ManifestErrorKind::TooLarge { .. }));
    std::fs::write(&path, MINIMAL).unwrap();
    assert_eq!(read_bytes(&path).unwrap(), MINIMAL.as_bytes());
    std::fs::remove_file(&path).unwrap();
    let e = read_bytes(&path).unwrap_err();
    assert!(matches!(e.kind(), ManifestErrorKind::Io(_)), "{e}");
}

#[test]
fn billion_laughs_is_refused_quickly() {
    let mut text = with("lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for level in 1..=9 {
        let prev = level - 1;
        let refs = vec![format!("*l{prev}"); 9].join(", ");
        text.push_str(&format!("lol{level}: &l{level} [{refs}]\n"));
    }
    let start = std::time::Instant::now();
    let e = parse_str(&text).unwrap_err();
    assert!(
        matches!(e.kind(), ManifestErrorKind::AliasBomb { .. }),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("manifest.yaml:12: invalid yaml: aliases expand to more than 64 MiB"),
        "{e}"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(20));

    // Modest reuse is fine.
    let m = parse_str(&with("a: &a [1, 2]\nb: [*a, *a, *a]\n")).unwrap();
    assert_eq!(m.extra["b"], json!([[1, 2], [1, 2], [1, 2]]));
}

#[test]
fn deep_nesting_is_refused_without_deep_recursion() {
    on_small_stack(|| {
        let depth = 10_000;
        let flow_sequences = format!("deep: {}{}", "[".repeat(depth), "]".repeat(depth));
        let flow_mappings = format!("deep: {}x{}", "{a: ".repeat(depth), "}".repeat(depth));
        let block_sequences = format!("deep:\n{}x", "- ".repeat(depth));
        for (nested, line) in [
            (flow_sequences, 6),
            (flow_mappings, 6),
            (block_sequences, 7),
        ] {
            let e = parse_str(&format!("{MINIMAL}{nested}\n")).unwrap_err();
            assert!(
                matches!(e.kind(), ManifestErrorKind::TooDeep { limit: 128 }),
                "{e}"
            );
            assert_eq!(e.line(), Some(line), "{e}");
            assert!(
                e.to_string()
                    .ends_with(": invalid yaml: collections nest deeper than 128 levels"),
                "{e}"
            );
        }
        // Block mappings, one level per line.
        let mut text = format!("{MINIMAL}deep:\n");
        for level in 1..1_000 {
            text.push_str(&" ".repeat(level));
            text.push_str("a:\n");
        }
        let e = parse_str(&text).unwrap_err();
        assert!(matches!(e.kind(), ManifestErrorKind::TooDeep { .. }), "{e}");
        // Exactly at the limit: the top-level mapping plus 127 sequences.
        let text = format!("{MINIMAL}deep: {}{}\n", "[".repeat(127), "]".repeat(127));
        parse_str(&text).unwrap();
        let text = format!("{MINIMAL}deep: {}{}\n", "[".repeat(128), "]".repeat(128));
        assert!(matches!(
            parse_str(&text).unwrap_err().kind(),
            ManifestErrorKind::TooDeep { .. }
        ));
        // Aliases cannot stack nesting beyond the limit either.
        let text = format!(
            "{MINIMAL}a: &a {}{}\nb: {}*a{}\n",
            "[".repeat(120),
            "]".repeat(120),
            "[".repeat(10),
            "]".repeat(10)
        );
        assert!(matches!(
            parse_str(&text).unwrap_err().kind(),
            ManifestErrorKind::TooDeep { .. }
        ));
    });
}

#[test]
fn file_label_is_used_as_given() {
    let e = parse(b"- a\n", Path::new("/runs/20261129/manifest.yaml")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/runs/20261129/manifest.yaml:1: the manifest must be a mapping of keys to values, found a \
         sequence"
    );
    assert_eq!(e.file(), Path::new("/runs/20261129/manifest.yaml"));
    assert_eq!((e.line(), e.column()), (Some(1), None));
}

mod never_panics {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = parse(&bytes, Path::new("manifest.yaml"));
        }

        #[test]
        fn on_yaml_like_text(text in "[-:?,\\[\\]{}#&*!|>'\"%@~<=. a-z0-9_\n\t]{0,300}") {
            let _ = parse(text.as_bytes(), Path::new("manifest.yaml"));
        }

        #[test]
        fn on_mutated_manifests(
            cut in 0..CONTRACT_EXAMPLE.len(),
            insert in "[-:?,\\[\\]{}#&*!|>'\" \n]{0,4}",
        ) {
            let mut text = CONTRACT_EXAMPLE.to_owned();
            if text.is_char_boundary(cut) {
                text.insert_str(cut, &insert);
            }
            let _ = parse(text.as_bytes(), Path::new("manifest.yaml"));
        }
    }
}

#[test]
fn trace_sha256_may_be_given_per_rank() {
    let (a, b) = ("AB".repeat(32), "cd".repeat(32));
    let m = parse_str(&with(&format!("trace_sha256:\n- {a}\n- {b}\n"))).unwrap();
    assert_eq!(m.trace_sha256, None);
    let per_rank = m.trace_sha256_per_rank.unwrap();
    assert_eq!(per_rank[&0], "ab".repeat(32));
    assert_eq!(per_rank[&1], b);
    let m = parse_str(&with(&format!("trace_sha256:\n  0: {a}\n  3: {b}\n"))).unwrap();
    let per_rank = m.trace_sha256_per_rank.unwrap();
    assert_eq!(per_rank.keys().copied().collect::<Vec<_>>(), [0, 3]);
    // a rank that is not a number, or a digest that is not one
    assert!(error(&with(&format!("trace_sha256:\n  first: {a}\n")))
        .contains("a mapping from rank to digest"));
    assert!(error(&with(&format!("trace_sha256:\n- {a}\n- abc\n"))).contains("one per rank"));
}
