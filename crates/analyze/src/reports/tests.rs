//! Tests of the report readers on real nsys output, hand-made edge cases and generated rows.

use super::reader::{parse_report, ReadLimits, Report};
use super::*;
use proptest::prelude::*;
use std::path::Path;

const LABEL: &str = "stats/nsys_nvtx_pushpop_trace.csv";
const GPU_LABEL: &str = "stats/nsys_nvtx_gpu_proj_trace.csv";

/// Window sizes that make records straddle refills at every possible byte.
const WINDOWS: &[usize] = &[1, 2, 3, 5, 8, 13, 64, 1 << 20];

fn limits(initial_window: usize) -> ReadLimits {
    ReadLimits {
        initial_window,
        ..ReadLimits::DEFAULT
    }
}

/// Names as nsys 2022.4-2024.2 write them: a leading `:` is the program's own.
const AS_WRITTEN: ReadOptions = ReadOptions {
    strip_default_domain: false,
};
/// Names as nsys 2025.1 and newer write them: a leading `:` marks the default domain.
const STRIP: ReadOptions = ReadOptions {
    strip_default_domain: true,
};

/// Parses with every window size, checks they agree, returns the result.
fn pushpop(input: &[u8]) -> Result<(Vec<PushPopRow>, Interner), ReportError> {
    pushpop_with(input, AS_WRITTEN)
}

fn pushpop_with(
    input: &[u8],
    options: ReadOptions,
) -> Result<(Vec<PushPopRow>, Interner), ReportError> {
    let mut first: Option<Result<(Vec<PushPopRow>, Interner), ReportError>> = None;
    for &window in WINDOWS {
        let mut interner = Interner::new();
        let got = parse_report::<pushpop::PushPopSchema, _>(
            input,
            Path::new(LABEL),
            &mut interner,
            limits(window),
            options,
        )
        .map(|rows| (rows, interner));
        match &first {
            None => first = Some(got),
            Some(expected) => assert_eq!(
                summarize(&got),
                summarize(expected),
                "window {window} disagrees"
            ),
        }
    }
    first.expect("WINDOWS is not empty")
}

fn gpu_proj(input: &[u8]) -> Result<(Vec<GpuProjRow>, Interner), ReportError> {
    let mut first: Option<Result<(Vec<GpuProjRow>, Interner), ReportError>> = None;
    for &window in WINDOWS {
        let mut interner = Interner::new();
        let got = parse_report::<gpu_proj::GpuProjSchema, _>(
            input,
            Path::new(GPU_LABEL),
            &mut interner,
            limits(window),
            AS_WRITTEN,
        )
        .map(|rows| (rows, interner));
        match &first {
            None => first = Some(got),
            Some(expected) => assert_eq!(
                summarize(&got),
                summarize(expected),
                "window {window} disagrees"
            ),
        }
    }
    first.expect("WINDOWS is not empty")
}

fn summarize<T: std::fmt::Debug>(r: &Result<(Vec<T>, Interner), ReportError>) -> String {
    match r {
        Ok((rows, interner)) => {
            let names: Vec<&str> = (0..interner.len())
                .map(|i| interner.resolve(NameId(i as u32)))
                .collect();
            format!("{rows:?} {names:?}")
        }
        Err(e) => format!("error: {e}"),
    }
}

fn names(rows: &[PushPopRow], interner: &Interner) -> Vec<String> {
    rows.iter()
        .map(|r| interner.resolve(r.name).to_string())
        .collect()
}

fn err_text(input: &[u8]) -> String {
    match pushpop(input) {
        Ok((rows, _)) => panic!("expected an error, got {rows:?}"),
        Err(e) => e.to_string(),
    }
}

fn gpu_err_text(input: &[u8]) -> String {
    match gpu_proj(input) {
        Ok((rows, _)) => panic!("expected an error, got {rows:?}"),
        Err(e) => e.to_string(),
    }
}

/// Exactly what nsys 2024.2 wrote for a small NVTX program.
const REAL_2024_2: &str = "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree
1640454,4945536,3305082,3291528,13554,profile-target,2378,2378,0,2,1,,:1,profile-target
1652346,3313383,1661037,1658222,2815,iteration 0,2378,2378,1,3,2,1,:1:2,--iteration 0
1652766,2733815,1081049,0,1081049,\"pre,processing \"quoted\"\",2378,2378,2,0,3,2,:1:2:3,\"----pre,processing \"quoted\"\"
2734647,3311449,576802,0,576802,\"comma,
newline\",2378,2378,2,0,4,2,:1:2:4,\"----comma,
newline\"
3312461,3312832,371,0,371,plain \"q\" x,2378,2378,2,0,5,2,:1:2:5,----plain \"q\" x
";

#[test]
fn real_2024_2_rows() {
    let (rows, interner) = pushpop(REAL_2024_2.as_bytes()).unwrap();
    assert_eq!(
        names(&rows, &interner),
        [
            "profile-target",
            "iteration 0",
            "pre,processing \"quoted\"",
            "comma,\nnewline",
            "plain \"q\" x"
        ]
    );
    assert_eq!(
        rows[0],
        PushPopRow {
            start_ns: 1640454,
            end_ns: 4945536,
            dur_child_ns: 3291528,
            name: NameId(0),
            pid: 2378,
            tid: 2378,
            range_id: 1,
            parent_id: None,
            line: 2,
        }
    );
    assert_eq!(rows[0].dur_non_child_ns(), 13554);
    assert_eq!(rows[1].parent_id, Some(1));
    assert_eq!(rows[3].range_id, 4);
    let lines: Vec<u32> = rows.iter().map(|r| r.line).collect();
    // The name with a newline is written twice (Name, NameTree): its record spans 3 lines.
    assert_eq!(lines, [2, 3, 4, 5, 8]);
}

