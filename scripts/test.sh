#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs the pinned Nsight Systems versions the tests
# use (2024.2, 2023.4 and 2022.4, into .nsys/), act, gitlab-ci-local and cmark-gfm (into
# .tools/), checks that each installed tool's libraries resolve (scripts/check-tools.sh), checks
# formatting and lints, then runs every test. With CI set, a test that cannot find nsys fails instead of skipping.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

for version in 2024.2 2023.4 2022.4; do
  scripts/install-nsys.sh "$version" >/dev/null
done
# act runs action.yml end to end in the tests.
scripts/install-act.sh >/dev/null
# gitlab-ci-local runs examples/gitlab/'s pipeline end to end in the tests.
scripts/install-gitlab-ci-local.sh >/dev/null
# cmark-gfm renders reports as GitHub does in the report tests.
scripts/install-cmark-gfm.sh >/dev/null
# Every installed tool's libraries resolve: a missing one fails here, naming the tool, the
# library and its Debian package, instead of failing a test.
scripts/check-tools.sh

cargo fmt --all -- --check
# Every crate of the workspace builds on its own declared dependencies (tests/cli/layers.rs
# checks that they only go down the pipeline).
cargo build --locked --workspace
cargo clippy --locked --workspace --all-targets -- -D warnings
# The benchmarks' smoke runs first, so that the test runner's summary closes the output.
cargo test --locked --bench analyze --bench history
cargo test --locked --workspace --lib --bins --tests
