//! One trace per rank: `expected_trace_path` holding nsys's output pattern for the rank
//! (`.../trace_%q{RANK}.nsys-rep`, as `nsys profile -o` takes it). The run directory then
//! holds one trace per rank, the rank being the number in the file's name; each trace is
//! checked as a run's one trace is (a regular file inside the run directory, no symlink out).

use std::path::Path;

use super::{locate_trace, split_trace_path, ManifestRead, RunDir, RunDirError};

/// nsys's placeholder for an environment variable in `-o`, here the rank's.
const RANK_PLACEHOLDER: &str = "%q{RANK}";

/// The traces of the ranks, sorted by rank, each a [`RunDir`] checked as a run's one trace
/// (against its own digest when `trace_sha256` gives one per rank);
/// `None` when the manifest names one trace. A manifest with the pattern and no trace that
/// fits it is the missing-trace error of the pattern's rank 0.
pub fn locate_rank_traces(read: &ManifestRead) -> Result<Option<Vec<(u64, RunDir)>>, RunDirError> {
    let Some(value) = &read.manifest.expected_trace_path else {
        return Ok(None);
    };
    let (name, _) = split_trace_path(value)?;
    let Some((prefix, suffix)) = name.split_once(RANK_PLACEHOLDER) else {
        return Ok(None);
    };
    let mut ranks = ranks_in(&read.dir, prefix, suffix);
    if ranks.is_empty() {
        ranks.push(0);
    }
    ranks
        .into_iter()
        .map(|rank| {
            let mut one = read.clone();
            let name = value.replacen(RANK_PLACEHOLDER, &rank.to_string(), 1);
            one.manifest.expected_trace_path = Some(name.clone());
            // a digest per rank: this rank's, and a rank with none listed is not the run's
            if let Some(digests) = &read.manifest.trace_sha256_per_rank {
                match digests.get(&rank) {
                    Some(d) => one.manifest.trace_sha256 = Some(d.clone()),
                    None => {
                        let (file, _) = split_trace_path(&name)?;
                        return Err(RunDirError::TraceHashMismatch {
                            path: read.dir.join(file),
                            expected: format!("no digest for rank {rank}"),
                            actual: super::sha256_file(&read.dir.join(split_trace_path(&name)?.0))?,
                        });
                    }
                }
            }
            locate_trace(one).map(|run| (rank, run))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The ranks of the files in `dir` named `PREFIX<digits>SUFFIX`, sorted.
fn ranks_in(dir: &Path, prefix: &str, suffix: &str) -> Vec<u64> {
    let mut ranks: Vec<u64> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| {
                    let name = e.file_name().into_string().ok()?;
                    let digits = name.strip_prefix(prefix)?.strip_suffix(suffix)?;
                    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                        .then(|| digits.parse().ok())
                        .flatten()
                })
                .collect()
        })
        .unwrap_or_default();
    ranks.sort_unstable();
    ranks.dedup();
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_the_numbers_between_prefix_and_suffix() {
        let tmp = tempfile::tempdir().unwrap();
        for name in [
            "trace_0.nsys-rep",
            "trace_2.nsys-rep",
            "trace_x.nsys-rep",
            "trace_.nsys-rep",
            "trace_1.sqlite",
        ] {
            std::fs::write(tmp.path().join(name), b"").unwrap();
        }
        assert_eq!(ranks_in(tmp.path(), "trace_", ".nsys-rep"), vec![0, 2]);
    }
}
