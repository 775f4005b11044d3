//! Each device's exposed communication judged item by item: a history of `gpu-devices` runs
//! (the base trace's analysis as other runs would give it, `common::rerun_of`) against
//! `gpu-devices-head`, whose device 1 starts its all-reduce 100 µs later (350 µs exposed per
//! iteration instead of 250 µs, +40 %; device 0 unchanged), both recorded by the harness.

use serde_json::Value;

use crate::common::analysed;
use crate::compare::{compare_json, history, OFFSETS};
use crate::require_nsys;

fn item<'a>(table: &'a Value, name: &str) -> &'a Value {
    table["changed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no item {name} in {table}"))
}

#[test]
fn a_device_whose_communication_is_less_hidden_is_named_slower() {
    let nsys = require_nsys!("2024.2");
    let (base, head) = (
        analysed("gpu-devices", &nsys),
        analysed("gpu-devices-head", &nsys),
    );
    let history = history(&base, "history", &OFFSETS);
    let (out, c) = compare_json(&[&history, &head.dir]);
    let run = &c["runs"][0];
    assert_eq!(run["like_for_like"], true, "{run}");
    let exposed = &run["exposed_communication"];
    assert_eq!(exposed["basis"], "per_iteration", "{exposed}");
    let one = item(exposed, "NVIDIA A100-SXM4-80GB (1)");
    assert_eq!(one["verdict"], "slower", "{one}");
    let change = one["change_pct"].as_f64().unwrap();
    assert!((38.0..42.0).contains(&change), "{change}");
    assert!(one["p_value"].as_f64().unwrap() < 0.05, "{one}");
    let head_ns = one["head_per_iteration_ns"].as_f64().unwrap();
    assert!((head_ns - 350_000.0).abs() <= 3_500.0, "{head_ns}");
    // Device 0's is as before: within its run-to-run noise.
    let zero = item(exposed, "NVIDIA A100-SXM4-80GB (0)");
    assert_eq!(zero["verdict"], "within_noise", "{zero}");
    assert_eq!(exposed["new"], serde_json::json!([]));
    assert_eq!(exposed["gone"], serde_json::json!([]));

    let markdown = String::from_utf8(out.stdout)
        .unwrap()
        .replace('\u{a0}', " ");
    assert!(
        markdown.contains("**Exposed communication per iteration, device by device (NCCL's kernels while no compute kernel ran on the device):** 1 slower of 2 devices beyond their run-to-run noise; with their own noise, devices see changes of about "),
        "{markdown}"
    );
    assert!(
        markdown.contains(
            "**Where:** exposed communication of NVIDIA A100-SXM4-80GB (1) **slower** +39."
        ),
        "{markdown}"
    );
}
