//! `--baseline auto` under attack (issue "trust boundary, round 3"): where a redirect may lead,
//! a storage host that trickles, a signal in the middle of a download or an unpacking, and
//! what a 410 is called. No nsys: the head's analysis.json and the base runs' artifacts are
//! made by `analyze --reuse-stats` from CSVs ([`analysis_json`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use rustix::process::Signal;
use serde_json::json;
use zip::write::SimpleFileOptions;

use crate::baseline_auto::{notes, report_auto_cmd, zip_into, BASE_SHA};
use crate::common::{assert_status, fixture, read_json, send, stderr, wait_for, Run};
use crate::file_server::FileServer;
use crate::github_server::{Download, Fault, Server};
use crate::post::analyses::analysis_json;

/// The head: a run directory holding an analysis.json of the profile `smoke`.
pub fn head() -> Run {
    let run = fixture("clean");
    std::fs::write(run.path("analysis.json"), analysis_json("smoke", "work")).unwrap();
    run
}

/// A server whose base branch `main` has the push runs `ids` (newest first; the first at the
/// base commit), each with an artifact (`id + 100`) whose download answers as `download`
/// says for that run.
pub fn server_with(ids: &[u64], download: impl Fn(u64) -> Download) -> Server {
    let server = Server::github();
    let mut s = server.state();
    for (k, &id) in ids.iter().enumerate() {
        let sha = if k == 0 {
            BASE_SHA.to_owned()
        } else {
            format!("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa{id:04}")
        };
        s.workflow_runs.push((
            "profile.yml".to_owned(),
            json!({"id": id, "head_sha": sha, "head_branch": "main", "event": "push",
                   "status": "completed", "conclusion": "success",
                   "created_at": "2026-11-01T12:00:00Z",
                   "head_repository": {"full_name": "octo/gpu"}}),
        ));
        s.artifacts.push((
            id,
            json!({"id": id + 100, "name": "nsys-gate-analysis", "expired": false, "size_in_bytes": 1000}),
        ));
        s.downloads.insert(id + 100, download(id));
    }
    drop(s);
    server
}

/// A storage host's folder, next to the head's, holding `run.zip`: an artifact of the
/// profile `smoke`.
pub fn run_zip(head: &Run) -> PathBuf {
    let storage_root = head.dir.parent().unwrap().join("blobs");
    let artifact = analysis_json("smoke", "work");
    zip_into(
        &storage_root,
        "run.zip",
        &[("smoke/analysis.json", artifact.as_bytes())],
    );
    storage_root
}

/// `report --baseline auto` (see [`report_auto_cmd`]) against `server`, its temporary folder
/// (`TMPDIR`) at `tmp`.
pub fn report_in(head: &Run, server: &Server, tmp: &Path, extra: &[&str]) -> Command {
    let mut cmd = report_auto_cmd(head, &server.api_url(), extra);
    cmd.env("TMPDIR", tmp);
    cmd
}

/// What is left in a temporary folder.
pub fn left_in(tmp: &Path) -> Vec<PathBuf> {
    let mut left = Vec::new();
    let mut stack = vec![tmp.to_owned()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            left.push(p);
        }
    }
    left
}

/// Issue item 5: with a plain-`http://` API, a zip redirect to `https://`, `ftp://` or
/// `gopher://` was fetched as plain HTTP. A redirect is followed only to http(s), never from
/// https to http, and from an http API only to http: anything else is a note saying why, and
/// the storage host gets no request.
#[test]
fn a_redirect_is_followed_only_to_the_apis_own_scheme() {
    let head = head();
    let storage_root = run_zip(&head);
    let storage = FileServer::serve(&storage_root);
    let port = storage.url().rsplit(':').next().unwrap().to_owned();
    let tmp = assert_fs::TempDir::new().unwrap();
    for scheme in ["https", "ftp", "gopher"] {
        let location = format!("{scheme}://127.0.0.1:{port}/run.zip");
        let server = server_with(&[501], |_| Download::Redirect(location.clone()));
        let out = report_in(&head, &server, tmp.path(), &[]).output().unwrap();
        assert_status(&out, 0);
        assert!(
            storage.requests().is_empty(),
            "{scheme}: the storage host was asked for {:?}\n{}",
            storage.requests(),
            stderr(&out)
        );
        let notes = notes(&head);
        assert!(
            notes.contains(&format!("the redirect leads to a {scheme}:// URL"))
                && notes.contains("not followed"),
            "{scheme}: {notes}"
        );
    }
    // The API's own scheme is followed.
    let location = format!("{}/run.zip", storage.url());
    let server = server_with(&[501], |_| Download::Redirect(location.clone()));
    let out = report_in(&head, &server, tmp.path(), &[]).output().unwrap();
    assert_status(&out, 0);
    assert_eq!(storage.requests(), ["/run.zip"], "{}", stderr(&out));
}

