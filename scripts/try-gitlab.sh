#!/usr/bin/env bash
# Runs the example GitLab pipeline (examples/gitlab/.gitlab-ci.yml with the template
# examples/gitlab/nsys-gate.gitlab-ci.yml) on this machine under gitlab-ci-local, as a push
# pipeline of the default branch, with no GitLab server:
#
#   - the template is included from the working tree instead of its remote URL;
#   - `release-url` is a file:// mirror that scripts/package-release.sh fills from this
#     checkout (a release build: a few minutes the first time), so the job downloads the binary
#     and checks its SHA-256 as on a runner;
#   - the harness's line copies run directories (default: the bundled example's) instead of
#     profiling;
#   - NSYS_GATE_BASELINE is empty (no history to read) and a push pipeline notes nothing.
#
#   scripts/try-gitlab.sh [--binary FILE] [RUN_DIR...]
#
# --binary FILE: put FILE (a built nsys-gate, such as target/debug/nsys-gate) in the mirror
# instead of building the release with scripts/package-release.sh: quicker, the same check.
# Installs gitlab-ci-local (scripts/install-gitlab-ci-local.sh, Node.js 20 needed) and
# Nsight Systems 2024.2 (scripts/install-nsys.sh) when missing; $GITLAB_CI_LOCAL and $NSYS,
# when set, name ones to use instead. Prints gitlab-ci-local's log and
# the artifacts the job kept; the pipeline's folder is kept and named at the end. Exits with
# gitlab-ci-local's status (the job fails when the gate does).
set -euo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { echo "try-gitlab: $*" >&2; }

binary=
if [ "${1:-}" = --binary ]; then
  binary=$(realpath "${2:?--binary needs a file}")
  shift 2
fi
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=("$repo_root"/examples/smoke-tensor/runs/*/)
for run in "${runs[@]}"; do
  [ -f "$run/manifest.yaml" ] || { say "$run is not a run directory (no manifest.yaml)"; exit 2; }
done

tool=${GITLAB_CI_LOCAL:-$("$repo_root/scripts/install-gitlab-ci-local.sh")}
nsys=${NSYS:-$("$repo_root/scripts/install-nsys.sh" 2024.2 2>/dev/null)}
mirror="$repo_root/target/try-gitlab-mirror"
rm -rf "$mirror"
if [ -z "$binary" ]; then
  say "filling the release mirror $mirror (scripts/package-release.sh)"
  "$repo_root/scripts/package-release.sh" "$mirror" >&2
else
  # The layout scripts/package-release.sh writes: vVERSION/nsys-gate-VERSION-OS-ARCH.tar.gz
  # and its .sha256.
  version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo_root/Cargo.toml" | head -n 1)
  name="nsys-gate-$version-$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m)"
  say "filling the release mirror $mirror with $binary"
  mkdir -p "$mirror/v$version" "$mirror/stage"
  cp "$binary" "$mirror/stage/nsys-gate"
  tar -C "$mirror/stage" -czf "$mirror/v$version/$name.tar.gz" nsys-gate
  (cd "$mirror/v$version" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
  rm -rf "$mirror/stage"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/nsys-gate-try-gitlab.XXXXXX")
project="$work/project"
mkdir -p "$project" "$work/home" "$work/runs"
for run in "${runs[@]}"; do
  # Only what the harness leaves: not an earlier analysis's stats/ or analysis.json.
  name=$(basename "$run")
  mkdir -p "$work/runs/$name"
  cp "$run/manifest.yaml" "$work/runs/$name/"
  find "$run" -maxdepth 1 \( -name '*.nsys-rep' -o -name '*.sqlite' \) -exec cp {} "$work/runs/$name/" \;
done

examples="$repo_root/examples/gitlab"
cp "$examples/nsys-gate.gitlab-ci.yml" "$project/"
# The three lines replaced, each checked to be there first.
replace() {
  grep -q -- "$1" "$project/.gitlab-ci.yml" || { say "examples/gitlab/.gitlab-ci.yml has no line matching '$1'"; exit 1; }
  FROM=$1 TO=$2 perl -0pi -e 's/^\Q$ENV{FROM}\E.*$/$ENV{TO}/m' "$project/.gitlab-ci.yml"
}
cp "$examples/.gitlab-ci.yml" "$project/.gitlab-ci.yml"
replace "  - remote: https://raw.githubusercontent.com/OWNER/nsys-gate/" "  - local: nsys-gate.gitlab-ci.yml"
replace "      release-url: https://github.com/OWNER/nsys-gate/releases/download" "      release-url: file://$mirror"
replace "    - mkdir -p \"\$RUN_DIR\" && nsys profile" \
  "    - mkdir -p profiles/example/runs && cp -r \"\$RUNS\"/* profiles/example/runs/"

git_() { (cd "$project" && GIT_CONFIG_NOSYSTEM=1 HOME="$work/home" git "$@"); }
git_ init -q -b main
git_ remote add origin https://gitlab.example/group/project.git
git_ add -A
git_ -c user.name=try-gitlab -c user.email=try-gitlab@example.com commit -qm "try the example pipeline"

say "running the pipeline in $project"
status=0
(cd "$project" && env -i HOME="$work/home" PATH=/usr/local/bin:/usr/bin:/bin \
  "$tool" --no-color --home "$work/home" \
  --variable "GITLAB_CI=true" --variable "CI_PIPELINE_SOURCE=push" --variable "CI_COMMIT_BRANCH=main" \
  --variable "CI_DEFAULT_BRANCH=main" --variable "CI_PIPELINE_ID=1" \
  --variable "NSYS=$nsys" --variable "RUNS=$work/runs" --variable "NSYS_GATE_BASELINE=") || status=$?

echo
say "artifacts the job kept:"
(cd "$project/.gitlab-ci-local/artifacts" 2>/dev/null && find . -type f | sort) || say "none"
say "pipeline folder: $project (remove it when done)"
exit "$status"