#[test]
fn read_pushpop_reads_a_file_and_names_it_in_errors() {
    let dir = std::env::temp_dir().join(format!("nsys-gate-reports-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pushpop.csv");
    std::fs::write(&file, REAL_2024_2).unwrap();
    let mut interner = Interner::new();
    assert_eq!(
        read_pushpop(&file, &mut interner, AS_WRITTEN)
            .unwrap()
            .len(),
        5
    );

    let empty = dir.join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    let e = read_pushpop(&empty, &mut interner, AS_WRITTEN).unwrap_err();
    assert!(
        matches!(&e, ReportError::Empty { path } if path == &empty),
        "{e:?}"
    );
    assert_eq!(e.path(), empty.as_path());

    let missing = dir.join("missing.csv");
    let e = read_gpu_proj(&missing, &mut interner, AS_WRITTEN).unwrap_err();
    assert!(matches!(e, ReportError::Io { .. }));
    assert!(e
        .to_string()
        .starts_with(&format!("{}: cannot read: ", missing.display())));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn row<'a>(name: &'a str, lvl: u32, stack: &'a [u64]) -> PushPopRecord<'a> {
    let range_id = *stack.last().unwrap();
    PushPopRecord {
        start_ns: 1000 * range_id as i64,
        end_ns: 1000 * range_id as i64 + 500,
        dur_child_ns: 100,
        name,
        pid: 7,
        tid: 8,
        lvl,
        num_child: 0,
        range_id,
        parent_id: (stack.len() >= 2).then(|| stack[stack.len() - 2]),
        range_stack: stack,
    }
}

/// A push/pop file of `names`, each at level 1 under one root, written as nsys does.
fn file_of(names: &[&str], eol: &str) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(PUSHPOP_HEADER.as_bytes());
    out.extend_from_slice(eol.as_bytes());
    write_pushpop_row(&mut out, &row("root", 0, &[1]), eol).unwrap();
    let stacks: Vec<[u64; 2]> = (0..names.len()).map(|i| [1, i as u64 + 2]).collect();
    for (name, stack) in names.iter().zip(&stacks) {
        write_pushpop_row(&mut out, &row(name, 1, stack), eol).unwrap();
    }
    out
}

const TRICKY: &[&str] = &[
    "a\",b",
    "a\",",
    "\",",
    "\",\"",
    "x\"\ny",
    "x\",\ny",
    "trailing\"",
    "trailing,\"",
    "\"leading",
    "\"leading,",
    "\"",
    "\"\"",
    "\"\"\"",
    "\",\"\n\",\"",
    "",
    ",",
    ",,,",
    "\n",
    "\n\n\n",
    "a,\n,b",
    "\n,\n",
    "many\nnew\nlines\n\nhere\n",
    "日本語,ü \u{1F600}",
    "\u{feff}bom",
    ":colon",
    "::double",
    "DOMAIN:message",
    "None",
    "1,2,3,4",
    "1,7,8,1,0,3,1,:1:3,--1",
    "--",
    "-,-",
    "tab\there",
    "cr\rin",
    "cr at end\r",
    "crlf\r\ninside",
    "comma at end,",
    ",comma at start",
    "quote then newline\"\n",
    "x\",7,8,1,0,99,1,:1:99,\"--x",
];

/// The name read for a pushed `name`.
fn expected(name: &str, options: ReadOptions) -> &str {
    match name.strip_prefix(':') {
        Some(rest) if options.strip_default_domain => rest,
        _ => name,
    }
}

#[test]
fn tricky_names_come_out_exactly() {
    for (eol, options) in [("\n", AS_WRITTEN), ("\r\n", AS_WRITTEN), ("\n", STRIP)] {
        let input = file_of(TRICKY, eol);
        let (rows, interner) = pushpop_with(&input, options)
            .unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&input)));
        let got = names(&rows, &interner);
        let want: Vec<&str> = std::iter::once("root")
            .chain(TRICKY.iter().map(|n| expected(n, options)))
            .collect();
        assert_eq!(got, want, "eol {eol:?} {options:?}");
        for (i, r) in rows.iter().enumerate().skip(1) {
            assert_eq!(r.range_id, i as u64 + 1);
            assert_eq!(r.parent_id, Some(1));
        }
    }
}

#[test]
fn each_tricky_name_alone_and_last() {
    // The last row of a file has no next row to confirm it; with and without a final
    // line end.
    for name in TRICKY {
        for eol in ["\n", "\r\n"] {
            let mut input = file_of(&[name], eol);
            for trim in [false, true] {
                if trim {
                    input.truncate(input.len() - eol.len());
                }
                let (rows, interner) = pushpop(&input).unwrap_or_else(|e| {
                    panic!("{name:?} {e}\n{}", String::from_utf8_lossy(&input))
                });
                assert_eq!(
                    names(&rows, &interner),
                    ["root", *name],
                    "{name:?} eol {eol:?} trimmed {trim}"
                );
            }
        }
    }
}

#[test]
fn a_leading_colon_is_dropped_only_for_nsys_that_marks_the_default_domain_with_it() {
    let input = file_of(&[":x", "D:x", "x", ":", "::y"], "\n");
    // nsys 2022.4-2024.2: the program pushed `:x`, which is not `x`.
    let (rows, interner) = pushpop_with(&input, AS_WRITTEN).unwrap();
    assert_eq!(
        names(&rows, &interner),
        ["root", ":x", "D:x", "x", ":", "::y"]
    );
    assert_ne!(rows[1].name, rows[3].name);
    // nsys 2025.1 and newer: `:x` is `x` in the default domain; a named domain stays.
    let (rows, interner) = pushpop_with(&input, STRIP).unwrap();
    assert_eq!(names(&rows, &interner), ["root", "x", "D:x", "x", "", ":y"]);
    assert_eq!(rows[1].name, rows[3].name);
}

#[test]
fn preamble_lines_are_skipped() {
    let mut input = b"Processing [trace.sqlite] with [nvtx_pushpop_trace.py]... \n\n ** NVTX Push/Pop Range Trace (nvtx_pushpop_trace):\nName,PID\n\n".to_vec();
    input.extend_from_slice(REAL_2024_2.as_bytes());
    let (rows, _) = pushpop(&input).unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[0].line, 7);
    assert_eq!(rows[4].line, 13);
}

#[test]
fn extra_and_reordered_columns() {
    let input = "Extra,NameTree,Name,Note \"x\",RangeStack,ParentId,RangeId,Lvl,TID,PID,DurNonChild (ns),DurChild (ns),End (ns),Start (ns),Tail\n\
        e,--a\"b,a\"b,\"n,1\",:1:2,1,2,1,8,7,5,5,20,10,t\n\
        \"e,2\",\"--x,y\",\"x,y\",,:1:3,1,3,1,8,7,10,0,30,20,\"t,\"\"\n";
    let (rows, interner) = pushpop(input.as_bytes()).unwrap();
    assert_eq!(names(&rows, &interner), ["a\"b", "x,y"]);
    assert_eq!(
        rows[1],
        PushPopRow {
            start_ns: 20,
            end_ns: 30,
            dur_child_ns: 0,
            name: NameId(1),
            pid: 7,
            tid: 8,
            range_id: 3,
            parent_id: Some(1),
            line: 3,
        }
    );
}

