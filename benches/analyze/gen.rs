//! A generator of realistic nsys reports: `nvtx_pushpop_trace` and `nvtx_gpu_proj_trace` CSVs
//! as nsys writes them (quoted names with commas and raw quotes), for benchmarks.
//!
//! The shape follows an inference profile: a capture range on the main thread holding
//! `iteration N` passes, each nesting up to 8 deep (iteration > stage > block > layer > op >
//! sub-op > kernel launch > sync), with long module-path names; loader threads push their own
//! ranges next to it (not attributed); about 70% of ranges launch GPU work and so have a
//! projection row, as in a GPU-bound trace.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use nsys_gate::reports::{
    write_gpu_proj_row, write_pushpop_row, GpuProjRecord, PushPopRecord, RangeStyle,
    GPU_PROJ_HEADER, PUSHPOP_HEADER,
};

const PID: u64 = 4242;
const MAIN_TID: u64 = 4242;
const LOADER_THREADS: u64 = 3;

/// One range being generated: children are written before their parent is closed.
struct Node {
    name: String,
    start: i64,
    end: i64,
    children: Vec<Node>,
    gpu: bool,
}

/// What one iteration looks like: (stage name, blocks, layers per block, ops per layer).
fn iteration_tree(i: u64, clock: &mut i64) -> Node {
    let start = *clock;
    let mut stages = Vec::new();
    for (stage, blocks) in [
        ("preprocessing", 1),
        ("inference", 4),
        ("postprocessing", 1),
    ] {
        let stage_start = *clock;
        let mut block_nodes = Vec::new();
        for b in 0..blocks {
            let block_start = *clock;
            let mut layers = Vec::new();
            for l in 0..2 {
                let layer_start = *clock;
                let mut ops = Vec::new();
                for (op, sub) in [
                    ("self_attention", "query_key_value"),
                    ("mlp, \"gelu\"", "dense_h_to_4h"),
                ] {
                    let op_start = *clock;
                    *clock += 300;
                    let launch_start = *clock;
                    *clock += 1_500 + ((i * 7 + l) % 13) as i64 * 40;
                    let sync = Node {
                        name: "cudaStreamSynchronize".into(),
                        start: *clock - 400,
                        end: *clock - 100,
                        children: vec![],
                        gpu: false,
                    };
                    let launch = Node {
                        name: format!("{sub}.kernel_launch"),
                        start: launch_start,
                        end: *clock,
                        children: vec![sync],
                        gpu: true,
                    };
                    let sub_node = Node {
                        name: format!("model.encoder.layers.{}.{op}.{sub}.forward", b * 2 + l),
                        start: launch_start - 100,
                        end: *clock + 50,
                        children: vec![launch],
                        gpu: true,
                    };
                    *clock += 200;
                    ops.push(Node {
                        name: format!("model.encoder.layers.{}.{op}", b * 2 + l),
                        start: op_start,
                        end: *clock,
                        children: vec![sub_node],
                        gpu: true,
                    });
                }
                *clock += 100;
                layers.push(Node {
                    name: format!("layer {l}"),
                    start: layer_start,
                    end: *clock,
                    children: ops,
                    gpu: true,
                });
            }
            *clock += 100;
            block_nodes.push(Node {
                name: format!("block {b}"),
                start: block_start,
                end: *clock,
                children: layers,
                gpu: stage == "inference",
            });
        }
        *clock += 500;
        stages.push(Node {
            name: stage.into(),
            start: stage_start,
            end: *clock,
            children: block_nodes,
            gpu: stage != "postprocessing",
        });
    }
    *clock += 1_000;
    Node {
        name: format!("iteration {i}"),
        start,
        end: *clock,
        children: stages,
        gpu: true,
    }
}

fn count(node: &Node) -> usize {
    1 + node.children.iter().map(count).sum::<usize>()
}

struct Writer<W: Write> {
    pushpop: W,
    gpu: W,
    next_id: u64,
    rows: usize,
}