/// Issue item 2: a storage host sending 1 byte a second made `--baseline auto` take 119 s on a
/// 60 s budget. One deadline covers every request, redirect and byte of the stage: here 3 s,
/// the first download trickling, a second run never started.
#[test]
fn a_storage_host_that_trickles_cannot_stretch_the_baseline_deadline() {
    let head = head();
    let storage_root = run_zip(&head);
    let storage = FileServer::dripping(&storage_root, Duration::from_secs(1));
    let location = format!("{}/run.zip", storage.url());
    let server = server_with(&[502, 501], |_| Download::Redirect(location.clone()));
    let tmp = assert_fs::TempDir::new().unwrap();
    let started = Instant::now();
    let out = report_in(&head, &server, tmp.path(), &["--baseline-timeout", "3"])
        .output()
        .unwrap();
    let took = started.elapsed();
    eprintln!("--baseline-timeout 3 against a storage host sending 1 byte/s: {took:?}");
    assert_status(&out, 0);
    assert!(took < Duration::from_millis(4500), "took {took:?}");
    let notes = notes(&head);
    assert!(
        notes.contains(
            "2 of 2 base runs were not fetched before the time limit of 3 s (--baseline-timeout)"
        ),
        "{notes}"
    );
    assert!(left_in(tmp.path()).is_empty(), "{:?}", left_in(tmp.path()));
}

/// The first `nsys-gate-baseline-*` folder in `tmp` holding `name`, if any.
fn started(tmp: &Path, name: &str) -> bool {
    std::fs::read_dir(tmp)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("nsys-gate-baseline-")
                && e.path().join(name).exists()
        })
}

/// `report --baseline auto` against one base run (501) whose zip is at `zip_url`, its
/// temporary folder at `tmp`, sent `signal` once `ready` returns: its output, and how long it
/// took to stop after the signal.
fn signalled(
    head: &Run,
    zip_url: &str,
    tmp: &Path,
    signal: Signal,
    ready: impl FnOnce(),
) -> (Output, Duration) {
    let server = server_with(&[501], |_| Download::Redirect(zip_url.to_owned()));
    let child: Child = report_in(head, &server, tmp, &["--baseline-timeout", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    ready();
    let sent = Instant::now();
    send(&child, signal);
    let out = child.wait_with_output().unwrap();
    (out, sent.elapsed())
}

fn a_signal_during_the_download_removes_it(signal: Signal, name: &str, status: i32) {
    let head = head();
    let storage_root = run_zip(&head);
    let storage = FileServer::dripping(&storage_root, Duration::from_millis(200));
    let tmp = assert_fs::TempDir::new().unwrap();
    let (out, stopping) = signalled(
        &head,
        &format!("{}/run.zip", storage.url()),
        tmp.path(),
        signal,
        || {
            wait_for("the download to start", || {
                started(tmp.path(), "artifact.zip")
            });
            std::thread::sleep(Duration::from_millis(600));
        },
    );
    assert!(stopping < Duration::from_secs(5), "{stopping:?}");
    assert_status(&out, status);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "stopped by {name} while downloading the baseline artifact of workflow run 501"
        )),
        "{err}"
    );
    assert!(err.contains("its temporary folder was removed"), "{err}");
    assert!(left_in(tmp.path()).is_empty(), "{:?}", left_in(tmp.path()));
    // Nothing of the report was written: the command stopped.
    assert!(!head.path("report.md").exists());
}

/// Issue item 3: SIGTERM during a slow artifact download left
/// `nsys-gate-baseline-*/artifact.zip` behind and said nothing.
#[test]
fn sigterm_during_a_download_removes_it_and_says_so() {
    a_signal_during_the_download_removes_it(Signal::TERM, "SIGTERM", 143);
}

#[test]
fn sigint_during_a_download_removes_it_and_says_so() {
    a_signal_during_the_download_removes_it(Signal::INT, "SIGINT", 130);
}