#[test]
fn optional_check_columns_may_be_missing() {
    let input =
        "Start (ns),End (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,RangeId,ParentId\n\
        10,20,0,10,\"a,b\",1,2,0,1,\n";
    let (rows, interner) = pushpop(input.as_bytes()).unwrap();
    assert_eq!(names(&rows, &interner), ["a,b"]);
}

#[test]
fn missing_column_is_named() {
    let input = "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,ParentId,RangeStack,NameTree\n1,2,1,0,1,a,1,1,0,0,,:1,a\n";
    assert_eq!(
        err_text(input.as_bytes()),
        "stats/nsys_nvtx_pushpop_trace.csv: missing required column `RangeId` (header: Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,ParentId,RangeStack,NameTree)"
    );
    // A time column in another unit is not the column.
    let input = REAL_2024_2.replacen("End (ns)", "End (us)", 1);
    assert!(err_text(input.as_bytes()).contains("missing required column `End`"));
    // Nothing like a header at all.
    assert_eq!(
        err_text(b"hello\nworld\n"),
        "stats/nsys_nvtx_pushpop_trace.csv: missing required column `Start` (header: hello)"
    );
    let e = pushpop(b"Name,PID\n").unwrap_err();
    assert!(
        matches!(&e, ReportError::MissingColumn { column, header, .. } if column == "Start" && header == "Name,PID"),
        "{e:?}"
    );
}

#[test]
fn empty_file_and_header_only() {
    assert!(matches!(pushpop(b""), Err(ReportError::Empty { .. })));
    assert!(matches!(gpu_proj(b""), Err(ReportError::Empty { .. })));
    assert_eq!(
        err_text(b""),
        "stats/nsys_nvtx_pushpop_trace.csv: empty file (0 bytes)"
    );
    let (rows, _) = pushpop(format!("{PUSHPOP_HEADER}\n").as_bytes()).unwrap();
    assert!(rows.is_empty());
    let (rows, _) = pushpop(PUSHPOP_HEADER.as_bytes()).unwrap();
    assert!(rows.is_empty());
    let (rows, _) = pushpop(format!("{PUSHPOP_HEADER}\r\n\r\n\n").as_bytes()).unwrap();
    assert!(rows.is_empty());
    let (rows, _) = gpu_proj(format!("{GPU_PROJ_HEADER}\n").as_bytes()).unwrap();
    assert!(rows.is_empty());
}

#[test]
fn legacy_none_parent_and_null_names() {
    // nsys 2022.4 writes None for NULL; a NULL name makes NameTree NULL as well.
    let input = format!(
        "{PUSHPOP_HEADER}\n\
         10,100,90,10,80,None,5,6,0,1,1,None,:1,None\n\
         20,30,10,0,10,None,5,6,1,0,2,1,:1:2,None\n\
         40,50,10,0,10,,5,6,1,0,3,1,:1:3,\n"
    );
    let (rows, interner) = pushpop(input.as_bytes()).unwrap();
    assert_eq!(names(&rows, &interner), ["None", "None", ""]);
    assert_eq!(rows[0].parent_id, None);
    assert_eq!(rows[1].parent_id, Some(1));
}

#[test]
fn real_valued_durations_of_zero_fraction_are_accepted() {
    let input = format!("{PUSHPOP_HEADER}\n10,100,90,10.0,80.0,a,5,6,0,1,1,,:1,a\n");
    let (rows, _) = pushpop(input.as_bytes()).unwrap();
    assert_eq!((rows[0].dur_child_ns, rows[0].dur_non_child_ns()), (10, 80));
}

/// A file of REAL_2024_2's header and `rows` (one line each), followed by a last good row.
fn with_rows(rows: &[&str]) -> Vec<u8> {
    let mut out = format!("{PUSHPOP_HEADER}\n");
    for r in rows {
        out.push_str(r);
        out.push('\n');
    }
    out.into_bytes()
}

const GOOD: &str = "1,2,1,0,1,a,7,8,0,0,1,,:1,a";

#[test]
fn errors_carry_the_exact_line_and_column() {
    let mut rows = vec![GOOD; 10];
    rows.push("200,100,0,0,0,b,7,8,0,0,2,,:2,b");
    assert_eq!(
        err_text(&with_rows(&rows)),
        "stats/nsys_nvtx_pushpop_trace.csv:12: column `End (ns)`: `End` (100) is before `Start` (200)"
    );

    // A multi-line name before the bad row shifts its line.
    let mut rows = vec![GOOD, "1,2,1,0,1,\"x,\n\ny\",7,8,0,0,1,,:1,\"x,\n\ny\""];
    rows.extend([GOOD, "1,2,1,0,1,a,abc,8,0,0,1,,:1,a", GOOD]);
    assert_eq!(
        err_text(&with_rows(&rows)),
        "stats/nsys_nvtx_pushpop_trace.csv:9: column `PID`: expected an unsigned integer, found \"abc\""
    );

    let cases: &[(&str, &str)] = &[
        (
            "1,2,1,0,1,a,-7,8,0,0,1,,:1,a",
            "column `PID`: expected an unsigned integer, found \"-7\"",
        ),
        (
            "1,2,1,0,1,a,7,4294967296,0,0,1,,:1,a",
            "column `TID`: 4294967296 is too large for a process or thread id (over 4294967295)",
        ),
        (
            "-1,2,3,0,3,a,7,8,0,0,1,,:1,a",
            "column `Start (ns)`: expected an unsigned integer, found \"-1\"",
        ),
        (
            "1,5,3,0,3,a,7,8,0,0,1,,:1,a",
            "column `Duration (ns)`: `Duration` (3) is not `End` - `Start` (4)",
        ),
        (
            "1,5,4,1,4,a,7,8,0,0,1,,:1,a",
            "column `DurNonChild (ns)`: `DurChild` + `DurNonChild` (1 + 4) is not `Duration` (4)",
        ),
        (
            "1,2,1,0,1,a,7,8,0,0,1,,:1:2,a",
            "column `RangeStack`: `RangeStack` (\":1:2\") does not end with `RangeId` (1)",
        ),
        (
            "1,2,1,0,1,a,7,8,1,0,1,,:1,a",
            "column `NameTree`: `NameTree` is not 2 dashes followed by `Name` (\"a\")",
        ),
        (
            "1,2,1,0,1,a,7,8,0,0,1,x,:1,a",
            "column `ParentId`: expected an unsigned integer, found \"x\"",
        ),
        (
            "1,2,1,0,1,a,7,8,0,0,1,,:1",
            "column `RangeStack`: the record ends after this column (column 13 of 14)",
        ),
        (
            "1,2,1,0,1,a,7,8,0,0,1,,:1,a,extra",
            "column `NameTree`: more columns than the header's 14 after this last column",
        ),
        (
            "1,2,1,0,1,a,7,8,99999999999,0,1,,:1,a",
            "column `Lvl`: `Lvl` (99999999999) is too large",
        ),
        (
            "1,9223372036854775808,1,0,1,a,7,8,0,0,1,,:1,a",
            "column `End (ns)`: 9223372036854775808 is too large (over 9223372036854775807)",
        ),
    ];
    for (bad, message) in cases {
        let input = with_rows(&[GOOD, GOOD, bad, GOOD]);
        assert_eq!(
            err_text(&input),
            format!("stats/nsys_nvtx_pushpop_trace.csv:4: {message}"),
            "{bad}"
        );
    }
}

