//! `nsys-gate analyze`: one run directory to analysis.json, a summary on standard error.

use super::{analyze_options, interrupted, Context};
use crate::cli::AnalyzeArgs;
use crate::forge::Forge;
use crate::gate::{Ending, GateConfig};
use crate::interrupt;
use crate::progress::Progress;

pub fn analyze(args: &AnalyzeArgs, context: &Context, forge: &dyn Forge) -> anyhow::Result<Ending> {
    let gate = GateConfig::new(&args.analysis.gate.gate_on, &args.analysis.gate.no_gate_on);
    let options = analyze_options(
        &args.run_dir,
        args.output.clone(),
        &args.analysis,
        gate,
        context,
        forge,
    );
    let mut progress = Progress::stderr();
    let result = interrupt::deferred(|| crate::analyze(&options, &mut progress));
    if let Some(signal) = interrupt::received() {
        return Ok(interrupted(signal));
    }
    let (analysis, written) = result.map_err(|e| e.error)?;
    progress.summary(&analysis, &written);
    Ok(Ending::of_gate(&analysis.gate))
}