/// Issue item 3: killed while unpacking 250 entries of 4 MiB, 416 MB were left behind.
#[test]
fn a_signal_while_unpacking_removes_what_was_unpacked() {
    let head = head();
    let storage_root = head.dir.parent().unwrap().join("blobs");
    std::fs::create_dir_all(&storage_root).unwrap();
    // 250 entries of 4 MiB each (1000 MiB unpacked, under the 1 GiB bound), all copies of one
    // compressed entry: a zip of about a megabyte.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(storage_root.join("big.zip"))
        .unwrap();
    let mut w = zip::ZipWriter::new(file);
    w.start_file("r0/analysis.json", SimpleFileOptions::default())
        .unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..4 {
        w.write_all(&chunk).unwrap();
    }
    for i in 1..250 {
        w.deep_copy_file("r0/analysis.json", &format!("r{i}/analysis.json"))
            .unwrap();
    }
    w.finish().unwrap();
    let storage = FileServer::serve(&storage_root);
    let tmp = assert_fs::TempDir::new().unwrap();
    let (out, _) = signalled(
        &head,
        &format!("{}/big.zip", storage.url()),
        tmp.path(),
        Signal::TERM,
        || {
            wait_for("the unpacking to start", || {
                started(tmp.path(), "analyses/r0/analysis.json")
            })
        },
    );
    assert_status(&out, 143);
    let err = stderr(&out);
    assert!(
        err.contains("stopped by SIGTERM while") && err.contains("workflow run 501"),
        "{err}"
    );
    assert!(left_in(tmp.path()).is_empty(), "{:?}", left_in(tmp.path()));
}

/// Also seen: a 410 on the runs list was explained as an expired artifact. A 410 is named for
/// the request it answered: the list of runs is gone (an old API, a workflow removed), the
/// artifact's zip has expired.
#[test]
fn a_410_is_named_for_the_request_it_answered() {
    let head = head();
    let tmp = assert_fs::TempDir::new().unwrap();
    let server = server_with(&[501], |_| {
        Download::Status(410, "Artifact has expired".into())
    });
    server.fault(Fault::new(
        "GET",
        "/actions/workflows/",
        410,
        json!({"message": "Gone"}).to_string(),
    ));
    let out = report_in(&head, &server, tmp.path(), &[]).output().unwrap();
    assert_status(&out, 0);
    let first = notes(&head);
    assert!(
        first.contains("listing the push runs of workflow `profile.yml`")
            && first.contains("HTTP 410")
            && !first.contains("expired"),
        "{first}"
    );
    let out = report_in(&head, &server, tmp.path(), &[]).output().unwrap();
    assert_status(&out, 0);
    let second = notes(&head);
    assert!(
        second.contains("workflow run 501")
            && second.contains("the artifact has expired (HTTP 410: Artifact has expired)"),
        "{second}"
    );
}