#[test]
fn a_record_cut_short_at_the_end_is_an_error() {
    let input = format!("{PUSHPOP_HEADER}\n{GOOD}\n1,2,1,0,1,ab");
    assert_eq!(
        err_text(input.as_bytes()),
        "stats/nsys_nvtx_pushpop_trace.csv:3: column `Name`: the record ends after this column (column 6 of 14)"
    );
    // Cut inside a quoted name: the shortest reading fails first.
    let input = format!("{PUSHPOP_HEADER}\n{GOOD}\n1,2,1,0,1,\"a,b");
    assert!(err_text(input.as_bytes()).starts_with("stats/nsys_nvtx_pushpop_trace.csv:3: "));
}

#[test]
fn names_must_be_utf8() {
    let mut input = format!("{PUSHPOP_HEADER}\n{GOOD}\n").into_bytes();
    input.extend_from_slice(b"1,2,1,0,1,\"x,\n\xff\",7,8,0,0,1,,:1,\"x,\n\xff\"\n");
    let e = pushpop(&input).unwrap_err();
    assert!(matches!(e, ReportError::NotUtf8 { line: 4, .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "stats/nsys_nvtx_pushpop_trace.csv: file is not UTF-8 at line 4"
    );
}

#[test]
fn a_window_limit_bounds_memory() {
    // A quote that never closes, in a file larger than the window may grow.
    let mut input = format!("{PUSHPOP_HEADER}\n1,2,1,0,1,\"a,").into_bytes();
    input.extend(std::iter::repeat_n(b'x', 10_000));
    let mut interner = Interner::new();
    let e = parse_report::<pushpop::PushPopSchema, _>(
        &input[..],
        Path::new(LABEL),
        &mut interner,
        ReadLimits {
            initial_window: 256,
            max_window: 4096,
            ..ReadLimits::DEFAULT
        },
        AS_WRITTEN,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "stats/nsys_nvtx_pushpop_trace.csv:2: a record (with the record after it) is longer than 4096 bytes"
    );
}

#[test]
fn many_false_ends_inside_one_name() {
    // Each `",` inside the name is a place where it could end.
    let name = format!("a{}b", "\",".repeat(5000));
    let input = file_of(&[&name, "next"], "\n");
    let (rows, interner) = pushpop(&input).unwrap();
    assert_eq!(names(&rows, &interner), ["root", name.as_str(), "next"]);
    // With a small budget the same record is refused, not searched forever.
    let mut interner = Interner::new();
    let e = parse_report::<pushpop::PushPopSchema, _>(
        &input[..],
        Path::new(LABEL),
        &mut interner,
        ReadLimits {
            candidate_budget: 1000,
            ..ReadLimits::DEFAULT
        },
        AS_WRITTEN,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "stats/nsys_nvtx_pushpop_trace.csv:3: column `Name`: record cannot be split: more than 1000 ways to read it were tried"
    );
}

#[test]
fn crlf_files() {
    let input = REAL_2024_2.replace('\n', "\r\n");
    let (rows, interner) = pushpop(input.as_bytes()).unwrap();
    // The newline inside the name was turned into \r\n too, and comes out as such.
    assert_eq!(
        names(&rows, &interner),
        [
            "profile-target",
            "iteration 0",
            "pre,processing \"quoted\"",
            "comma,\r\nnewline",
            "plain \"q\" x"
        ]
    );
}

#[test]
fn a_name_ending_in_a_newline_on_the_last_line() {
    let input = format!("{PUSHPOP_HEADER}\n1,2,1,0,1,x\n,7,8,0,0,1,,:1,x\n\n");
    let (rows, interner) = pushpop(input.as_bytes()).unwrap();
    assert_eq!(names(&rows, &interner), ["x\n"]);
}

const GPU_2023_4: &str = "Name,Projected Start (ns),Projected Duration (ns),Orig Start (ns),Orig Duration (ns),Style,PID,TID,NumGPUOps,Lvl,NumChild,RangeId,ParentId,RangeStack
,100,50,,,,2378,2378,3,,0,,,
profile-target,200,900,150,1000,PushPop,2378,2378,20,0,1,1,,:1
\"pre,processing \"x\"\",250,10,240,30,PushPop,2378,2378,1,2,0,3,2,:1:2:3
marker,260,5,255,40,StartEnd,2378,2379,1,0,0,9,,:9
\"a\nb,c\",300,1,290,20,PushPop,2378,2378,1,2,0,4,2,:1:2:4
";

#[test]
fn gpu_projection_rows() {
    let (rows, interner) = gpu_proj(GPU_2023_4.as_bytes()).unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(
        rows[0],
        GpuProjRow {
            name: None,
            projected_start_ns: Some(100),
            projected_duration_ns: Some(50),
            orig_start_ns: None,
            style: None,
            pid: 2378,
            tid: 2378,
            num_gpu_ops: 3,
            range_id: None,
            line: 2,
        }
    );
    let named: Vec<(&str, Option<RangeStyle>, Option<u64>, u32)> = rows[1..]
        .iter()
        .map(|r| {
            (
                interner.resolve(r.name.unwrap()),
                r.style,
                r.range_id,
                r.line,
            )
        })
        .collect();
    assert_eq!(
        named,
        [
            ("profile-target", Some(RangeStyle::PushPop), Some(1), 3),
            (
                "pre,processing \"x\"",
                Some(RangeStyle::PushPop),
                Some(3),
                4
            ),
            ("marker", Some(RangeStyle::StartEnd), Some(9), 5),
            ("a\nb,c", Some(RangeStyle::PushPop), Some(4), 6),
        ]
    );
    assert_eq!(rows[3].tid, 2379);
    assert_eq!(rows[1].orig_start_ns, Some(150));
    assert_eq!(rows[1].num_gpu_ops, 20);
}

#[test]
fn gpu_projection_errors() {
    let header = GPU_PROJ_HEADER;
    let input = format!("{header}\na,1,2,3,4,Both,1,1,1,0,0,1,,:1\n");
    assert_eq!(
        gpu_err_text(input.as_bytes()),
        "stats/nsys_nvtx_gpu_proj_trace.csv:2: column `Style`: expected `PushPop` or `StartEnd`, found \"Both\""
    );
    let input =
        format!("{header}\na,1,2,3,4,PushPop,1,1,1,0,0,1,,:1\nb,1,2,3,4,PushPop,1,1,1,0,0,2,,:1\n");
    assert_eq!(
        gpu_err_text(input.as_bytes()),
        "stats/nsys_nvtx_gpu_proj_trace.csv:3: column `RangeStack`: `RangeStack` (\":1\") does not end with `RangeId` (2)"
    );
    let input = format!("{header}\na,1,2,3,4,PushPop,1,1,,0,0,1,,:1\n");
    assert_eq!(
        gpu_err_text(input.as_bytes()),
        "stats/nsys_nvtx_gpu_proj_trace.csv:2: column `NumGPUOps`: expected an unsigned integer, found \"\""
    );
    let input = "Name,Style\n";
    assert_eq!(
        gpu_err_text(input.as_bytes()),
        "stats/nsys_nvtx_gpu_proj_trace.csv: missing required column `Projected Start` (header: Name,Style)"
    );
}

#[test]
fn gpu_projection_lenient_columns_and_legacy_none() {
    let input = format!(
        "{GPU_PROJ_HEADER}\nx,1,2,3,4,PushPop,1,1,1,None,0,7,None,:7\ny,1,2,3,4,PushPop,1,1,1,-1,0,8,,:7:8\n"
    );
    let (rows, interner) = gpu_proj(input.as_bytes()).unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| interner.resolve(r.name.unwrap()))
        .collect();
    assert_eq!(names, ["x", "y"]);
}

// ---- generated rows ----

fn name_strategy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => Just(",".to_string()),
        4 => Just("\"".to_string()),
        3 => Just("\n".to_string()),
        1 => Just("\r".to_string()),
        1 => Just("\r\n".to_string()),
        1 => Just(":".to_string()),
        1 => Just("-".to_string()),
        1 => Just("\",".to_string()),
        1 => Just("\"\n".to_string()),
        4 => "[a-z0-9 ]{1,3}",
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..10).prop_map(|v| v.concat())
}

