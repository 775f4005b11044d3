//! `environment`: the GPUs, driver and system nsys recorded in the trace, read from its SQLite
//! export, on each tested nsys; and the conditions the comparison makes of them.
//!
//! The machines that record the fixtures have no GPU: their traces hold no `TARGET_INFO_GPU`
//! (the `.nsys-rep` fixtures) or the synthetic A100 row `tests/harness/fixtures.py` injects
//! (`gpu-work*`, `gpu-processes`, `llama-gpu`), and an `NvDriverVersion` of `0`. The GPU and
//! driver of a real GPU run (the public llama3 trace's, which is never committed) are written
//! here, at test time, into a copy of `llama-gpu`'s export (a real nsys 2024.2 export), and
//! every field is checked against the rows of the export nsys-gate read.

use std::path::Path;

use rusqlite::Connection;
use serde_json::{json, Value};

use crate::common::{self, analyze, assert_status, fixture, read_json, Run};
use crate::compare::{compare_json, history};
use crate::require_nsys;

/// The public llama3 trace's GPU and driver, as its `TARGET_INFO_GPU` and
/// `TARGET_INFO_SYSTEM_ENV` hold them (the UUID is made up).
const RTX_4060_TI: &str = "NVIDIA GeForce RTX 4060 Ti";
const RTX_UUID: &str = "GPU-5e2d4a7c-0b1f-4c3e-9a6d-7f8e9a0b1c2d";
const RTX_MEMORY: i64 = 17_175_150_592;

/// Replaces device 0's row with the RTX 4060 Ti and records driver 570.172.08, CUDA 12.8.
fn plant_rtx_4060_ti(db: &Path) {
    let db = Connection::open(db).unwrap();
    let changed = db
        .execute(
            "UPDATE TARGET_INFO_GPU SET name = ?1, uuid = ?2, smCount = 34, clockRate = 2625000000,
             totalMemory = ?3, computeMajor = 8, computeMinor = 9, busLocation = '0000:01:00.0'
             WHERE id = 0",
            rusqlite::params![RTX_4060_TI, RTX_UUID, RTX_MEMORY],
        )
        .unwrap();
    assert_eq!(changed, 1, "one GPU row");
    set_system(&db, "NvDriverVersion", "570.172.08");
    set_system(&db, "CudaDriverVersion", "12080");
}

/// Sets (or adds, as nsys writes it) one named row of `TARGET_INFO_SYSTEM_ENV`.
fn set_system(db: &Connection, name: &str, value: &str) {
    let changed = db
        .execute(
            "UPDATE TARGET_INFO_SYSTEM_ENV SET value = ?2 WHERE name = ?1",
            [name, value],
        )
        .unwrap();
    if changed == 0 {
        db.execute(
            "INSERT INTO TARGET_INFO_SYSTEM_ENV (globalVid, devStateName, name, nameEnum, value)
             SELECT globalVid, devStateName, ?1, 206, ?2 FROM TARGET_INFO_SYSTEM_ENV LIMIT 1",
            [name, value],
        )
        .unwrap();
    }
}

/// One named row of an export's `TARGET_INFO_SYSTEM_ENV`.
fn system(db: &Connection, name: &str) -> Option<String> {
    db.query_row(
        "SELECT CAST(value AS TEXT) FROM TARGET_INFO_SYSTEM_ENV WHERE name = ?1",
        [name],
        |r| r.get(0),
    )
    .ok()
}

