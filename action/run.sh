#!/usr/bin/env bash
# Runs `nsys-gate run` with the action's inputs (passed in through the environment, never
# spliced into script text), and turns its exit status into the step's result.
set -uo pipefail

bin=${NSYS_GATE:?the nsys-gate binary was not obtained}

# A workflow-command message, escaped as the runner reads it (%, CR and LF), so that input
# text can neither end the command nor start another one on a line of its own.
escape_data() {
  local s=$1
  s=${s//"%"/"%25"}
  s=${s//$'\r'/"%0D"}
  s=${s//$'\n'/"%0A"}
  printf '%s' "$s"
}
error() {
  echo "::error title=nsys-gate::$(escape_data "$1")" >&2
}

if [ -n "${INPUT_POST_REPORT:-}" ]; then
  error "the post-report input was removed: it posted the artifact's report.md word for word, and on a fork's pull request the fork writes that file. Upload the analysis.json files instead and give their folder as post-analyses (see the README's fork-safe pattern)."
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
  post_args=(post --analyses "$INPUT_POST_ANALYSES")
  [ -n "${INPUT_COMMENT_KEY:-}" ] && post_args+=(--comment-key "$INPUT_COMMENT_KEY")
  exec "$bin" "${post_args[@]}"
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
    args+=(--run-dir "$dir")
    found=$((found + 1))
  done
done <<< "${INPUT_RUN_DIR:-}"
if [ "$found" -eq 0 ]; then
  error "the run-dir input is empty"
  echo "gate=error" >> "${GITHUB_OUTPUT:-/dev/null}"
  exit 2
fi

[ -n "${INPUT_NSYS:-}" ] && args+=(--nsys "$INPUT_NSYS")
[ -n "${INPUT_TEMPLATE:-}" ] && args+=(--template "$INPUT_TEMPLATE")
[ -n "${INPUT_NSYS_TIMEOUT:-}" ] && args+=(--nsys-timeout "$INPUT_NSYS_TIMEOUT")
[ -n "${INPUT_COMMENT_KEY:-}" ] && args+=(--comment-key "$INPUT_COMMENT_KEY")
case "${INPUT_KEEP_EXPORT:-false}" in
  true|True|TRUE|yes|1) args+=(--keep-export) ;;
esac
case "${INPUT_POST:-true}" in
  true|True|TRUE|yes|1) ;;
  *) args+=(--no-post) ;;
esac

"$bin" "${args[@]}"
status=$?

case "$status" in
  0) exit 0 ;;
  1)
    case "${INPUT_FAIL_ON_GATE:-true}" in
      true|True|TRUE|yes|1) exit 1 ;;
      *) echo "nsys-gate: gating warnings found; fail-on-gate is off, so the step passes" >&2; exit 0 ;;
    esac ;;
  *) exit "$status" ;;
esac