#[derive(Debug, Clone)]
struct GenRow {
    name: String,
    start: i64,
    dur: i64,
    child: i64,
    pid: u64,
    tid: u64,
    lvl: u32,
}

fn gen_row() -> impl Strategy<Value = GenRow> {
    (
        name_strategy(),
        0i64..1_000_000_000_000_000,
        0i64..1_000_000_000,
        0u32..=100,
        0u64..5_000_000,
        0u64..5_000_000,
        0u32..4,
    )
        .prop_map(|(name, start, dur, percent, pid, tid, lvl)| GenRow {
            name,
            start,
            dur,
            child: dur / 100 * i64::from(percent),
            pid,
            tid,
            lvl,
        })
}

fn write_pushpop(rows: &[GenRow], eol: &str) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(PUSHPOP_HEADER.as_bytes());
    out.extend_from_slice(eol.as_bytes());
    for (i, r) in rows.iter().enumerate() {
        let id = i as u64 + 1;
        let mut stack: Vec<u64> = (0..r.lvl).map(|l| 1000 + u64::from(l)).collect();
        stack.push(id);
        let parent = (r.lvl > 0).then(|| stack[stack.len() - 2]);
        write_pushpop_row(
            &mut out,
            &PushPopRecord {
                start_ns: r.start,
                end_ns: r.start + r.dur,
                dur_child_ns: r.child,
                name: &r.name,
                pid: r.pid,
                tid: r.tid,
                lvl: r.lvl,
                num_child: 0,
                range_id: id,
                parent_id: parent,
                range_stack: &stack,
            },
            eol,
        )
        .unwrap();
    }
    out
}

