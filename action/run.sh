#!/usr/bin/env bash
# Runs `nsys-gate run` with the action's inputs (passed in through the environment, never
# spliced into script text), and turns its exit status into the step's result.
set -uo pipefail

bin=${NSYS_GATE:?the nsys-gate binary was not obtained}

# The workflow_run half of the fork-safe pattern: post a report rendered elsewhere.
if [ -n "${INPUT_POST_REPORT:-}" ]; then
  report=$INPUT_POST_REPORT
  if [ -d "$report" ]; then
    report=$(find "$report" -name report.md -type f | sort | head -n 1)
  fi
  if [ -z "$report" ] || [ ! -f "$report" ]; then
    echo "::error title=nsys-gate::post-report '${INPUT_POST_REPORT}' holds no report.md" >&2
    exit 2
  fi
  post_args=(post --report "$report")
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
    echo "::error title=nsys-gate::run-dir '$line' matches no directory" >&2
    echo "gate=error" >> "${GITHUB_OUTPUT:-/dev/null}"
    exit 2
  fi
  for dir in "${matches[@]}"; do
    args+=(--run-dir "$dir")
    found=$((found + 1))
  done
done <<< "${INPUT_RUN_DIR:-}"
if [ "$found" -eq 0 ]; then
  echo "::error title=nsys-gate::the run-dir input is empty" >&2
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
