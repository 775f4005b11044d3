#!/usr/bin/env bash
# Runs `nsys-gate run` with the action's inputs (passed in through the environment, never
# spliced into script text), and turns its exit status into the step's result. Every value is
# passed as `--option=value`: a value that begins with `-` (`label: -gpu`) stays the option's
# value, where `--option value` would make the parser read it as an option of its own.
set -uo pipefail

bin=${NSYS_GATE:?the nsys-gate binary was not obtained}
# shellcheck source=action/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# `true`/`false` inputs (YAML's spellings of true accepted).
is_true() {
  case "$1" in
    true|True|TRUE|yes|1) return 0 ;;
    *) return 1 ;;
  esac
}

# Options every subcommand that posts takes.
comment_args=()
[ -n "${INPUT_COMMENT_KEY:-}" ] && comment_args+=("--comment-key=$INPUT_COMMENT_KEY")
[ -n "${INPUT_COMMENT_AUTHOR:-}" ] && comment_args+=("--comment-author=$INPUT_COMMENT_AUTHOR")
# Options of the report, in every subcommand that renders one.
render_args=()
is_true "${INPUT_EXACT_NAMES:-false}" && render_args+=(--exact-names)
# The baseline (`run` and `post --analyses` take it alike): `auto`, or paths one per line.
while IFS= read -r line || [ -n "$line" ]; do
  line="${line#"${line%%[![:space:]]*}"}"
  line="${line%"${line##*[![:space:]]}"}"
  [ -n "$line" ] && comment_args+=("--baseline=$line")
done <<< "${INPUT_BASELINE:-}"
if [ -n "${INPUT_BASELINE:-}" ]; then
  [ -n "${INPUT_BASELINE_WORKFLOW:-}" ] && comment_args+=("--baseline-workflow=$INPUT_BASELINE_WORKFLOW")
  [ -n "${INPUT_BASELINE_ARTIFACT:-}" ] && comment_args+=("--baseline-artifact=$INPUT_BASELINE_ARTIFACT")
  [ -n "${INPUT_BASELINE_RUNS:-}" ] && comment_args+=("--baseline-runs=$INPUT_BASELINE_RUNS")
  [ -n "${INPUT_BASELINE_TIMEOUT:-}" ] && comment_args+=("--baseline-timeout=$INPUT_BASELINE_TIMEOUT")
  [ -n "${INPUT_NOISE_FLOOR:-}" ] && comment_args+=("--noise-floor=$INPUT_NOISE_FLOOR")
  read -r -a keys <<< "$(printf '%s' "${INPUT_CONDITIONS:-}" | tr ',\r\n\t' '    ')"
  for key in "${keys[@]}"; do comment_args+=("--condition=$key"); done
fi

# The gate's warning codes, separated by commas, spaces or line breaks (no glob expansion):
# `run` gates on them, `post --analyses` recomputes the artifact's gate with them.
gate_args=()
read -r -a codes <<< "$(printf '%s' "${INPUT_GATE_ON:-}" | tr ',\r\n\t' '    ')"
for code in "${codes[@]}"; do gate_args+=("--gate-on=$code"); done
read -r -a codes <<< "$(printf '%s' "${INPUT_NO_GATE_ON:-}" | tr ',\r\n\t' '    ')"
for code in "${codes[@]}"; do gate_args+=("--no-gate-on=$code"); done
# The gate as a JUnit XML report (`run` and `post --analyses`, which both know it).
[ -n "${INPUT_JUNIT:-}" ] && gate_args+=("--junit=$INPUT_JUNIT")

if [ -n "${INPUT_POST_REPORT:-}" ]; then
  error "the post-report input was removed: it posted the artifact's report.md word for word, and on a fork's pull request the fork writes that file. Upload the analysis.json files instead and give their folder as post-analyses (see docs/forks.md)."
  exit 2
fi

# The workflow_run half of the fork-safe pattern: the comment is rendered here, by this
# binary, from the analysis.json files of another job's artifact (data, never posted as is).
if [ -n "${INPUT_POST_ANALYSES:-}" ]; then
  if [ -n "${INPUT_RUN_DIR:-}" ]; then
    error "give either run-dir (analyse and post) or post-analyses (post another job's analyses), not both"
    exit 2
  fi
  if [ ! -d "$INPUT_POST_ANALYSES" ]; then
    error "post-analyses '$INPUT_POST_ANALYSES' is not a folder (give the folder the artifact's analysis.json files were downloaded to)"
    exit 2
  fi
  exec "$bin" post "--analyses=$INPUT_POST_ANALYSES" "${render_args[@]}" "${gate_args[@]}" "${comment_args[@]}"
fi

args=(run)

# Run directories: one per line, globs expanded; a pattern that matches nothing is an error.
shopt -s nullglob globstar
found=0
while IFS= read -r line || [ -n "$line" ]; do
  line="${line#"${line%%[![:space:]]*}"}"
  line="${line%"${line##*[![:space:]]}"}"
  [ -z "$line" ] && continue
  # shellcheck disable=SC2206 # word splitting is off; this expands the glob only
  IFS= matches=($line)
  unset IFS
  if [ ${#matches[@]} -eq 0 ]; then
    error "run-dir '$line' matches no directory"
    echo "gate=error" >> "${GITHUB_OUTPUT:-/dev/null}"
    exit 2
  fi
  for dir in "${matches[@]}"; do
    args+=("--run-dir=$dir")
    found=$((found + 1))
  done
done <<< "${INPUT_RUN_DIR:-}"
if [ "$found" -eq 0 ]; then
  error "the run-dir input is empty"
  echo "gate=error" >> "${GITHUB_OUTPUT:-/dev/null}"
  exit 2
fi

[ -n "${INPUT_NSYS:-}" ] && args+=("--nsys=$INPUT_NSYS")
[ -n "${INPUT_TEMPLATE:-}" ] && args+=("--template=$INPUT_TEMPLATE")
[ -n "${INPUT_NSYS_TIMEOUT:-}" ] && args+=("--nsys-timeout=$INPUT_NSYS_TIMEOUT")
[ -n "${INPUT_NSYS_PROCESSES:-}" ] && args+=("--nsys-processes=$INPUT_NSYS_PROCESSES")
[ -n "${INPUT_TOP:-}" ] && args+=("--top=$INPUT_TOP")
[ -n "${INPUT_LABEL:-}" ] && args+=("--label=$INPUT_LABEL")
args+=("${render_args[@]}")
args+=("${comment_args[@]}")
args+=("${gate_args[@]}")
is_true "${INPUT_KEEP_EXPORT:-false}" && args+=(--keep-export)
is_true "${INPUT_POST:-true}" || args+=(--no-post)
is_true "${INPUT_FAIL_ON_POST_ERROR:-false}" && args+=(--fail-on-post-error)

"$bin" "${args[@]}"
status=$?

case "$status" in
  0) exit 0 ;;
  1)
    is_true "${INPUT_FAIL_ON_GATE:-true}" && exit 1
    say "gating warnings found; fail-on-gate is off, so the step passes"
    exit 0 ;;
  *) exit "$status" ;;
esac