proptest! {
    // PROPTEST_CASES raises the count for a longer hunt.
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
    ))]

    #[test]
    fn generated_pushpop_rows_round_trip(
        rows in prop::collection::vec(gen_row(), 0..8),
        crlf in any::<bool>(),
        window in prop::sample::select(vec![1usize, 3, 16, 1 << 16]),
        strip in any::<bool>(),
    ) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let input = write_pushpop(&rows, eol);
        let mut interner = Interner::new();
        let options = ReadOptions { strip_default_domain: strip };
        let parsed = parse_report::<pushpop::PushPopSchema, _>(
            &input[..], Path::new(LABEL), &mut interner, limits(window), options);
        let parsed = match parsed {
            Ok(p) => p,
            Err(e) => return Err(TestCaseError::fail(format!(
                "{e}\n{:?}", String::from_utf8_lossy(&input)))),
        };
        prop_assert_eq!(parsed.len(), rows.len());
        let mut line = 2u32;
        for (i, (got, want)) in parsed.iter().zip(&rows).enumerate() {
            prop_assert_eq!(interner.resolve(got.name), expected(&want.name, options));
            prop_assert_eq!(got.start_ns, want.start);
            prop_assert_eq!(got.end_ns, want.start + want.dur);
            prop_assert_eq!(got.dur_child_ns, want.child);
            prop_assert_eq!(got.dur_non_child_ns(), want.dur - want.child);
            prop_assert_eq!((u64::from(got.pid), u64::from(got.tid)), (want.pid, want.tid));
            prop_assert_eq!(got.range_id, i as u64 + 1);
            prop_assert_eq!(got.parent_id.is_some(), want.lvl > 0);
            prop_assert_eq!(got.line, line);
            // Each row's newlines: the name twice (Name and NameTree), plus its line end.
            line += 1 + 2 * want.name.matches('\n').count() as u32;
        }
    }

    #[test]
    fn generated_gpu_rows_round_trip(
        rows in prop::collection::vec(
            (prop::option::weighted(0.9, name_strategy()), any::<bool>(), 0i64..1 << 50, 0u64..100),
            0..8),
        crlf in any::<bool>(),
        window in prop::sample::select(vec![1usize, 3, 16, 1 << 16]),
        strip in any::<bool>(),
    ) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let options = ReadOptions { strip_default_domain: strip };
        let mut input = Vec::new();
        input.extend_from_slice(GPU_PROJ_HEADER.as_bytes());
        input.extend_from_slice(eol.as_bytes());
        let rows: Vec<_> = rows
            .into_iter()
            .map(|(name, start_end, t, ops)| (name.filter(|n| !n.is_empty()), start_end, t, ops))
            .collect();
        for (i, (name, start_end, t, ops)) in rows.iter().enumerate() {
            let id = i as u64 + 1;
            let stack = [1, id];
            let root = name.is_none();
            write_gpu_proj_row(&mut input, &GpuProjRecord {
                name: name.as_deref(),
                projected_start_ns: Some(*t),
                projected_duration_ns: Some(7),
                orig_start_ns: (!root).then_some(*t),
                orig_duration_ns: (!root).then_some(9),
                style: (!root).then_some(if *start_end { RangeStyle::StartEnd } else { RangeStyle::PushPop }),
                pid: 1,
                tid: 2,
                num_gpu_ops: *ops,
                lvl: (!root).then_some(1),
                num_child: 0,
                range_id: (!root).then_some(id),
                parent_id: (!root).then_some(1),
                range_stack: if root { &[] } else { &stack },
            }, eol).unwrap();
        }
        let mut interner = Interner::new();
        let parsed = parse_report::<gpu_proj::GpuProjSchema, _>(
            &input[..], Path::new(GPU_LABEL), &mut interner, limits(window), options);
        let parsed = match parsed {
            Ok(p) => p,
            Err(e) => return Err(TestCaseError::fail(format!(
                "{e}\n{:?}", String::from_utf8_lossy(&input)))),
        };
        prop_assert_eq!(parsed.len(), rows.len());
        for (i, (got, (name, _, t, ops))) in parsed.iter().zip(&rows).enumerate() {
            prop_assert_eq!(got.name.map(|n| interner.resolve(n)), name.as_deref().map(|n| expected(n, options)));
            prop_assert_eq!(got.range_id, name.as_ref().map(|_| i as u64 + 1));
            prop_assert_eq!(got.projected_start_ns, Some(*t));
            prop_assert_eq!(got.num_gpu_ops, *ops);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        header in prop::sample::select(vec![0usize, 1, 2]),
        body in prop::collection::vec(
            prop_oneof![
                Just(b','), Just(b'"'), Just(b'\n'), Just(b'\r'), Just(b':'), Just(b'-'),
                Just(b'0'), Just(b'1'), Just(b'9'), Just(b'a'), any::<u8>(),
            ],
            0..300),
        window in prop::sample::select(vec![1usize, 7, 1 << 16]),
    ) {
        let mut input = Vec::new();
        match header {
            1 => input.extend_from_slice(format!("{PUSHPOP_HEADER}\n").as_bytes()),
            2 => input.extend_from_slice(format!("{GPU_PROJ_HEADER}\n").as_bytes()),
            _ => {}
        }
        input.extend_from_slice(&body);
        let small = ReadLimits { initial_window: window, max_window: 1 << 12, ..ReadLimits::DEFAULT };
        let _ = parse_report::<pushpop::PushPopSchema, _>(
            &input[..], Path::new(LABEL), &mut Interner::new(), small, STRIP);
        let _ = parse_report::<gpu_proj::GpuProjSchema, _>(
            &input[..], Path::new(GPU_LABEL), &mut Interner::new(), small, STRIP);
    }

    #[test]
    fn damaged_files_never_panic(
        cuts in prop::collection::vec((0usize..2000, 0usize..4, any::<u8>()), 1..6),
    ) {
        let mut input = file_of(TRICKY, "\n");
        for (at, len, byte) in cuts {
            let at = at % (input.len() + 1);
            let end = (at + len).min(input.len());
            input.splice(at..end, [byte]);
        }
        let _ = pushpop(&input);
    }
}

/// What nsys 2024.2 wrote for a program pushing the names in `REAL_NAMES` (recorded on this
/// project's machine; PIDs as they came).
const REAL_2024_2_TRICKY: &str = "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree\n\
25430811,51805505,26374694,26373131,1563,profile-target,19758,19758,0,2,1,,:1,profile-target\n\
25431763,29748643,4316880,4290173,26707,iteration 0,19758,19758,1,23,2,1,:1:2,--iteration 0\n\
25432294,25611270,178976,0,178976,\"a\",b\",19758,19758,2,0,3,2,:1:2:3,\"----a\",b\"\n\
25612833,26302867,690034,0,690034,x\"\n\
y,19758,19758,2,0,4,2,:1:2:4,----x\"\n\
y\n\
26304400,26478477,174077,0,174077,trailing\",19758,19758,2,0,5,2,:1:2:5,----trailing\"\n\
26479408,26648055,168647,0,168647,\"leading,19758,19758,2,0,6,2,:1:2:6,----\"leading\n\
26649467,26811542,162075,0,162075,\",19758,19758,2,0,7,2,:1:2:7,----\"\n\
26812243,26972684,160441,0,160441,\"\",19758,19758,2,0,8,2,:1:2:8,----\"\"\n\
26973385,27134067,160682,0,160682,,19758,19758,2,0,9,2,:1:2:9,\n\
27134678,27297563,162885,0,162885,\",\",19758,19758,2,0,10,2,:1:2:10,\"----,\"\n\
27299247,27459327,160080,0,160080,\n\
\n\
,19758,19758,2,0,11,2,:1:2:11,----\n\
\n\
\n\
27459888,27621181,161293,0,161293,\"a,\n\
,b\",19758,19758,2,0,12,2,:1:2:12,\"----a,\n\
,b\"\n\
27621962,27782073,160111,0,160111,\"日本語,ü\",19758,19758,2,0,13,2,:1:2:13,\"----日本語,ü\"\n\
27782794,27943656,160862,0,160862,:colon,19758,19758,2,0,14,2,:1:2:14,----:colon\n\
27944508,28105349,160841,0,160841,None,19758,19758,2,0,15,2,:1:2:15,----None\n\
28106141,28268345,162204,0,162204,cr\rin,19758,19758,2,0,16,2,:1:2:16,----cr\rin\n\
28269457,28430389,160932,0,160932,cr at end\r,19758,19758,2,0,17,2,:1:2:17,----cr at end\r\n\
28432132,28594708,162576,0,162576,crlf\r\n\
inside,19758,19758,2,0,18,2,:1:2:18,----crlf\r\n\
inside\n\
28596200,28758124,161924,0,161924,\"comma at end,\",19758,19758,2,0,19,2,:1:2:19,\"----comma at end,\"\n\
28759156,28920900,161744,0,161744,quote nl\"\n\
,19758,19758,2,0,20,2,:1:2:20,----quote nl\"\n\
\n\
28921962,29087111,165149,0,165149,\"x\",7,8,1,0,99,1,:1:99,\"--x\",19758,19758,2,0,21,2,:1:2:21,\"----x\",7,8,1,0,99,1,:1:99,\"--x\"\n\
29089155,29256830,167675,0,167675, sp ace ,19758,19758,2,0,22,2,:1:2:22,---- sp ace \n\
29258222,29419946,161724,0,161724,tab\tx,19758,19758,2,0,23,2,:1:2:23,----tab\tx\n\
29420807,29582180,161373,0,161373,\"\"q,\"\",19758,19758,2,0,24,2,:1:2:24,\"----\"q,\"\"\n\
29583773,29747641,163868,0,163868,\"\",\"\",19758,19758,2,0,25,2,:1:2:25,\"----\",\"\"\n\
29749254,51805505,22056251,0,22056251,unclosed,19758,19758,1,0,26,1,:1:26,--unclosed\n\
";