/// The GPU rows of an export as `environment.gpus` writes them (every column read).
fn gpu_rows(db: &Connection) -> Vec<Value> {
    let Ok(mut st) = db.prepare(
        "SELECT id, name, uuid, smCount, clockRate, totalMemory, computeMajor, computeMinor
         FROM TARGET_INFO_GPU ORDER BY id",
    ) else {
        return Vec::new();
    };
    st.query_map([], |r| {
        let clock: Option<i64> = r.get(4)?;
        let (major, minor): (Option<i64>, Option<i64>) = (r.get(6)?, r.get(7)?);
        Ok(json!({
            "id": r.get::<_, i64>(0)?,
            "name": r.get::<_, Option<String>>(1)?,
            "uuid": r.get::<_, Option<String>>(2)?,
            "sm_count": r.get::<_, Option<i64>>(3)?,
            "max_clock_mhz": clock.map(|hz| hz / 1_000_000),
            "memory_bytes": r.get::<_, Option<i64>>(5)?,
            "compute_capability": major.zip(minor).map(|(a, b)| format!("{a}.{b}")),
            // These exports hold no GPU metrics: no clock, said as `null`.
            "clock_mhz": null,
        }))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// What `environment` must hold for an export, from its rows: `driver_version` and
/// `cuda_driver_version` `null` when recorded as `0` or missing.
fn expected(db: &Connection) -> Value {
    let version = |name: &str| system(db, name).filter(|v| v != "0");
    json!({
        "gpus": gpu_rows(db),
        "driver_version": version("NvDriverVersion"),
        "cuda_driver_version": version("CudaDriverVersion").map(|v| {
            let n: u64 = v.parse().unwrap();
            format!("{}.{}", n / 1000, n % 1000 / 10)
        }),
        "cpu": system(db, "CpuDescription"),
        "os": system(db, "OsDescription"),
        "kernel": system(db, "SoftwareReleaseVersion"),
    })
}

/// Nothing of the host name, the recorded environment or the install path nsys recorded is in
/// `text`.
fn assert_no_host_details(text: &str, db: &Connection) {
    let host = system(db, "Hostname").expect("nsys records the host name");
    assert!(
        !text.contains(&format!("\"{host}\"")),
        "the host name is kept"
    );
    for name in ["DeviceEnvironment", "TargetInstallDir"] {
        let value = system(db, name).expect("nsys records it");
        for part in value.split([';', '=', '\0']).filter(|p| p.len() >= 8) {
            assert!(!text.contains(part), "{name}: {part} is kept");
        }
    }
}

#[test]
fn the_public_llama3_traces_gpu_driver_and_cuda_are_recorded() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("llama-gpu");
    let trace = run.path("trace.sqlite");
    plant_rtx_4060_ti(&trace);
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let a = run.analysis();
    let env = &a["environment"];
    assert_eq!(
        env["gpus"],
        json!([{
            "id": 0, "name": RTX_4060_TI, "uuid": RTX_UUID, "sm_count": 34,
            "max_clock_mhz": 2625, "memory_bytes": RTX_MEMORY, "compute_capability": "8.9",
            "clock_mhz": null
        }])
    );
    assert_eq!(env["driver_version"], "570.172.08");
    assert_eq!(env["cuda_driver_version"], "12.8");
    let db = Connection::open(&trace).unwrap();
    assert_eq!(*env, expected(&db));
    assert_eq!(env["cpu"], "AMD EPYC");
    assert_eq!(env["os"], "Debian GNU/Linux 12 (bookworm)");
    let text = std::fs::read_to_string(run.path("analysis.json")).unwrap();
    assert_no_host_details(&text, &db);
    // One line per GPU.
    assert!(
        text.contains(&format!("    {{\"id\": 0, \"name\": \"{RTX_4060_TI}\"")),
        "{text}"
    );

    // The report's run header.
    let out = common::bin()
        .args(["report", "--output", "-", "--run-dir"])
        .arg(&run.dir)
        .output()
        .unwrap();
    assert_status(&out, 0);
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.contains(
            "**GPU:** NVIDIA GeForce RTX 4060 Ti · driver 570.172.08 · CUDA 12.8 · clocks not recorded"
        ),
        "{md}"
    );

    // --reuse-stats records the same environment, from the stamp beside the CSVs.
    let before = a["environment"].clone();
    assert_status(&common::reuse_stats(&run.dir), 0);
    assert_eq!(run.analysis()["environment"], before);
}

#[test]
fn every_tested_nsys_export_gives_the_environment_its_rows_hold() {
    for (name, version) in [
        ("gpu-work", "2024.2"),
        ("gpu-work-2023.4", "2023.4"),
        ("gpu-work-2022.4", "2022.4"),
    ] {
        let nsys = require_nsys!(version);
        let run = fixture(name);
        let out = analyze(&run.dir, &nsys, &[]);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{name}: {out:?}");
        let env = run.analysis()["environment"].clone();
        let db = Connection::open(run.path("trace.sqlite")).unwrap();
        assert_eq!(env, expected(&db), "{name}");
        // The injected A100 row; the machine had no driver (`NvDriverVersion` 0) and nsys
        // recorded no CUDA driver version.
        assert_eq!(
            env["gpus"],
            json!([{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "uuid": null, "sm_count": 108,
                    "max_clock_mhz": null, "memory_bytes": 85_899_345_920_u64,
                    "compute_capability": "8.0", "clock_mhz": null}]),
            "{name}"
        );
        assert_eq!(env["driver_version"], Value::Null, "{name}");
        assert_eq!(env["cuda_driver_version"], Value::Null, "{name}");
        assert_eq!(env["os"], "Debian GNU/Linux 12 (bookworm)", "{name}");
        assert!(env["kernel"].is_string(), "{name}");
        assert!(env["cpu"].is_string(), "{name}");
        // A trace with a GPU and no driver: no line is left unsaid, none is guessed.
        let out = common::bin()
            .args(["report", "--output", "-", "--run-dir"])
            .arg(&run.dir)
            .output()
            .unwrap();
        let md = String::from_utf8(out.stdout).unwrap();
        assert!(
            md.contains("**GPU:** NVIDIA A100-SXM4-80GB · driver not recorded · CUDA not recorded · clocks not recorded"),
            "{name}: {md}"
        );
    }
}

#[test]
fn a_trace_without_a_gpu_gives_nulls_and_no_error_on_every_nsys() {
    for (name, version) in [
        ("clean", "2024.2"),
        ("clean-2023.4", "2023.4"),
        ("clean-2022.4", "2022.4"),
    ] {
        let nsys = require_nsys!(version);
        let run = fixture(name);
        let out = analyze(&run.dir, &nsys, &["--keep-export"]);
        assert_status(&out, 0);
        assert!(
            !common::stderr(&out).contains("could not read"),
            "{name}: {}",
            common::stderr(&out)
        );
        let env = run.analysis()["environment"].clone();
        // nsys's own export of a trace recorded with no GPU.
        let db = Connection::open(run.path("stats/trace.sqlite")).unwrap();
        let has_gpu_table: bool = db
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'TARGET_INFO_GPU'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap()
            > 0;
        assert!(
            !has_gpu_table,
            "{name}: a GPU-less trace exports no GPU table"
        );
        assert_eq!(env, expected(&db), "{name}");
        assert_eq!(env["gpus"], json!([]), "{name}");
        assert_eq!(env["driver_version"], Value::Null, "{name}");
        assert_eq!(env["cuda_driver_version"], Value::Null, "{name}");
        // No GPU and no driver: the report's header has no environment line.
        let md = common::bin()
            .args(["report", "--output", "-", "--run-dir"])
            .arg(&run.dir)
            .output()
            .unwrap();
        assert!(!String::from_utf8_lossy(&md.stdout).contains("**GPU:**"));
    }
}

#[test]
fn only_the_gpus_that_ran_work_are_listed() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("gpu-processes");
    {
        // A third GPU of the host that ran nothing.
        let db = Connection::open(run.path("trace.sqlite")).unwrap();
        db.execute(
            "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, isDiscrete, totalMemory,
             smCount, cuDevice, computeMajor, computeMinor)
             VALUES (0, 2, 'NVIDIA A100-SXM4-80GB', '0000:10:00.0', 1, 85899345920, 108, 2, 8, 0)",
            [],
        )
        .unwrap();
    }
    let out = analyze(&run.dir, &nsys, &[]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    let a = run.analysis();
    let ids: Vec<u64> = a["environment"]["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_u64().unwrap())
        .collect();
    let ran: Vec<u64> = a["gpu_work"]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ran, [0, 1]);
    assert_eq!(ids, [0, 1]);
}

