#!/usr/bin/env python3
"""Peak memory and time of `nsys-gate post` on a merge request whose other notes are huge: a
local stand-in for GitLab's notes API serves PAGES pages of 17 notes of 1,000,000 emoji each
(68 MB a page, past the 64 MiB cap of a reply held in memory; GitLab accepts notes of 1,000,000
characters and serves up to 200 pages), every note by another author and starting with
nsys-gate's own marker, then takes the one note nsys-gate posts. The release build is run under
/usr/bin/time for its peak resident set size.

    scripts/bench-notes.py [--pages N] [--gate BIN]

Prints the pages served, the bytes read, the wall time and the peak memory, and exits 1 when
the note was not posted. Standard library only; the server is on loopback.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from urllib.parse import parse_qs
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = "glpat-Xq9zT7w2Lk4mN8vB3cR5"
MARKER = "<!-- nsys-gate:bench -->"


def page_of_notes(first_id):
    body = MARKER + "\n" + "\U0001F600" * 1_000_000
    notes = [
        {"id": first_id + i, "body": body, "system": False,
         "author": {"id": 9, "username": "someone"}}
        for i in range(17)
    ]
    return json.dumps(notes, ensure_ascii=False).encode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--gate", default=os.path.join(REPO, "target/release/nsys-gate"))
    args = ap.parse_args()
    page = page_of_notes(10)
    state = {"pages_served": 0, "bytes": 0, "posted": []}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def send(self, status, body, headers=()):
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.headers.get("private-token") != TOKEN:
                return self.send(401, b'{"message":"401 Unauthorized"}')
            if self.path == "/api/v4/user":
                return self.send(200, json.dumps({"id": 7, "username": "bench-bot"}).encode())
            m = re.match(r"/api/v4/projects/42/merge_requests/7/notes\?(.*)", self.path)
            if not m:
                return self.send(404, b'{"message":"404 Not Found"}')
            n = int(parse_qs(m.group(1)).get("page", ["1"])[0])
            with lock:
                state["pages_served"] += 1
                state["bytes"] += len(page)
                posted = list(state["posted"])
            if n <= args.pages:
                headers = [("x-next-page", str(n + 1))]
                return self.send(200, page, headers)
            return self.send(200, json.dumps(posted).encode(), [("x-next-page", "")])

        def do_POST(self):
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}").get("body", "")
            note = {"id": 900, "body": body, "system": False,
                    "author": {"id": 7, "username": "bench-bot"}}
            with lock:
                state["posted"].append(note)
            self.send(201, json.dumps(note).encode())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    api = f"http://127.0.0.1:{server.server_address[1]}/api/v4"
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.md")
        with open(report, "w") as f:
            f.write(MARKER + "\n# report\n")
        env = {
            "PATH": "/usr/bin:/bin", "HOME": tmp, "GITLAB_CI": "true",
            "CI_API_V4_URL": api, "CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_PROJECT_ID": "42",
            "CI_MERGE_REQUEST_IID": "7", "CI_PIPELINE_SOURCE": "merge_request_event",
            "GITLAB_TOKEN": TOKEN,
        }
        cmd = ["/usr/bin/time", "-f", "%e %M", args.gate, "post", "--post-timeout", "600",
               "--report", report]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    server.shutdown()
    wall, peak_kib = done.stderr.strip().splitlines()[-1].split()
    print(f"pages of others' notes: {args.pages} of {len(page) / 1e6:.1f} MB; "
          f"pages served: {state['pages_served']} ({state['bytes'] / 1e9:.2f} GB read)")
    print(f"post: exit {done.returncode}, {float(wall):.1f} s, peak {int(peak_kib) / 1024:.1f} MiB, "
          f"notes posted: {len(state['posted'])}")
    if done.returncode != 0 or len(state["posted"]) != 1:
        print(done.stderr, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