/// The names pushed, in order ("" comes out as NULL: empty `Name` and empty `NameTree`).
const REAL_NAMES: &[&str] = &[
    "profile-target",
    "iteration 0",
    "a\",b",
    "x\"\ny",
    "trailing\"",
    "\"leading",
    "\"",
    "\"\"",
    "",
    ",",
    "\n\n",
    "a,\n,b",
    "日本語,ü",
    // Pushed as `:colon`; nsys 2024.2 writes it as is (no default-domain mark).
    ":colon",
    "None",
    "cr\rin",
    "cr at end\r",
    "crlf\r\ninside",
    "comma at end,",
    "quote nl\"\n",
    "x\",7,8,1,0,99,1,:1:99,\"--x",
    " sp ace ",
    "tab\tx",
    "\"q,\"",
    "\",\"",
    "unclosed",
];

#[test]
fn real_2024_2_tricky_names() {
    let (rows, interner) = pushpop(REAL_2024_2_TRICKY.as_bytes()).unwrap();
    assert_eq!(names(&rows, &interner), REAL_NAMES);
    let ids: Vec<u64> = rows.iter().map(|r| r.range_id).collect();
    assert_eq!(ids, (1..=26).collect::<Vec<u64>>());
    // The unclosed range ends with the capture, as the top-level range does.
    assert_eq!(rows[25].end_ns, rows[0].end_ns);
}

/// What nsys 2023.4 wrote for the same program's SQLite export with synthetic CUDA work
/// added (one kernel in each of six ranges, one launched before any range).
const REAL_2023_4_GPU: &str = "Name,Projected Start (ns),Projected Duration (ns),Orig Start (ns),Orig Duration (ns),Style,PID,TID,NumGPUOps,Lvl,NumChild,RangeId,ParentId,RangeStack\n\
,25430011,100,,,,19758,19758,1,,0,,,\n\
profile-target,25432409,1380149,25430811,26374694,PushPop,19758,19758,6,0,1,1,,:1\n\
iteration 0,25432409,1380149,25431763,4316880,PushPop,19758,19758,6,1,6,2,1,:1:2\n\
\"a\",b\",25432409,200,25432294,178976,PushPop,19758,19758,1,2,0,3,2,:1:2:3\n\
x\"\n\
y,25612948,200,25612833,690034,PushPop,19758,19758,1,2,0,4,2,:1:2:4\n\
trailing\",26304515,200,26304400,174077,PushPop,19758,19758,1,2,0,5,2,:1:2:5\n\
\"leading,26479523,200,26479408,168647,PushPop,19758,19758,1,2,0,6,2,:1:2:6\n\
\",26649582,200,26649467,162075,PushPop,19758,19758,1,2,0,7,2,:1:2:7\n\
\"\",26812358,200,26812243,160441,PushPop,19758,19758,1,2,0,8,2,:1:2:8\n\
";

