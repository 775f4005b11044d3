//! What differs between two runs besides the code under test. The harness's rule: never
//! compare runs with different targets, inputs, devices, synchronization policies, capture
//! ranges or Nsight versions without stating the difference. The first nine conditions are
//! judged (any difference: "not like for like", and a base run that differs is left out of
//! the history); the nsys-gate version and the Git commits are shown, never judged (the
//! commits are what is being compared).

use serde_json::{json, Value};

use crate::artifact::comparison::{Condition, ConditionName};
use crate::artifact::{GpuWork, Provenance, Run};

/// Every condition of two runs, in [`ConditionName::ALL`] order, from what each recorded
/// (`base` and `head` in that order too, as [`value`] gives them).
pub fn list(base: &[Value], head: &[Value]) -> Vec<Condition> {
    ConditionName::ALL
        .iter()
        .zip(base.iter().zip(head))
        .map(|(&name, (b, h))| Condition {
            name,
            judged: name.judged(),
            differs: differs(name, b, h),
            base: b.clone(),
            head: h.clone(),
        })
        .collect()
}

/// The judged conditions that differ between two runs.
pub fn judged_differences(base: &[Value], head: &[Value]) -> Vec<ConditionName> {
    list(base, head)
        .into_iter()
        .filter(|c| c.judged && c.differs)
        .map(|c| c.name)
        .collect()
}

fn text(v: Option<&String>) -> Value {
    v.map_or(Value::Null, |s| Value::String(s.clone()))
}

/// What a run recorded for a condition (`null`: not recorded), from the parts of its
/// analysis that say it.
pub fn value(
    name: ConditionName,
    run: &Run,
    provenance: &Provenance,
    gpu_work: Option<&GpuWork>,
) -> Value {
    match name {
        ConditionName::Target => run.target.clone().unwrap_or(Value::Null),
        ConditionName::DataSource => json!({
            "data_source": run.data_source.clone().unwrap_or(Value::Null),
            "record_count": run.record_count,
            "record_ids_sha256": run.record_ids_sha256,
        }),
        ConditionName::Device => json!({
            "device": run.device,
            "gpus": gpu_work.map(GpuWork::gpu_names),
        }),
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
    }
}

/// Whether two recorded values differ. Parts that only one side can record (the record ids'
/// digest, missing from older analyses; the GPU names, missing without GPU work) count only
/// when both sides have them.
fn differs(name: ConditionName, b: &Value, h: &Value) -> bool {
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
        ConditionName::Device => b["device"] != h["device"] || part_differs("gpus"),
        _ => b != h,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::{Analysis, GpuWork};

    fn analysis() -> Analysis {
        crate::artifact::fake::analysis(&[2_500_000; 5], &[("inference", 7_500_000)], false)
    }

    fn values(a: &Analysis) -> Vec<Value> {
        ConditionName::ALL
            .iter()
            .map(|&n| value(n, &a.run, &a.provenance, a.gpu_work.as_ref()))
            .collect()
    }

    fn differing(base: &Analysis, head: &Analysis) -> Vec<ConditionName> {
        list(&values(base), &values(head))
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
            list(&values(&a), &values(&a))
                .iter()
                .filter(|c| c.judged)
                .count(),
            9
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
            devices: Some(vec![crate::artifact::GpuDevice {
                device: format!("{name} (0)"),
                name: Some(name.into()),
                id: Some(0),
                kernels: 1,
                memory_operations: 0,
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
            vec![ConditionName::DataSource, ConditionName::Device]
        );
    }
}
