"""The HTTP API as a Python client meets it (docs/server.md), with `requests` from PyPI.

Run by crates/waypoint-cli/tests/python_client.rs, which makes the virtual environment
and passes the binary in WAYPOINT_BIN. Standalone:

    WAYPOINT_BIN=target/debug/waypoint python3 test_http_api.py

A run stops for input, then for approval; it is answered and approved over HTTP and
finishes, with the file it wrote on disk. Then 250 runs are paged through with the
cursor: each once, newest first, and a cursor no page handed out is a 400.
"""

import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading
import time

import requests

TOKEN = "python-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

CATALOG = """
tools:
  - name: save_note
    description: Write a short note into a file of the working directory.
    effects: write
    input_schema:
      type: object
      properties: {path: {type: string}, text: {type: string}}
      required: [path, text]
    run: {command: [sh, -c, 'printf %s "$1" > "$0"', "{path}", "{text}"]}
  - name: say
    description: Print a word.
    input_schema: {type: object, properties: {word: {type: string}}, required: [word]}
    run: {command: [echo, "{word}"]}
"""

CONFIG = f"""
[serve]
allow_run = true
workers = 2
max_rate_per_caller = 100000

[serve.callers]
python = {{ token = "{TOKEN}" }}
"""


def plan(steps):
    return {"plan_id": "pl_00000000000000aa", "steps": steps}


def step(tool, args):
    return {"id": "s1", "order": 1, "kind": "tool", "tool": tool, "group": 1, "args": args}


class Server:
    """`waypoint serve --http 127.0.0.1:0` in `home`, stopped on exit."""

    def __init__(self, binary, home):
        (home / "catalog.yaml").write_text(CATALOG)
        (home / "waypoint.toml").write_text(CONFIG)
        self.proc = subprocess.Popen(
            [binary, "--catalog", str(home / "catalog.yaml"), "--config", str(home / "waypoint.toml"),
             "--store", f"sqlite:{home / 'wp.db'}", "serve", "--http", "127.0.0.1:0"],
            cwd=home, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True,
            env={**os.environ, "XDG_CONFIG_HOME": str(home / "xdg")},
        )
        self.log = []
        found = threading.Event()
        self.base = None

        def read():
            for line in self.proc.stderr:
                self.log.append(line)
                m = re.search(r"serving MCP on http://([^/\s]+)/", line)
                if m and not found.is_set():
                    self.base = f"http://{m.group(1)}"
                    found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(60):
            self.stop()
            raise AssertionError("the server did not start:\n" + "".join(self.log))

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def wait_for_status(base, location, wanted, limit=60):
    deadline = time.time() + limit
    while time.time() < deadline:
        r = requests.get(base + location, headers=AUTH, timeout=10)
        assert r.status_code == 200, r.text
        body = r.json()
        if body["status"] == wanted:
            return body
        time.sleep(0.05)
    raise AssertionError(f"{location} never reached {wanted}: {body}")


def a_run_stops_for_input_and_approval_and_finishes(server, home):
    base = server.base
    submitted = requests.post(
        f"{base}/v1/runs", headers=AUTH, timeout=10,
        json={"plan": plan([step("save_note", {"path": "note.txt", "text": {"$placeholder": "the note"}})])},
    )
    assert submitted.status_code == 202, submitted.text
    location = submitted.headers["Location"]
    run_id = submitted.json()["run_id"]
    assert location == f"/v1/runs/{run_id}"

    waiting = wait_for_status(base, location, "needs_input")
    question = waiting["report"]["questions"][0]
    assert question["expects"] == "answer", question
    assert question["key"] == "s1.text", question

    wrong = requests.post(f"{base}{location}/resume", headers=AUTH, timeout=10,
                          json={"answers": {"s9.text": "x"}})
    assert wrong.status_code == 400, wrong.text
    assert wait_for_status(base, location, "needs_input")["status"] == "needs_input"

    answered = requests.post(f"{base}{location}/resume", headers=AUTH, timeout=30,
                             json={"answers": {"s1.text": "hello from python"}})
    assert answered.status_code == 200, answered.text
    report = answered.json()
    assert report["status"] == "needs_approval", report
    held = report["questions"][0]
    assert held["expects"] == "approve" and held["call"]["tool"] == "save_note", held
    assert held["call"]["args"]["text"] == "hello from python", held
    assert not (home / "note.txt").exists(), "the write ran before its approval"

    approved = requests.post(f"{base}{location}/approve", headers=AUTH, timeout=30,
                             json={"steps": [held["key"]]})
    assert approved.status_code == 200, approved.text
    assert approved.json()["status"] == "ok", approved.json()
    assert (home / "note.txt").read_text() == "hello from python"
    final = wait_for_status(base, location, "ok")
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", final["created_at"]), final
    return run_id


def runs_page_through_with_a_cursor(server, first_run):
    base = server.base
    ids = [first_run]
    for i in range(250):
        r = requests.post(f"{base}/v1/runs", headers=AUTH, timeout=10,
                          json={"plan": plan([step("say", {"word": f"w{i}"})])})
        assert r.status_code == 202, r.text
        ids.append(r.json()["run_id"])
    for run_id in ids[1:]:
        wait_for_status(base, f"/v1/runs/{run_id}", "ok")

    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 100}
        if cursor:
            params["cursor"] = cursor
        r = requests.get(f"{base}/v1/runs", headers=AUTH, params=params, timeout=10)
        assert r.status_code == 200, r.text
        page = r.json()
        pages += 1
        assert len(page["runs"]) <= 100
        seen.extend(run["run_id"] for run in page["runs"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3, pages
    assert len(seen) == len(set(seen)) == 251, (len(seen), len(set(seen)))
    assert set(seen) == set(ids)
    times = [requests.get(f"{base}/v1/runs/{i}", headers=AUTH, timeout=10).json()["created_at"]
             for i in seen[:: 50]]
    assert times == sorted(times, reverse=True), times

    bad = requests.get(f"{base}/v1/runs", headers=AUTH, params={"cursor": "not a cursor"}, timeout=10)
    assert bad.status_code == 400, bad.text
    assert bad.json()["error"]["code"] == "bad_input", bad.text
    unknown = requests.get(f"{base}/v1/runs", headers=AUTH, params={"offset": 10}, timeout=10)
    assert unknown.status_code == 400, unknown.text


def main():
    binary = os.environ["WAYPOINT_BIN"]
    with tempfile.TemporaryDirectory() as tmp:
        home = pathlib.Path(tmp)
        server = Server(binary, home)
        try:
            first = a_run_stops_for_input_and_approval_and_finishes(server, home)
            print("ok: a run stopped for input and approval, was answered and approved over HTTP, and finished")
            runs_page_through_with_a_cursor(server, first)
            print("ok: 251 runs paged through with the cursor, each once, newest first")
        except Exception:
            sys.stderr.write("server log:\n" + "".join(server.log[-40:]))
            raise
        finally:
            server.stop()


if __name__ == "__main__":
    main()