#[test]
fn real_2023_4_gpu_projection_with_its_root_row() {
    let (rows, interner) = gpu_proj(REAL_2023_4_GPU.as_bytes()).unwrap();
    let got: Vec<Option<&str>> = rows
        .iter()
        .map(|r| r.name.map(|n| interner.resolve(n)))
        .collect();
    assert_eq!(
        got,
        [
            None,
            Some("profile-target"),
            Some("iteration 0"),
            Some("a\",b"),
            Some("x\"\ny"),
            Some("trailing\""),
            Some("\"leading"),
            Some("\""),
            Some("\"\"")
        ]
    );
    let root = &rows[0];
    assert_eq!(
        (root.range_id, root.style, root.orig_start_ns),
        (None, None, None)
    );
    assert_eq!(
        (root.num_gpu_ops, root.projected_duration_ns),
        (1, Some(100))
    );
    assert_eq!(rows[1].num_gpu_ops, 6);
    assert!(rows[1..]
        .iter()
        .all(|r| r.style == Some(RangeStyle::PushPop)));
    let lines: Vec<u32> = rows.iter().map(|r| r.line).collect();
    assert_eq!(lines, [2, 3, 4, 5, 6, 8, 9, 10, 11]);
    // 2024.2 writes the same without the root row.
    let without_root: String = REAL_2023_4_GPU
        .lines()
        .filter(|l| !l.starts_with(",25430011"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (rows, _) = gpu_proj(without_root.as_bytes()).unwrap();
    assert_eq!(rows.len(), 8);
}

// ---- reading in parts ----

/// A small window, so that parts refill too (other tests try every window size).
const PART_LIMITS: ReadLimits = ReadLimits {
    initial_window: 256,
    ..ReadLimits::DEFAULT
};

/// What one pass over `input` reads: rows, names (and their ids), line numbers or the error.
fn one_pass<T: Report>(input: &[u8], label: &str) -> String
where
    T::Row: std::fmt::Debug,
{
    let mut names = Interner::new();
    let got = parse_report::<T, _>(input, Path::new(label), &mut names, PART_LIMITS, AS_WRITTEN);
    summarize(&got.map(|r| (r, names)))
}

/// What reading `input` in parts starting at `cuts` reads.
fn in_parts<T>(input: &[u8], label: &str, cuts: &[u64]) -> String
where
    T: Report + Sync,
    T::Row: Send + std::fmt::Debug,
{
    let mut names = Interner::new();
    let got = parts::read_with_cuts::<T>(
        input,
        Path::new(label),
        &mut names,
        (PART_LIMITS, AS_WRITTEN),
        cuts,
    );
    summarize(&got.map(|r| (r, names)))
}

fn line_starts(input: &[u8]) -> Vec<u64> {
    (1..=input.len())
        .filter(|&i| input[i - 1] == b'\n')
        .map(|i| i as u64)
        .collect()
}

#[test]
fn a_cut_at_any_byte_reads_as_one_pass() {
    let real = REAL_2024_2_TRICKY.as_bytes();
    let whole = one_pass::<pushpop::PushPopSchema>(real, LABEL);
    for cut in 0..=real.len() as u64 {
        let got = in_parts::<pushpop::PushPopSchema>(real, LABEL, &[cut]);
        assert_eq!(got, whole, "cut at {cut}");
    }
    // Around each line start (a cut is always made just after a line end).
    for input in [file_of(TRICKY, "\n"), file_of(TRICKY, "\r\n")] {
        let whole = one_pass::<pushpop::PushPopSchema>(&input, LABEL);
        for start in line_starts(&input) {
            for cut in [start - 1, start, start + 1] {
                let got = in_parts::<pushpop::PushPopSchema>(&input, LABEL, &[cut]);
                assert_eq!(got, whole, "cut at {cut}");
            }
        }
    }
    let gpu = REAL_2023_4_GPU.as_bytes();
    let whole = one_pass::<gpu_proj::GpuProjSchema>(gpu, GPU_LABEL);
    for cut in 0..=gpu.len() as u64 {
        let got = in_parts::<gpu_proj::GpuProjSchema>(gpu, GPU_LABEL, &[cut]);
        assert_eq!(got, whole, "cut at {cut}");
    }
}

#[test]
fn any_two_cuts_at_line_starts_read_as_one_pass() {
    // Line starts inside names (the cuts that must be dropped) as well as record starts.
    let input = REAL_2024_2_TRICKY.as_bytes();
    let starts = line_starts(input);
    let whole = one_pass::<pushpop::PushPopSchema>(input, LABEL);
    for (i, &a) in starts.iter().enumerate() {
        for &b in &starts[i + 1..] {
            let got = in_parts::<pushpop::PushPopSchema>(input, LABEL, &[a, b]);
            assert_eq!(got, whole, "cuts at {a} and {b}");
        }
    }
}

#[test]
fn an_error_in_a_later_part_keeps_its_line() {
    let mut input = REAL_2024_2_TRICKY.as_bytes().to_vec();
    // Break `Duration` on the record of range 21 (line 34 of the file).
    let at = input
        .windows(8)
        .position(|w| w == b",165149,")
        .expect("range 21's duration");
    input[at + 1] = b'x';
    let starts = line_starts(&input);
    let whole = one_pass::<pushpop::PushPopSchema>(&input, LABEL);
    for &cut in &starts {
        let got = in_parts::<pushpop::PushPopSchema>(&input, LABEL, &[cut]);
        assert_eq!(got, whole, "cut at {cut}");
    }
    let mut names = Interner::new();
    let err = parts::read_with_cuts::<pushpop::PushPopSchema>(
        &input,
        Path::new(LABEL),
        &mut names,
        (ReadLimits::DEFAULT, AS_WRITTEN),
        &[starts[30]],
    )
    .unwrap_err();
    assert!(err.to_string().contains(&format!("{LABEL}:34:")), "{err}");
}

#[test]
fn a_large_file_is_cut_at_line_starts_near_equal_shares() {
    let input = file_of(&["a"; 1000], "\n");
    let body = (PUSHPOP_HEADER.len() + 1) as u64;
    let cuts = parts::cut_points(&input[..], body, input.len() as u64, 4, 1000);
    assert_eq!(cuts.len(), 3);
    let share = (input.len() as u64 - body) / 4;
    for (k, &c) in cuts.iter().enumerate() {
        assert_eq!(input[c as usize - 1], b'\n');
        let target = body + share * (k as u64 + 1);
        assert!(c > target && c - target < 200, "cut {c} for {target}");
    }
    // Too small for the minimum part: not cut.
    assert!(parts::cut_points(&input[..], body, input.len() as u64, 4, 1 << 20).is_empty());
    // Read from a file, in parts.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pushpop.csv");
    std::fs::write(&path, &input).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let mut names = Interner::new();
    let rows = parts::read_in_parts::<pushpop::PushPopSchema, _>(
        &file,
        input.len() as u64,
        &path,
        &mut names,
        (ReadLimits::DEFAULT, AS_WRITTEN),
        4,
        1000,
    )
    .unwrap();
    assert_eq!(rows.len(), 1001);
    assert_eq!(names.len(), 2);
    assert!(rows.iter().enumerate().all(|(i, r)| r.line == i as u32 + 2));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
    ))]

    #[test]
    fn generated_files_read_in_parts_as_in_one_pass(
        rows in prop::collection::vec(gen_row(), 0..12),
        crlf in any::<bool>(),
        cuts in prop::collection::vec(0u64..4000, 0..4),
        damage in prop::option::of((0usize..4000, any::<u8>())),
    ) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let mut input = write_pushpop(&rows, eol);
        if let Some((at, byte)) = damage {
            let at = at % (input.len() + 1);
            input.insert(at, byte);
        }
        let cuts: Vec<u64> = cuts.iter().map(|c| c % (input.len() as u64 + 1)).collect();
        prop_assert_eq!(
            in_parts::<pushpop::PushPopSchema>(&input, LABEL, &cuts),
            one_pass::<pushpop::PushPopSchema>(&input, LABEL),
            "cuts {:?}", cuts
        );
    }
}