impl<W: Write> Writer<W> {
    /// Writes one range; returns its id (ids are assigned in push order, as NVTX_EVENTS rows).
    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        name: &str,
        start: i64,
        end: i64,
        child_total: i64,
        num_child: usize,
        gpu: bool,
        tid: u64,
        stack: &mut Vec<u64>,
    ) -> io::Result<()> {
        self.next_id += 1;
        let id = self.next_id;
        let parent = stack.last().copied();
        stack.push(id);
        let lvl = (stack.len() - 1) as u32;
        write_pushpop_row(
            &mut self.pushpop,
            &PushPopRecord {
                start_ns: start,
                end_ns: end,
                dur_child_ns: child_total,
                name,
                pid: PID,
                tid,
                lvl,
                num_child: num_child as u64,
                range_id: id,
                parent_id: parent,
                range_stack: stack,
            },
            "\n",
        )?;
        self.rows += 1;
        if gpu {
            write_gpu_proj_row(
                &mut self.gpu,
                &GpuProjRecord {
                    name: Some(name),
                    projected_start_ns: Some(start + 2_000),
                    projected_duration_ns: Some(end - start + 500),
                    orig_start_ns: Some(start),
                    orig_duration_ns: Some(end - start),
                    style: Some(RangeStyle::PushPop),
                    pid: PID,
                    tid,
                    num_gpu_ops: 1 + num_child as u64,
                    lvl: Some(lvl),
                    num_child: num_child as u64,
                    range_id: Some(id),
                    parent_id: parent,
                    range_stack: stack,
                },
                "\n",
            )?;
        }
        Ok(())
    }

    /// Writes `node` and its subtree, parents before children (nsys's order by start).
    fn tree(&mut self, node: &Node, tid: u64, stack: &mut Vec<u64>) -> io::Result<()> {
        let child_total: i64 = node.children.iter().map(|c| c.end - c.start).sum();
        self.row(
            &node.name,
            node.start,
            node.end,
            child_total,
            node.children.len(),
            node.gpu,
            tid,
            stack,
        )?;
        for child in &node.children {
            self.tree(child, tid, stack)?;
        }
        stack.pop();
        Ok(())
    }
}

/// Writes both reports into `dir` with about `target_rows` push/pop rows; returns the number
/// of push/pop rows and of iterations written.
pub fn generate(dir: &Path, target_rows: usize) -> io::Result<(usize, u64)> {
    let pushpop = BufWriter::new(std::fs::File::create(
        dir.join("nsys_nvtx_pushpop_trace.csv"),
    )?);
    let gpu = BufWriter::new(std::fs::File::create(
        dir.join("nsys_nvtx_gpu_proj_trace.csv"),
    )?);
    let mut w = Writer {
        pushpop,
        gpu,
        next_id: 0,
        rows: 0,
    };
    writeln!(w.pushpop, "{PUSHPOP_HEADER}")?;
    writeln!(w.gpu, "{GPU_PROJ_HEADER}")?;

    let mut clock = 1_000_000i64;
    let per_iteration = count(&iteration_tree(0, &mut 0));
    // Loader threads: one range per iteration each, with a child.
    let per_loader = 2 * LOADER_THREADS as usize;
    let iterations = (target_rows.saturating_sub(1) / (per_iteration + per_loader)).max(1) as u64;

    // nsys sorts rows by start, so the capture range comes first and needs its children's
    // total: a first pass lays the passes out on the clock, a second writes them one at a
    // time (memory stays flat whatever the size).
    let capture_start = clock;
    let mut child_total = 0i64;
    for i in 0..iterations {
        let pass = iteration_tree(i, &mut clock);
        child_total += pass.end - pass.start;
    }
    let capture_end = clock + 500;
    let mut stack = Vec::with_capacity(16);
    w.row(
        "profile-target",
        capture_start - 500,
        capture_end,
        child_total,
        iterations as usize,
        true,
        MAIN_TID,
        &mut stack,
    )?;
    let mut clock = capture_start;
    for i in 0..iterations {
        let pass = iteration_tree(i, &mut clock);
        w.tree(&pass, MAIN_TID, &mut stack)?;
    }
    stack.pop();
    for t in 1..=LOADER_THREADS {
        for i in 0..iterations {
            let start = capture_start + i as i64 * 10_000;
            let load = Node {
                name: format!("loader {t}: decode, \"resize\" record {i}"),
                start,
                end: start + 5_000,
                children: vec![Node {
                    name: "read".into(),
                    start: start + 100,
                    end: start + 2_000,
                    children: vec![],
                    gpu: false,
                }],
                gpu: false,
            };
            w.tree(&load, MAIN_TID + t, &mut stack)?;
        }
    }
    w.pushpop.flush()?;
    w.gpu.flush()?;
    Ok((w.rows, iterations))
}