/// Bits written least significant first, as deflate packs them.
#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, value: u64, count: u32) {
        self.acc |= value << self.n;
        self.n += count;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// A Huffman code, whose bits go most significant first.
    fn code(&mut self, code: u64, len: u32) {
        let reversed = (0..len).fold(0, |r, i| r | (((code >> i) & 1) << (len - 1 - i)));
        self.put(reversed, len);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// CRC-32 (zlib's) of `bytes`, continued from `crc`.
fn crc32(crc: u32, bytes: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// The CRC-32 of A then B from the CRC-32 of each and B's length (zlib's `crc32_combine`).
fn crc32_combine(mut crc1: u32, crc2: u32, mut len2: u64) -> u32 {
    fn times(mat: &[u32; 32], mut vec: u32) -> u32 {
        let mut sum = 0;
        let mut i = 0;
        while vec != 0 {
            if vec & 1 == 1 {
                sum ^= mat[i];
            }
            vec >>= 1;
            i += 1;
        }
        sum
    }
    fn square(mat: &[u32; 32]) -> [u32; 32] {
        std::array::from_fn(|n| times(mat, mat[n]))
    }
    let mut odd = [0u32; 32];
    odd[0] = 0xEDB8_8320;
    for (n, row) in odd.iter_mut().enumerate().skip(1) {
        *row = 1 << (n - 1);
    }
    let mut even = square(&odd);
    odd = square(&even);
    loop {
        even = square(&odd);
        if len2 & 1 == 1 {
            crc1 = times(&even, crc1);
        }
        len2 >>= 1;
        if len2 == 0 {
            break;
        }
        odd = square(&even);
        if len2 & 1 == 1 {
            crc1 = times(&odd, crc1);
        }
        len2 >>= 1;
        if len2 == 0 {
            break;
        }
    }
    crc1 ^ crc2
}

/// A zip at `path` holding one entry `name` of `mib` MiB of spaces, made by hand in a few
/// megabytes without ever making the spaces (the zip crate's writer took 93 s for a GiB in a
/// debug build): its deflate stream is one literal and then copies of 258 bytes at distance 1
/// (fixed Huffman codes), its CRC-32 that of a MiB combined `mib` times.
fn zip_of_spaces(path: &Path, name: &str, mib: u64) {
    let size = mib << 20;
    let mut bits = Bits::default();
    bits.put(1, 1); // the last block
    bits.put(1, 2); // fixed Huffman codes
    bits.code(0x30 + u64::from(b' '), 8); // the literal
    let mut left = size - 1;
    while left >= 258 {
        bits.code(0xC5, 8); // length code 285: 258
        bits.code(0, 5); // distance code 0: 1
        left -= 258;
    }
    for _ in 0..left {
        bits.code(0x30 + u64::from(b' '), 8);
    }
    bits.code(0, 7); // end of block
    let data = bits.finish();
    let one = crc32(0, &vec![b' '; 1 << 20]);
    let crc = (1..mib).fold(one, |crc, _| crc32_combine(crc, one, 1 << 20));
    let (crc, size, packed) = (crc, u32::try_from(size).unwrap(), data.len() as u32);
    let name = name.as_bytes();
    let mut zip = Vec::new();
    let common = |zip: &mut Vec<u8>| {
        for v in [20u16, 0, 8, 0, 0x21] {
            zip.extend(v.to_le_bytes()); // version, flags, deflate, time, date
        }
        for v in [crc, packed, size] {
            zip.extend(v.to_le_bytes());
        }
    };
    zip.extend(0x0403_4b50u32.to_le_bytes());
    common(&mut zip);
    zip.extend((name.len() as u16).to_le_bytes());
    zip.extend(0u16.to_le_bytes());
    zip.extend(name);
    zip.extend(&data);
    let directory = zip.len() as u32;
    zip.extend(0x0201_4b50u32.to_le_bytes());
    zip.extend(20u16.to_le_bytes()); // made by
    common(&mut zip);
    for v in [name.len() as u16, 0, 0, 0, 0] {
        zip.extend(v.to_le_bytes()); // name, extra, comment, disk, internal attributes
    }
    zip.extend(0u32.to_le_bytes()); // external attributes
    zip.extend(0u32.to_le_bytes()); // the local header's offset
    zip.extend(name);
    let directory_size = zip.len() as u32 - directory;
    zip.extend(0x0605_4b50u32.to_le_bytes());
    for v in [0u16, 0, 1, 1] {
        zip.extend(v.to_le_bytes());
    }
    zip.extend(directory_size.to_le_bytes());
    zip.extend(directory.to_le_bytes());
    zip.extend(0u16.to_le_bytes());
    std::fs::write(path, zip).unwrap();
}

#[test]
fn a_zip_of_spaces_made_by_hand_reads_back() {
    let tmp = assert_fs::TempDir::new().unwrap();
    let path = tmp.path().join("spaces.zip");
    zip_of_spaces(&path, "a/analysis.json", 3);
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
    let mut entry = archive.by_name("a/analysis.json").unwrap();
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
    assert_eq!(bytes.len(), 3 << 20);
    assert!(bytes.iter().all(|&b| b == b' '));
}

/// Item 4: with `--baseline-timeout 2`, one artifact holding a 1 GB analysis.json took 14 s
/// and 1.9 GB: unpacking and parsing ran outside the deadline. An analysis.json of the history
/// is bounded (64 MiB: the history needs run-level numbers), and the unpacking and reading
/// ask the deadline between pieces: stopped within the timeout and 3 s, in bounded memory,
/// nothing left in the temporary folder.
#[test]
fn a_gigabyte_artifact_is_stopped_within_the_deadline() {
    let head = head();
    let storage_root = head.dir.parent().unwrap().join("blobs");
    std::fs::create_dir_all(&storage_root).unwrap();
    zip_of_spaces(&storage_root.join("big.zip"), "big/analysis.json", 1000);
    let storage = FileServer::serve(&storage_root);
    let location = format!("{}/big.zip", storage.url());
    let server = server_with(&[501], |_| Download::Redirect(location.clone()));
    let tmp = assert_fs::TempDir::new().unwrap();
    let started = Instant::now();
    let (out, peak_kib) = crate::common::output_and_peak_kib(
        report_in(&head, &server, tmp.path(), &["--baseline-timeout", "2"]),
        1 << 20,
    );
    let took = started.elapsed();
    eprintln!(
        "a 1000 MiB analysis.json in the artifact, --baseline-timeout 2: {took:?}, {peak_kib} KiB"
    );
    assert_status(&out, 0);
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert!(peak_kib < 400 << 10, "{peak_kib} KiB");
    let notes = notes(&head);
    assert!(
        notes.contains("workflow run 501")
            && (notes.contains("bytes in one file: it is refused")
                || notes.contains("were not fetched before the time limit of 2 s")),
        "{notes}"
    );
    assert!(left_in(tmp.path()).is_empty(), "{:?}", left_in(tmp.path()));
}

/// Item 4: `--baseline-timeout` of 2^63-1 seconds panicked (exit 101, "overflow when adding
/// duration to instant"), and `--noise-floor=-0` wrote `-0.0`. No number panics, and
/// comparison.json holds no `-0.0`.
#[test]
fn no_baseline_number_panics_or_writes_minus_zero() {
    let head = head();
    let storage = FileServer::serve(&run_zip(&head));
    let location = format!("{}/run.zip", storage.url());
    let server = server_with(&[501], |_| Download::Redirect(location.clone()));
    let tmp = assert_fs::TempDir::new().unwrap();
    for timeout in ["9223372036854775807", "18446744073709551615"] {
        let out = report_in(
            &head,
            &server,
            tmp.path(),
            &["--baseline-timeout", timeout, "--noise-floor=-0"],
        )
        .output()
        .unwrap();
        assert_status(&out, 0);
        let text = std::fs::read_to_string(head.path("comparison.json")).unwrap();
        assert!(!text.contains("-0.0"), "{text}");
        let c: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(c["method"]["noise_floor_pct"], json!(0.0), "{text}");
        assert_eq!(c["runs"][0]["history"]["used"].as_array().unwrap().len(), 1);
    }
    let out = report_in(
        &head,
        &server,
        tmp.path(),
        &["--baseline-timeout", "18446744073709551616"],
    )
    .output()
    .unwrap();
    assert_status(&out, 2);
}

/// Item 5: a symlinked `--baseline PATH/analysis.json` was followed (the folder search refuses
/// symlinks), and serde's error quoted the target's contents (`"ghp_…"`) into the comment's
/// notes. The file is read with the folder search's rule (never through a symlink), and a
/// parse error says where and what kind, never quoting the file.
#[test]
fn a_baseline_symlink_is_not_followed_and_no_parse_error_quotes_the_file() {
    const SECRET: &str = "ghp_SymlinkedSecret0123456789abcdef";
    let head = head();
    let tmp = assert_fs::TempDir::new().unwrap();
    let secret = tmp.path().join("hosts.json");
    std::fs::write(&secret, format!("\"{SECRET}\"\n")).unwrap();
    let linked = tmp.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(&secret, linked.join("analysis.json")).unwrap();
    // The same text as a regular file, and in fields serde would quote.
    let quoted = |name: &str, text: String| {
        let dir = tmp.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("analysis.json"), text).unwrap();
        dir
    };
    let cases = [
        (linked.clone(), "(it is a symlink)"),
        (linked.join("analysis.json"), "(it is a symlink)"),
        (
            quoted("string", format!("\"{SECRET}\"")),
            "is not an analysis.json that nsys-gate wrote: a value of the wrong type",
        ),
        (
            quoted("version", format!("{{\"schema_version\": \"{SECRET}\"}}")),
            "has schema_version that is not a whole number",
        ),
        (
            quoted(
                "variant",
                analysis_json("smoke", "work").replacen(
                    "\"result\": \"pass\"",
                    &format!("\"result\": \"{SECRET}\""),
                    1,
                ),
            ),
            "an unknown name, expected `pass` or `fail`",
        ),
    ];
    for (path, says) in cases {
        let out = crate::common::bin()
            .args(["report", "--run-dir"])
            .arg(&head.dir)
            .arg("--baseline")
            .arg(&path)
            .env_remove("GITHUB_ACTIONS")
            .output()
            .unwrap();
        assert_status(&out, 0);
        let comparison = std::fs::read_to_string(head.path("comparison.json")).unwrap();
        let report = std::fs::read_to_string(head.path("report.md")).unwrap();
        for (what, text) in [
            ("comparison.json", comparison.as_str()),
            ("report.md", report.as_str()),
            ("stderr", stderr(&out).as_str()),
        ] {
            assert!(
                !text.contains("ghp_Symlinked"),
                "{}: {what}: {text}",
                path.display()
            );
        }
        assert!(
            notes(&head).contains(says),
            "{}: {}",
            path.display(),
            notes(&head)
        );
    }
}

/// Item 3: 256 made-up profiles in one base artifact printed 256 "no current run of this
/// profile" lines of the attacker's names in every comment (59 k characters), and a base file
/// of a million ranges gave a comparison.json of 132 MB. The comment lists ten lines at most,
/// the tenth saying how many more; comparison.json bounds each list a base file can grow (256
/// runs of one side, 1,000 ranges) with a count of what it leaves out.
#[test]
fn one_base_artifact_cannot_flood_the_comment_or_comparison_json() {
    let head = head();
    let base: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(head.path("analysis.json")).unwrap())
            .unwrap();
    let mut entries: Vec<(String, Vec<u8>)> = (0..255)
        .map(|i| {
            let mut made_up = base.clone();
            made_up["run"]["profile_name"] = json!(format!("@attacker made-up profile {i}"));
            (
                format!("made-up-{i}/analysis.json"),
                serde_json::to_vec(&made_up).unwrap(),
            )
        })
        .collect();
    // The head's own profile, with 5,000 ranges the head does not have, named without digits
    // (the comparison groups names that differ only in decimal numbers).
    let mut many = base.clone();
    let range = many["host_ranges"][0].clone();
    let ranges = many["host_ranges"].as_array_mut().unwrap();
    for i in 0..5000u32 {
        let letters: String = [i / 676, i / 26 % 26, i % 26]
            .iter()
            .map(|&d| char::from(b'a' + d as u8))
            .collect();
        let mut r = range.clone();
        r["name"] = json!(format!("made-up range {letters}"));
        r["path"] = json!([format!("made-up range {letters}")]);
        ranges.push(r);
    }
    entries.push((
        "smoke/analysis.json".into(),
        serde_json::to_vec(&many).unwrap(),
    ));
    let storage_root = head.dir.parent().unwrap().join("blobs");
    let refs: Vec<(&str, &[u8])> = entries
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    zip_into(&storage_root, "flood.zip", &refs);
    let storage = FileServer::serve(&storage_root);
    let location = format!("{}/flood.zip", storage.url());
    let server = server_with(&[501], |_| Download::Redirect(location.clone()));
    let tmp = assert_fs::TempDir::new().unwrap();
    let out = report_in(&head, &server, tmp.path(), &[]).output().unwrap();
    assert_status(&out, 0);
    let report = std::fs::read_to_string(head.path("report.md")).unwrap();
    let lines = report
        .lines()
        .filter(|l| l.contains("no current run of this profile"))
        .count();
    assert_eq!(lines, 9, "{report}");
    assert!(
        report.contains("- And 246 more runs of one side only, not listed here (comparison.json lists them, up to 256 of each side)."),
        "{report}"
    );
    assert!(
        report.contains("Gone range groups (only in base):") && report.contains("and 4990 more"),
        "{report}"
    );
    let c = read_json(&head.path("comparison.json"));
    assert_eq!(c["unmatched_base"].as_array().unwrap().len(), 255);
    assert!(c.get("unmatched_base_omitted").is_none(), "absent when 0");
    let gone = &c["runs"][0]["host_ranges"];
    assert_eq!(gone["gone"].as_array().unwrap().len(), 1000, "{gone}");
    assert_eq!(gone["gone_omitted"], 4000);
    assert!(
        std::fs::metadata(head.path("comparison.json"))
            .unwrap()
            .len()
            < 1 << 20,
        "comparison.json is over 1 MiB"
    );
}
