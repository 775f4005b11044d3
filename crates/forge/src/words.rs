//! The words a report uses for the CI's inputs and runs, one set per forge (a
//! [`CiWords`], the renderer's type), handed to the renderer as data: a GitLab user reads
//! `--baseline auto` and pipelines, a GitHub user the action's `baseline: auto` and workflow
//! runs. The renderer knows no forge.

pub use nsys_gate_render::CiWords;

/// GitHub Actions' words (Gitea's and Forgejo's runners read the same workflows); also outside
/// CI, where the forge is GitHub's.
pub const GITHUB: CiWords = CiWords {
    run: "run",
    runs: "runs",
    runs_place: " of {place}, artifact {artifact}",
    how_to_history: "To know the run-to-run noise: run the profiling workflow on every push to the base branch and upload its analysis.json files as `nsys-gate-analysis`; `baseline: auto` then reads the newest runs (`baseline-runs`). See the README's \"Comparing with the base branch\".",
    full_data_when: "when the workflow uploads it (the examples upload it as `nsys-gate-analysis`)",
    this_config: "this workflow",
    change_request: "pull request",
};

/// GitLab CI's words: its command-line options, pipelines and jobs.
pub const GITLAB: CiWords = CiWords {
    run: "pipeline",
    runs: "pipelines",
    runs_place: ", the artifacts of job {place}",
    how_to_history: "To know the run-to-run noise: run the profiling job in a pipeline on every push to the target branch and keep its analysis.json files as artifacts; `--baseline auto` then reads the newest pipelines (`--baseline-runs`, the job `--baseline-job`). See docs/gitlab.md, \"The history: `--baseline auto` on GitLab\".",
    full_data_when: "when the job keeps it as an artifact (the example keeps `**/analysis.json`)",
    this_config: "this pipeline",
    change_request: "merge request",
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Each forge's words name its own options and runs, never another's.
    #[test]
    fn each_forge_names_its_own_inputs() {
        assert!(GITHUB.how_to_history.contains("`baseline: auto`"));
        assert!(GITLAB.how_to_history.contains("`--baseline auto`"));
        for words in [
            GITLAB.how_to_history,
            GITLAB.full_data_when,
            GITLAB.this_config,
        ] {
            assert!(
                !words.contains("workflow") && !words.contains("baseline:"),
                "{words}"
            );
        }
        let provenance = nsys_gate_render::view::from_artifact(&GITLAB);
        assert!(
            provenance.contains("the merge request's own job: this pipeline read"),
            "{provenance}"
        );
        assert!(!provenance.contains("pull request") && !provenance.contains("workflow"));
        let provenance = nsys_gate_render::view::from_artifact(&GITHUB);
        assert!(
            provenance.contains("the pull request's own job: this workflow read"),
            "{provenance}"
        );
    }
}
