# Shared by the action's scripts (sourced, not run). Everything they write to standard output
# or standard error is read by the Actions runner, which acts on workflow commands (`::name::`
# at the start of a line, `##[` anywhere): text that comes from inputs, paths or other programs
# goes through `escape_data` or `say`, never straight to a terminal.

# A workflow command's message, escaped as the runner reads it (%, CR and LF), so that the text
# can neither end the command nor start another one on a line of its own.
escape_data() {
  local s=$1
  s=${s//"%"/"%25"}
  s=${s//$'\r'/"%0D"}
  s=${s//$'\n'/"%0A"}
  printf '%s' "$s"
}

# `::error` with an escaped message.
error() {
  echo "::error title=nsys-gate::$(escape_data "$1")" >&2
}

# A line of progress on standard error: line breaks become spaces, and the runner's legacy
# command prefix `##[` is broken with a zero-width space, so nothing in it is a command.
say() {
  local s="nsys-gate action: $*"
  s=${s//$'\r'/ }
  s=${s//$'\n'/ }
  s=${s//"##["/$'#\xe2\x80\x8b#['}
  printf '%s\n' "$s" >&2
}