/// A history of `llama-gpu` whose three oldest runs had driver 550.54.14, the newer ones and
/// the head 570.172.08.
fn driver_history(run: &Run, name: &str) -> std::path::PathBuf {
    let folder = history(
        run,
        name,
        &[1.003, 0.996, 1.005, 0.998, 1.001, 1.004, 0.997],
    );
    for k in 0..3 {
        let path = folder.join(format!("{k:03}/analysis.json"));
        let mut a = read_json(&path);
        a["environment"]["driver_version"] = json!("550.54.14");
        std::fs::write(&path, serde_json::to_vec(&a).unwrap()).unwrap();
    }
    folder
}

#[test]
fn base_runs_of_another_driver_are_left_out_and_the_comment_says_the_driver_changed() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("llama-gpu");
    plant_rtx_4060_ti(&run.path("trace.sqlite"));
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let folder = driver_history(&run, "drivers");
    let (out, c) = compare_json(&[&folder, &run.dir]);
    let h = &c["runs"][0]["history"];
    let left: Vec<(&str, &Value)> = h["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["run"]["run_id"].as_str().unwrap(), &l["differs"]))
        .collect();
    assert_eq!(
        left,
        [
            ("base-0", &json!(["driver"])),
            ("base-1", &json!(["driver"])),
            ("base-2", &json!(["driver"]))
        ]
    );
    assert_eq!(h["used"].as_array().unwrap().len(), 4);
    assert_eq!(h["left_out"][0]["reason"], "conditions");
    assert_eq!(h["left_out"][0]["run"]["driver_version"], "550.54.14");
    // The newest base run has the head's driver: like for like.
    assert_eq!(c["runs"][0]["like_for_like"], true);
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.contains(
            "The runner's driver changed (550.54.14 -> 570.172.08) 4 runs ago; 4 base runs have this driver."
        ),
        "{md}"
    );
    assert!(
        md.contains("3 base runs are left out of the history: driver differs"),
        "{md}"
    );
}

