//! What differs between two runs besides the code under test. The harness's rule: never
//! compare runs with different targets, inputs, devices, synchronization policies, capture
//! ranges or Nsight versions without stating the difference; and the contract's: settings of
//! the run that can change its speed (the manifest's `workload`, and any key the tool does not
//! know) are conditions.
//!
//! The first nine conditions are judged (any difference: "not like for like", and a base run
//! that differs is left out of the history); the nsys-gate version and the Git commits are
//! shown, never judged (the commits are what is being compared). Then every key under
//! `workload` (but `warmup` and `iterations`, which are conditions of their own) is judged,
//! as `workload.KEY`. A top-level key the manifest has and nsys-gate does not know
//! (`run.extra`) is `manifest.KEY`: shown when it differs (at most [`MAX_SHOWN_KEYS`] of
//! them), judged only when the comparison names it ([`Judge`]), since real manifests carry
//! keys that differ on every run (`ci: {job, attempt}`).
//!
//! The environment the trace recorded (analysis.json's `environment`) gives five more: the
//! GPUs that ran work (`gpu`: a MIG slice, with fewer SMs, is another GPU), the driver and the
//! CUDA version it supports (judged, each only when both runs record it), the CPU and the
//! operating system (shown; judged when the comparison names `cpu` or `os`). With GPU
//! metrics, the median SM clock (`clock`) is judged too, when both runs record it: it
//! differs when the two are more than [`CLOCK_TOLERANCE`] apart (many GPUs run below their
//! maximum clock on every run, so the clock is judged against the run it is compared with).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use nsys_gate_core::artifact::comparison::{Condition, ConditionName};
use nsys_gate_core::artifact::{Environment, GpuWork, Provenance, Rank, Run};

/// Top-level manifest keys that differ but are not judged, shown at most: the rest are left
/// out of `conditions` (they change no verdict).
pub const MAX_SHOWN_KEYS: usize = 10;

/// Two median SM clocks more than this fraction apart (of the head's) differ.
pub const CLOCK_TOLERANCE: f64 = 0.05;

/// The `workload` keys that are conditions of their own.
const OWN_WORKLOAD_CONDITIONS: [&str; 2] = ["warmup", "iterations"];

/// What a run recorded for every condition: the fixed ones in [`ConditionName::ALL`] order,
/// then its own keys.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// One value per [`ConditionName::ALL`] (`null`: not recorded).
    pub fixed: Vec<Value>,
    /// The manifest's `workload` keys, but `warmup` and `iterations`.
    pub workload: BTreeMap<String, Value>,
    /// The top-level manifest keys nsys-gate does not know (`run.extra`).
    pub manifest: BTreeMap<String, Value>,
    /// A distributed run's world size (the manifest's `world_size`, else the ranks found);
    /// `None` for a run of one process.
    pub world_size: Option<u64>,
}

impl Recorded {
    /// What the run recorded for one of the fixed conditions ([`ConditionName::ALL`]).
    pub fn get(&self, name: &ConditionName) -> Option<&Value> {
        let i = ConditionName::ALL.iter().position(|n| n == name)?;
        self.fixed.get(i)
    }

    /// Sets what the run recorded for one of the fixed conditions.
    pub fn set(&mut self, name: &ConditionName, value: Value) {
        if let Some(i) = ConditionName::ALL.iter().position(|n| n == name) {
            if let Some(slot) = self.fixed.get_mut(i) {
                *slot = value;
            }
        }
    }
}

/// Which top-level manifest keys the comparison judges (`--condition KEY`).
pub type Judge<'a> = &'a [String];

/// The parts of an analysis that say what a run recorded for the fixed conditions.
#[derive(Debug, Clone, Copy)]
pub struct Sources<'a> {
    pub run: &'a Run,
    pub provenance: &'a Provenance,
    pub gpu_work: Option<&'a GpuWork>,
    pub environment: Option<&'a Environment>,
    /// A distributed run's ranks; `None` for a run of one process.
    pub ranks: Option<&'a [Rank]>,
}

