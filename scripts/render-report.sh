#!/usr/bin/env bash
# Renders a report.md the way GitHub shows a comment, to look at it: cmark-gfm with GitHub's
# extensions (table, autolink, tagfilter, strikethrough), mermaid blocks drawn by the mermaid
# version given, then a headless Chromium screenshot.
#
#   scripts/render-report.sh REPORT.md OUT.png [WIDTH] [MERMAID_JS]
#
# WIDTH: the page width in pixels (default 900; a comment column on a laptop is about 760).
# MERMAID_JS: a mermaid.min.js (`npm install mermaid@10.9` or `mermaid@11` into a scratch
# folder gives node_modules/mermaid/dist/mermaid.min.js); without it mermaid blocks stay code.
# Needs cmark-gfm (the one scripts/install-cmark-gfm.sh puts in .tools/, installed there when
# missing, else one on PATH) and Debian's chromium (scripts/install-chromium.sh).
set -euo pipefail
report=${1:?usage: render-report.sh REPORT.md OUT.png [WIDTH] [MERMAID_JS]}
out=${2:?usage: render-report.sh REPORT.md OUT.png [WIDTH] [MERMAID_JS]}
width=${3:-900}
mermaid=${4:-}
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cmark="$repo_root/.tools/cmark-gfm/cmark-gfm"
if [ ! -x "$cmark" ]; then
  if command -v cmark-gfm >/dev/null; then
    cmark=$(command -v cmark-gfm)
  else
    echo "render-report: no cmark-gfm in .tools/ or on PATH: installing it (scripts/install-cmark-gfm.sh)" >&2
    cmark=$("$repo_root/scripts/install-cmark-gfm.sh")
  fi
fi
command -v chromium >/dev/null || {
  echo "render-report: chromium not found: scripts/install-chromium.sh installs Debian's (as root)" >&2
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

body=$("$cmark" --unsafe -e table -e autolink -e tagfilter -e strikethrough "$report")
{
  cat <<'HTML'
<!doctype html><html><head><meta charset="utf-8"><style>
body { font-family: -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif;
       font-size: 14px; line-height: 1.5; margin: 16px; color: #1f2328; }
table { border-collapse: collapse; display: block; max-width: 100%; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
tr:nth-child(2n) { background: #f6f8fa; }
code { background: #eff1f3; padding: .2em .4em; border-radius: 6px; font-size: 85%; }
pre { background: #f6f8fa; padding: 16px; overflow: auto; }
blockquote { border-left: .25em solid #d1d9e0; color: #59636e; margin: 0; padding: 0 1em; }
details { margin: 8px 0; }
</style></head><body>
HTML
  printf '%s\n' "$body"
  if [ -n "$mermaid" ]; then
    printf '<script src="file://%s"></script>\n' "$(realpath "$mermaid")"
    cat <<'HTML'
<script>
for (const pre of document.querySelectorAll('pre > code.language-mermaid')) {
  const div = document.createElement('div');
  div.className = 'mermaid';
  div.textContent = pre.textContent;
  pre.parentElement.replaceWith(div);
}
for (const d of document.querySelectorAll('details')) d.open = true;
mermaid.initialize({ startOnLoad: false });
mermaid.run().then(() => { document.title = 'rendered'; },
                   (e) => { document.body.insertAdjacentText('afterbegin', 'MERMAID ERROR: ' + e); });
</script>
HTML
  fi
  echo '</body></html>'
} > "$work/report.html"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --allow-file-access-from-files --virtual-time-budget=5000 \
  --window-size="$width,${HEIGHT:-4000}" --screenshot="$out" "file://$work/report.html" 2>/dev/null
echo "render-report: $out" >&2