#[test]
fn a_mig_slice_is_another_gpu_and_cpu_and_os_are_shown_unless_named() {
    let nsys = require_nsys!("2024.2");
    let run = fixture("llama-gpu");
    plant_rtx_4060_ti(&run.path("trace.sqlite"));
    assert_status(&analyze(&run.dir, &nsys, &[]), 0);
    let folder = history(&run, "slices", &[1.003, 0.996, 1.005, 0.998]);
    // Base run 0 ran on a slice of the same GPU (same name, fewer SMs); base run 1 on another
    // CPU and operating system; base run 2 recorded no environment (an older analysis).
    let edit = |k: usize, f: &dyn Fn(&mut Value)| {
        let path = folder.join(format!("{k:03}/analysis.json"));
        let mut a = read_json(&path);
        f(&mut a);
        std::fs::write(&path, serde_json::to_vec(&a).unwrap()).unwrap();
    };
    edit(0, &|a| a["environment"]["gpus"][0]["sm_count"] = json!(17));
    edit(1, &|a| {
        a["environment"]["cpu"] = json!("Intel(R) Xeon(R) Platinum 8480+");
        a["environment"]["os"] = json!("Ubuntu 22.04.4 LTS");
    });
    edit(2, &|a| {
        a.as_object_mut().unwrap().remove("environment");
    });
    let (_, c) = compare_json(&[&folder, &run.dir]);
    let left: Vec<(&str, &Value)> = c["runs"][0]["history"]["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["run"]["run_id"].as_str().unwrap(), &l["differs"]))
        .collect();
    assert_eq!(left, [("base-0", &json!(["gpu"]))]);
    let conditions = c["runs"][0]["conditions"].as_array().unwrap();
    let gpu = conditions.iter().find(|c| c["name"] == "gpu").unwrap();
    assert_eq!(
        gpu["head"],
        json!([{"name": RTX_4060_TI, "sm_count": 34, "memory_bytes": RTX_MEMORY}])
    );
    assert_eq!(gpu["judged"], true);
    let names: Vec<&str> = conditions[11..17]
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["gpu", "driver", "cuda", "clock", "cpu", "os"]);
    // Named, the CPU and the operating system are judged.
    let json = folder.parent().unwrap().join("named.json");
    let out = common::bin()
        .arg("compare")
        .arg(&folder)
        .arg(&run.dir)
        .args(["--condition", "cpu", "--condition", "os", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert_status(&out, 0);
    let c = read_json(&json);
    let left: Vec<(&str, &Value)> = c["runs"][0]["history"]["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["run"]["run_id"].as_str().unwrap(), &l["differs"]))
        .collect();
    assert_eq!(
        left,
        [
            ("base-0", &json!(["gpu"])),
            ("base-1", &json!(["cpu", "os"]))
        ]
    );
}