/// What a run recorded, from the parts of its analysis that say it.
pub fn recorded(sources: Sources<'_>) -> Recorded {
    let run = sources.run;
    Recorded {
        world_size: sources.ranks.filter(|r| !r.is_empty()).map(|r| {
            run.extra
                .get("world_size")
                .and_then(Value::as_u64)
                .unwrap_or(r.len() as u64)
        }),
        fixed: ConditionName::ALL
            .iter()
            .map(|name| value(name, sources))
            .collect(),
        workload: run
            .workload
            .as_object()
            .map(|w| {
                w.iter()
                    .filter(|(k, _)| !OWN_WORKLOAD_CONDITIONS.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default(),
        manifest: run
            .extra
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

/// Every condition of two runs: the fixed ones in [`ConditionName::ALL`] order, then the
/// `workload` keys either run has, then the top-level keys that `judge` names or that differ
/// (at most [`MAX_SHOWN_KEYS`] of those not judged), each group by key.
pub fn list(base: &Recorded, head: &Recorded, judge: Judge<'_>) -> Vec<Condition> {
    let mut out: Vec<Condition> = ConditionName::ALL
        .iter()
        .zip(base.fixed.iter().zip(&head.fixed))
        .map(|(name, (b, h))| Condition {
            name: name.clone(),
            judged: name.judged()
                || (matches!(name, ConditionName::Cpu | ConditionName::Os)
                    && judge.iter().any(|k| *k == name.as_str())),
            differs: differs(name, b, h),
            base: b.clone(),
            head: h.clone(),
        })
        .collect();
    // A distributed run against a run of one process, or of another world size: said first.
    if base.world_size.is_some() || head.world_size.is_some() {
        let (b, h) = (base.world_size.unwrap_or(1), head.world_size.unwrap_or(1));
        out.insert(
            0,
            Condition {
                name: ConditionName::WorldSize,
                judged: true,
                differs: b != h,
                base: Value::from(b),
                head: Value::from(h),
            },
        );
    }
    let own = |b: &BTreeMap<String, Value>, h: &BTreeMap<String, Value>| {
        let keys: BTreeSet<&String> = b.keys().chain(h.keys()).collect();
        keys.into_iter()
            .map(|k| {
                let (b, h) = (
                    b.get(k).cloned().unwrap_or(Value::Null),
                    h.get(k).cloned().unwrap_or(Value::Null),
                );
                (k.clone(), b != h, b, h)
            })
            .collect::<Vec<_>>()
    };
    for (key, differs, base, head) in own(&base.workload, &head.workload) {
        out.push(Condition {
            name: ConditionName::Workload(key),
            judged: true,
            differs,
            base,
            head,
        });
    }
    let mut shown = 0;
    for (key, differs, base, head) in own(&base.manifest, &head.manifest) {
        let judged = judge.contains(&key);
        if !judged && (!differs || shown == MAX_SHOWN_KEYS) {
            continue;
        }
        shown += usize::from(!judged);
        out.push(Condition {
            name: ConditionName::Manifest(key),
            judged,
            differs,
            base,
            head,
        });
    }
    out
}

/// The judged conditions that differ between two runs.
pub fn judged_differences(
    base: &Recorded,
    head: &Recorded,
    judge: Judge<'_>,
) -> Vec<ConditionName> {
    list(base, head, judge)
        .into_iter()
        .filter(|c| c.judged && c.differs)
        .map(|c| c.name)
        .collect()
}

fn text(v: Option<&String>) -> Value {
    v.map_or(Value::Null, |s| Value::String(s.clone()))
}

/// What a run recorded for one of the fixed conditions (`null`: not recorded), from the parts
/// of its analysis that say it.
pub fn value(name: &ConditionName, sources: Sources<'_>) -> Value {
    let Sources {
        run,
        provenance,
        gpu_work,
        environment,
        ranks: _,
    } = sources;
    match name {
        ConditionName::Target => run.target.clone().unwrap_or(Value::Null),
        ConditionName::DataSource => json!({
            "data_source": run.data_source.clone().unwrap_or(Value::Null),
            "record_count": run.record_count,
            "record_ids_sha256": run.record_ids_sha256,
        }),
        ConditionName::Device => json!({ "device": run.device }),
        ConditionName::Synchronization => run.cuda.clone().unwrap_or(Value::Null),
        ConditionName::CaptureRange => text(run.capture_range.as_ref()),
        ConditionName::IterationPattern => Value::String(run.iteration_pattern.clone()),
        ConditionName::Warmup => run.workload.get("warmup").cloned().unwrap_or(Value::Null),
        ConditionName::Iterations => run
            .workload
            .get("iterations")
            .cloned()
            .unwrap_or(Value::Null),
        ConditionName::NsysVersion => Value::String(provenance.nsys_version.clone()),
        ConditionName::ToolVersion => Value::String(provenance.tool_version.clone()),
        ConditionName::GitCommit => text(run.git_commit.as_ref()),
        ConditionName::Gpu => gpus(environment, gpu_work),
        ConditionName::Driver => text(environment.and_then(|e| e.driver_version.as_ref())),
        ConditionName::Cuda => text(environment.and_then(|e| e.cuda_driver_version.as_ref())),
        ConditionName::Clock => clock(environment),
        ConditionName::Cpu => text(environment.and_then(|e| e.cpu.as_ref())),
        ConditionName::Os => text(environment.and_then(|e| e.os.as_ref())),
        ConditionName::Workload(key) => run.workload.get(key).cloned().unwrap_or(Value::Null),
        ConditionName::Manifest(key) => run.extra.get(key).cloned().unwrap_or(Value::Null),
        // recorded apart (`Recorded::world_size`)
        ConditionName::WorldSize => Value::Null,
    }
}

/// The GPUs that ran work, each `{name, sm_count, memory_bytes}`, sorted: from the recorded
/// environment, else (an analysis written before it was recorded) the names of
/// `gpu_work.devices` with the rest `null`. `null` when neither names a GPU.
fn gpus(environment: Option<&Environment>, gpu_work: Option<&GpuWork>) -> Value {
    let mut gpus: Vec<Value> = match environment.filter(|e| !e.gpus.is_empty()) {
        Some(e) => e
            .gpus
            .iter()
            .map(
                |g| json!({"name": g.name, "sm_count": g.sm_count, "memory_bytes": g.memory_bytes}),
            )
            .collect(),
        None => gpu_work
            .map(GpuWork::gpu_names)
            .unwrap_or_default()
            .into_iter()
            .map(|name| json!({"name": name, "sm_count": null, "memory_bytes": null}))
            .collect(),
    };
    if gpus.is_empty() {
        return Value::Null;
    }
    gpus.sort_by_key(|g| g.to_string());
    Value::Array(gpus)
}

/// The median SM clock of the GPUs that ran work, in MHz (with several, the middle of their
/// medians, the lower of the two middle ones); `null` without GPU metrics.
fn clock(environment: Option<&Environment>) -> Value {
    let mut medians: Vec<u32> = environment
        .map(|e| {
            e.gpus
                .iter()
                .filter_map(|g| g.clock_mhz.map(|c| c.median))
                .collect()
        })
        .unwrap_or_default();
    medians.sort_unstable();
    match medians.len() {
        0 => Value::Null,
        n => Value::from(medians[(n - 1) / 2]),
    }
}

/// Whether two median SM clocks are more than [`CLOCK_TOLERANCE`] of the head's apart.
fn clocks_differ(b: &Value, h: &Value) -> bool {
    match (b.as_f64(), h.as_f64()) {
        (Some(b), Some(h)) if h > 0.0 => (b - h).abs() / h > CLOCK_TOLERANCE,
        _ => false,
    }
}

/// Whether two lists of GPUs ([`gpus`]) differ: in number, or in a name, SM count or memory
/// that both record.
fn gpus_differ(b: &[Value], h: &[Value]) -> bool {
    b.len() != h.len()
        || b.iter().zip(h).any(|(x, y)| {
            ["name", "sm_count", "memory_bytes"]
                .iter()
                .any(|k| !x[k].is_null() && !y[k].is_null() && x[k] != y[k])
        })
}

/// Whether two recorded values differ. Parts that only one side can record (the record ids'
/// digest, missing from older analyses; the environment, missing from older analyses and
/// from traces without it) count only when both sides have them.
fn differs(name: &ConditionName, b: &Value, h: &Value) -> bool {
    let part_differs = |key: &str| {
        let (x, y) = (&b[key], &h[key]);
        !x.is_null() && !y.is_null() && x != y
    };
    match name {
        ConditionName::DataSource => {
            b["data_source"] != h["data_source"]
                || b["record_count"] != h["record_count"]
                || part_differs("record_ids_sha256")
        }
        ConditionName::Device => b["device"] != h["device"],
        ConditionName::Gpu => match (b.as_array(), h.as_array()) {
            (Some(b), Some(h)) => gpus_differ(b, h),
            _ => false,
        },
        ConditionName::Clock => clocks_differ(b, h),
        ConditionName::Driver | ConditionName::Cuda | ConditionName::Cpu | ConditionName::Os => {
            !b.is_null() && !h.is_null() && b != h
        }
        _ => b != h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nsys_gate_core::artifact::{Analysis, GpuWork};

    #[test]
    fn clocks_more_than_5_percent_of_the_heads_apart_differ_and_only_when_both_have_one() {
        let differ = |b: Value, h: Value| differs(&ConditionName::Clock, &b, &h);
        assert!(!differ(json!(1410), json!(1410)));
        assert!(!differ(json!(1354), json!(1410))); // 4 %
        assert!(!differ(json!(1480), json!(1410))); // 4.96 %
        assert!(differ(json!(1481), json!(1410))); // 5.04 %
        assert!(differ(json!(1128), json!(1410))); // 20 %
        assert!(!differ(Value::Null, json!(1410)));
        assert!(!differ(json!(1128), Value::Null));
        // Several GPUs: the middle of their medians.
        let mut e = Environment::default();
        for (id, median) in [(0, 1400), (1, 1980), (2, 1410)] {
            e.gpus.push(nsys_gate_core::artifact::GpuInfo {
                id,
                name: None,
                uuid: None,
                sm_count: None,
                max_clock_mhz: None,
                memory_bytes: None,
                compute_capability: None,
                clock_mhz: Some(nsys_gate_core::artifact::ClockMhz {
                    median,
                    minimum: median,
                    maximum: median,
                }),
            });
        }
        assert_eq!(clock(Some(&e)), json!(1410));
        e.gpus.truncate(2);
        assert_eq!(clock(Some(&e)), json!(1400));
        e.gpus.clear();
        assert_eq!(clock(Some(&e)), Value::Null);
        assert_eq!(clock(None), Value::Null);
    }

    fn analysis() -> Analysis {
        nsys_gate_core::artifact::fake::analysis(
            &[2_500_000; 5],
            &[("inference", 7_500_000)],
            false,
        )
    }

    fn values(a: &Analysis) -> Recorded {
        recorded(Sources {
            run: &a.run,
            provenance: &a.provenance,
            gpu_work: a.gpu_work.as_ref(),
            environment: a.environment.as_ref(),
            ranks: a.ranks.as_deref(),
        })
    }

    fn differing(base: &Analysis, head: &Analysis) -> Vec<ConditionName> {
        list(&values(base), &values(head), &[])
            .into_iter()
            .filter(|c| c.differs)
            .map(|c| c.name)
            .collect()
    }

    #[test]
    fn the_same_run_differs_in_nothing() {
        let a = analysis();
        assert_eq!(differing(&a, &a), vec![]);
        assert_eq!(
            list(&values(&a), &values(&a), &[])
                .iter()
                .filter(|c| c.judged)
                .count(),
            13
        );
    }

    #[test]
    fn each_condition_is_named_when_it_differs() {
        let base = analysis();
        let mut head = base.clone();
        head.run.device = Some("cuda:1".into());
        head.provenance.nsys_version = "2023.4.4.54-234433681190v0".into();
        head.run.git_commit = Some("feedface".into());
        head.run.workload["warmup"] = json!(5);
        assert_eq!(
            differing(&base, &head),
            vec![
                ConditionName::Device,
                ConditionName::Warmup,
                ConditionName::NsysVersion,
                ConditionName::GitCommit
            ]
        );
    }

    fn gpu(name: &str) -> GpuWork {
        GpuWork {
            devices: Some(vec![nsys_gate_core::artifact::GpuDevice {
                device: format!("{name} (0)"),
                name: Some(name.into()),
                id: Some(0),
                kernels: 1,
                memory_operations: 0,
                ..Default::default()
            }]),
            ..GpuWork::default()
        }
    }

    #[test]
    fn gpu_names_and_record_ids_count_only_when_both_record_them() {
        let mut base = analysis();
        let mut head = base.clone();
        head.gpu_work = Some(gpu("NVIDIA A100-SXM4-80GB"));
        head.run.record_ids_sha256 = Some("ab".into());
        assert_eq!(differing(&base, &head), vec![]);
        base.gpu_work = Some(gpu("NVIDIA T4"));
        base.run.record_ids_sha256 = Some("cd".into());
        assert_eq!(
            differing(&base, &head),
            vec![ConditionName::DataSource, ConditionName::Gpu]
        );
    }

    /// Issue 30, item 5: a head with `workload.batch_size: 8` and `quantization: {dtype:
    /// bf16}` against bases without them was "the same in all 9 conditions".
    #[test]
    fn every_workload_key_is_judged_and_unknown_keys_are_shown_when_they_differ() {
        let base = analysis();
        let mut head = base.clone();
        head.run.workload["batch_size"] = json!(8);
        head.run
            .extra
            .insert("quantization".into(), json!({"dtype": "bf16"}));
        head.run.extra.insert("ci".into(), json!({"job": 7}));
        let conditions = list(&values(&base), &values(&head), &[]);
        let batch = conditions
            .iter()
            .find(|c| c.name == ConditionName::Workload("batch_size".into()))
            .expect("workload.batch_size is a condition");
        assert!(batch.judged && batch.differs);
        assert_eq!((&batch.base, &batch.head), (&Value::Null, &json!(8)));
        assert_eq!(
            judged_differences(&values(&base), &values(&head), &[]),
            [ConditionName::Workload("batch_size".into())]
        );
        // Unknown top-level keys that differ: shown, not judged, unless named.
        let shown: Vec<(String, bool)> = conditions
            .iter()
            .filter(|c| matches!(c.name, ConditionName::Manifest(_)))
            .map(|c| (c.name.as_str().into_owned(), c.judged))
            .collect();
        assert_eq!(
            shown,
            [
                ("manifest.ci".to_owned(), false),
                ("manifest.quantization".to_owned(), false)
            ]
        );
        let judge = ["quantization".to_owned()];
        assert_eq!(
            judged_differences(&values(&base), &values(&head), &judge),
            [
                ConditionName::Workload("batch_size".into()),
                ConditionName::Manifest("quantization".into())
            ]
        );
        // The same keys on both sides: workload keys listed as the same, unknown keys not
        // listed unless judged.
        let same = list(&values(&head), &values(&head), &judge);
        assert!(same.iter().all(|c| !c.differs));
        let names: Vec<String> = same[ConditionName::ALL.len()..]
            .iter()
            .map(|c| c.name.as_str().into_owned())
            .collect();
        assert_eq!(
            names,
            ["workload.batch_size", "manifest.quantization"].map(String::from)
        );
        // Names survive comparison.json.
        for c in &conditions {
            let text = serde_json::to_string(&c.name).unwrap();
            assert_eq!(
                serde_json::from_str::<ConditionName>(&text).unwrap(),
                c.name
            );
        }
        assert_eq!(
            serde_json::to_string(&ConditionName::DataSource).unwrap(),
            "\"data_source\""
        );
    }

    #[test]
    fn unknown_keys_shown_are_bounded() {
        let base = analysis();
        let mut head = base.clone();
        for k in 0..30 {
            head.run.extra.insert(format!("key_{k:02}"), json!(k));
        }
        let conditions = list(&values(&base), &values(&head), &["key_29".to_owned()]);
        let manifest: Vec<&Condition> = conditions
            .iter()
            .filter(|c| matches!(c.name, ConditionName::Manifest(_)))
            .collect();
        assert_eq!(manifest.len(), MAX_SHOWN_KEYS + 1);
        assert!(manifest
            .iter()
            .any(|c| c.judged && c.name == ConditionName::Manifest("key_29".into())));
    }
}
