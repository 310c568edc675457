"""The docs runner: every HTTP example of docs/ and the README, run in page order against a fresh
sandbox, each shown answer compared with the sandbox's. Then the webhook verifiers of
docs/webhooks.md (Python, Node, PHP), taken from the page, check real signed deliveries.

Usage: python3 .ci/docs_runner.py [--server BIN] [--receiver BIN] [PAGE ...]
(`.ci/docs.sh` runs it in CI with the binaries the test step built.) Its conventions for doc
writers (shown answers, placeholders, `<!-- docs-runner: skip (reason) -->`) are in
docs/README.md, "Docs that run". A failure names the page and the line of the command.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = re.compile(r"<!--\s*docs-runner:\s*skip\s*\((.+)\)\s*-->")
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
SHAPES = [
    TIMESTAMP,
    re.compile(r"^req_[0-9a-z]{24}$"),
    re.compile(r"^EG-[A-Z0-9]{8}$"),
    re.compile(r"^evt_[0-9a-z]{24}$"),
    re.compile(r"^whsec_[A-Za-z0-9+/]{43}=$"),
]
# Values that differ per run and are not told apart by shape: (path suffix, predicate).
VOLATILE = {
    ("retry_after",): lambda v: isinstance(v, int) and 0 < v <= 60,
    ("withdrawal", "open"): lambda v: isinstance(v, bool),
}
VOLATILE_HEADERS = {"retry-after": re.compile(r"^[1-9]\d?$"), "date": re.compile(r".")}
STARTS_SANDBOX = re.compile(r"^(cargo run( --[\w-]+)* --example server\b|commerce-sandbox\b)")
STARTS_RECEIVER = re.compile(r"^cargo run( --[\w-]+)* --example webhook_receiver\b")
ASSIGNMENT = re.compile(r"""^(?:[A-Z_][A-Z0-9_]*=(?:'[^']*'|"[^"]*"|[^\s;'"]*)\s*;?\s*)+$""")
STATUS_COMMENT = re.compile(r"^#\s*(?:→\s*)?([1-5]\d\d)\b")


class Failure(Exception):
    """A difference between a page and the sandbox: the message names the page and line."""


# ---------------------------------------------------------------- JSON with elisions


class Elided:
    """`...` in a shown answer."""


ELIDED = Elided()


class Shown:
    """A parser for a shown JSON answer: JSON plus `...` (see the module's doc)."""

    def __init__(self, text: str):
        self.text = text
        self.i = 0

    def fail(self, what: str) -> Failure:
        return Failure(f"shown answer is not JSON: {what} at offset {self.i}: {self.text[self.i:self.i + 40]!r}")

    def ws(self) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t\r\n":
            self.i += 1

    def parse(self):
        value = self.value()
        self.ws()
        if self.i != len(self.text):
            raise self.fail("trailing text")
        return value

    def value(self):
        self.ws()
        t = self.text
        if t.startswith("...", self.i):
            self.i += 3
            return ELIDED
        if self.i >= len(t):
            raise self.fail("end of text")
        c = t[self.i]
        if c == "{":
            self.i += 1
            members: list = []
            seen: set = set()
            self.ws()
            if t.startswith("}", self.i):
                self.i += 1
                return ("obj", members)
            while True:
                self.ws()
                if t.startswith("...", self.i):
                    self.i += 3
                    members.append(ELIDED)
                else:
                    key = self.value()
                    if not isinstance(key, str):
                        raise self.fail("object key")
                    if key in seen:
                        raise Failure(f"shown answer has the key {key!r} twice")
                    seen.add(key)
                    self.ws()
                    if not t.startswith(":", self.i):
                        raise self.fail("':'")
                    self.i += 1
                    members.append((key, self.value()))
                self.ws()
                if t.startswith(",", self.i):
                    self.i += 1
                elif t.startswith("}", self.i):
                    self.i += 1
                    return ("obj", members)
                else:
                    raise self.fail("',' or '}'")
        if c == "[":
            self.i += 1
            items: list = []
            self.ws()
            if t.startswith("]", self.i):
                self.i += 1
                return ("arr", items)
            while True:
                items.append(self.value())
                self.ws()
                if t.startswith(",", self.i):
                    self.i += 1
                elif t.startswith("]", self.i):
                    self.i += 1
                    return ("arr", items)
                else:
                    raise self.fail("',' or ']'")
        try:
            value, end = json.JSONDecoder().raw_decode(t, self.i)
        except json.JSONDecodeError as error:
            raise self.fail(str(error)) from None
        self.i = end
        return value


def strict_json(text: str):
    """Parses an actual answer, refusing duplicate keys."""

    def pairs(items):
        keys = [k for k, _ in items]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            raise Failure(f"the sandbox answered with duplicate JSON keys {dupes}")
        return dict(items)

    return json.loads(text, object_pairs_hook=pairs)


def same_string(shown: str, actual, path: tuple) -> str | None:
    if not isinstance(actual, str):
        return f"{'.'.join(map(str, path)) or 'the answer'}: shown {shown!r}, got {actual!r}"
    if shown == "..." or shown == actual:
        return None
    if shown.endswith("...") and actual.startswith(shown[:-3]):
        return None
    for shape in SHAPES:
        if shape.match(shown) and shape.match(actual):
            return None
    return f"{'.'.join(map(str, path))}: shown {shown!r}, got {actual!r}"


def compare(shown, actual, path: tuple = ()) -> str | None:
    """None when `actual` is what `shown` shows; else what differs first."""
    where = ".".join(map(str, path)) or "the answer"
    for suffix, accepts in VOLATILE.items():
        if path[-len(suffix):] == suffix and not isinstance(shown, tuple):
            return None if accepts(actual) else f"{where}: got {actual!r}"
    if isinstance(shown, tuple) and shown[0] == "obj":
        if not isinstance(actual, dict):
            return f"{where}: shown an object, got {json.dumps(actual, ensure_ascii=False)[:80]}"
        open_ = any(m is ELIDED for m in shown[1])
        keys = {m[0] for m in shown[1] if m is not ELIDED}
        missing = keys - actual.keys()
        if missing:
            return f"{where}: the answer has no {sorted(missing)}"
        extra = actual.keys() - keys
        if extra and not open_:
            return f"{where}: the answer also has {sorted(extra)} (show them, or `...`)"
        for member in shown[1]:
            if member is ELIDED:
                continue
            difference = compare(member[1], actual[member[0]], path + (member[0],))
            if difference:
                return difference
        return None
    if isinstance(shown, tuple) and shown[0] == "arr":
        if not isinstance(actual, list):
            return f"{where}: shown an array, got {json.dumps(actual, ensure_ascii=False)[:80]}"
        items = shown[1]
        if not any(x is ELIDED for x in items):
            if len(items) != len(actual):
                return f"{where}: shown {len(items)} elements, got {len(actual)}"
            for n, (s, a) in enumerate(zip(items, actual)):
                difference = compare(s, a, path + (n,))
                if difference:
                    return difference
            return None
        # Segments between elisions: the first anchored at the start, the last at the end,
        # the others found in order.
        segments: list[list] = [[]]
        for x in items:
            if x is ELIDED:
                segments.append([])
            else:
                segments[-1].append(x)
        head, tail, middle = segments[0], segments[-1], segments[1:-1]
        if len(head) + len(tail) > len(actual):
            return f"{where}: shown at least {len(head) + len(tail)} elements, got {len(actual)}"
        for n, s in enumerate(head):
            difference = compare(s, actual[n], path + (n,))
            if difference:
                return difference
        for n, s in enumerate(tail):
            at = len(actual) - len(tail) + n
            difference = compare(s, actual[at], path + (at,))
            if difference:
                return difference
        at = len(head)
        for segment in middle:
            while at + len(segment) <= len(actual) - len(tail):
                if all(compare(s, actual[at + k]) is None for k, s in enumerate(segment)):
                    break
                at += 1
            else:
                return f"{where}: no run of elements matches {segment!r:.80}"
            at += len(segment)
        return None
    if shown is ELIDED:
        return None
    if isinstance(shown, str):
        return same_string(shown, actual, path)
    if type(shown) is not type(actual) or shown != actual:
        return f"{where}: shown {json.dumps(shown, ensure_ascii=False)}, got {json.dumps(actual, ensure_ascii=False)[:120]}"
    return None


# ---------------------------------------------------------------- pages and blocks


class Command:
    """One logical shell command of a block, with what the page shows of its answer."""

    def __init__(self, line: int, text: str):
        self.line = line
        self.text = text
        self.shown: list[str] = []
        self.status: int | None = None


def balanced(text: str) -> bool:
    """Whether a shell command is complete: quotes closed, no trailing `\\`, loops closed."""
    single = double = False
    escaped = False
    for c in text:
        if escaped:
            escaped = False
        elif c == "\\" and not single:
            escaped = True
        elif c == "'" and not double:
            single = not single
        elif c == '"' and not single:
            double = not double
    if single or double or text.rstrip().endswith("\\"):
        return False
    words = re.findall(r"\b(for|while|until|do|done)\b", re.sub(r"'[^']*'", "", text))
    return words.count("do") == words.count("done")


def split_comment(text: str) -> tuple[str, str]:
    """A command's text and its trailing `# comment` (outside quotes)."""
    single = double = False
    for n, c in enumerate(text):
        if c == "'" and not double:
            single = not single
        elif c == '"' and not single:
            double = not double
        elif c == "#" and not single and not double and (n == 0 or text[n - 1] in " \t"):
            return text[:n].rstrip(), text[n:]
    return text, ""


def parse_block(start: int, lines: list[str]) -> list[Command]:
    """Commands of a block whose first line is page line `start`."""
    prompted = any(line.startswith("$ ") for line in lines)
    commands: list[Command] = []
    n = 0
    while n < len(lines):
        line = lines[n]
        if prompted and not line.startswith("$ "):
            if commands and line.strip() and not line.startswith("#"):
                commands[-1].shown.append(line)
            n += 1
            continue
        if not line.strip():
            n += 1
            continue
        if line.startswith("#"):
            if commands and not commands[-1].shown:
                comment = line[1:].strip()
                if comment.startswith(("{", "[")):
                    commands[-1].shown.append(comment)
                elif (m := STATUS_COMMENT.match(line)) and commands[-1].status is None:
                    commands[-1].status = int(m.group(1))
            n += 1
            continue
        text = line[2:] if prompted else line
        first = n
        while not balanced(text) and n + 1 < len(lines):
            n += 1
            text += "\n" + lines[n]
        text, comment = split_comment(text)
        command = Command(start + 1 + first, text)
        if m := STATUS_COMMENT.match(comment):
            command.status = int(m.group(1))
        commands.append(command)
        n += 1
    return commands


def blocks(page: Path) -> list[tuple[int, list[str], str | None]]:
    """The `sh` blocks with a curl: (line of the fence, lines, skip reason)."""
    lines = page.read_text(encoding="utf-8").split("\n")
    found = []
    n = 0
    while n < len(lines):
        fence = lines[n]
        if fence.startswith("```"):
            end = n + 1
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            body = lines[n + 1:end]
            if fence.strip() in ("```sh", "```bash", "```console") and any("curl " in x or ASSIGNMENT.match(x) for x in body):
                before = next((lines[k] for k in range(n - 1, -1, -1) if lines[k].strip()), "")
                skip = SKIP.search(before)
                found.append((n + 1, body, skip.group(1) if skip else None))
            n = end
        n += 1
    return found


def reading_order() -> list[Path]:
    """docs/README.md, the pages of its Reference table in order, the other pages, README.md."""
    index = ROOT / "docs" / "README.md"
    listed = re.findall(r"^\| \[[\w.-]+\]\(([\w.-]+\.md)\) \|", index.read_text(encoding="utf-8"), re.M)
    pages = [index] + [ROOT / "docs" / p for p in listed]
    pages += sorted(p for p in (ROOT / "docs").glob("*.md") if p not in pages)
    return pages + [ROOT / "README.md"]


# ---------------------------------------------------------------- the sandbox


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sandbox:
    """A fresh sandbox server on a free port."""

    def __init__(self, binary: Path, work: Path):
        self.port = free_port()
        self.log = open(work / f"server-{self.port}.log", "wb")
        self.process = subprocess.Popen(
            [str(binary), "--addr", f"127.0.0.1:{self.port}"],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "RUST_LOG": "warn"},
        )
        url = f"http://127.0.0.1:{self.port}/api/v1/openapi.json"
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise Failure(f"the sandbox did not start: {Path(self.log.name).read_text()[-2000:]}")
            time.sleep(0.1)

    def state(self) -> str:
        """Whether the sandbox still runs, and the end of its log: what a failure reports."""
        code = self.process.poll()
        alive = f"the sandbox on port {self.port} " + ("runs" if code is None else f"exited with {code}")
        self.log.flush()
        return f"{alive}; its log ends:\n{Path(self.log.name).read_text(errors='replace')[-1500:]}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


class Receiver:
    """examples/webhook_receiver.rs on a free port, as a page starts it."""

    def __init__(self, binary: Path, port: int, secret: str, work: Path):
        self.path = work / f"receiver-{port}.log"
        self.process = subprocess.Popen(
            [str(binary), secret],
            stdout=open(self.path, "wb"),
            stderr=subprocess.STDOUT,
            env={**os.environ, "COMMERCE_RECEIVER_ADDR": f"127.0.0.1:{port}"},
        )
        deadline = time.monotonic() + 10
        while "Receiving webhooks" not in self.output():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise Failure(f"the webhook receiver did not start: {self.output()}")
            time.sleep(0.05)

    def output(self) -> str:
        return self.path.read_text(encoding="utf-8", errors="replace") if self.path.exists() else ""

    def stop(self) -> str:
        self.process.terminate()
        self.process.wait()
        return self.output()


# ---------------------------------------------------------------- running a page

CURL_WRAPPER = r"""
curl() {
  local n
  n=$(( $(cat "$DOCS_RUNNER_CALLS/n" 2>/dev/null || echo 0) + 1 ))
  echo "$n" >"$DOCS_RUNNER_CALLS/n"
  command curl --show-error -D "$DOCS_RUNNER_CALLS/h$n" "$@"
  local code=$?
  echo "$code" >"$DOCS_RUNNER_CALLS/e$n"
  return "$code"
}
"""


class Session:
    """What a reader's terminal keeps: the sandbox running, shell variables, the last secret."""

    def __init__(self):
        self.sandbox: Sandbox | None = None
        self.receiver_port = free_port()
        self.assignments: list[str] = []
        self.secret: str | None = None

    def close(self) -> None:
        if self.sandbox:
            self.sandbox.stop()
            self.sandbox = None


class Page:
    """One page run against its sandbox(es). Strict: a fresh sandbox for the page, every shown
    answer compared. As a reader (`strict` false): the session's sandbox, kept from the pages
    before, and only the outcome of each command compared (success, or the error code or
    status shown), since ids then differ from the page's."""

    def __init__(self, path: Path, args, work: Path, session: Session | None = None):
        self.path = path
        self.name = path.relative_to(ROOT)
        self.args = args
        self.work = work
        self.strict = session is None
        self.session = session or Session()
        self.receiver: Receiver | None = None
        self.ran = 0
        self.compared = 0
        # As a reader: (resource, id the page shows) -> id the sandbox gave, for what the page
        # creates and then uses by its id.
        self.ids: dict[tuple[str, int], int] = {}

    @property
    def sandbox(self) -> Sandbox | None:
        return self.session.sandbox

    def fail(self, command: Command, message: str) -> Failure:
        return Failure(f"{self.name}:{command.line}: {message}\n    $ {command.text.splitlines()[0][:160]}")

    def fresh(self) -> None:
        self.stop()
        self.session.close()
        self.session.sandbox = Sandbox(self.args.server, self.work)
        self.session.assignments = []

    def stop(self) -> None:
        if self.receiver:
            output = self.receiver.stop()
            self.receiver = None
            events = [x for x in output.splitlines() if x.startswith('"evt_')]
            if "refused" in output or "without a type" in output or not events:
                raise Failure(f"{self.name}: the webhook receiver verified {len(events)} events:\n{output}")
            print(f"  the receiver verified {len(events)} events")
        if self.strict:
            self.session.close()

    def rewrite(self, text: str) -> str:
        text = text.replace("127.0.0.1:8080", f"127.0.0.1:{self.sandbox.port}")
        return text.replace("127.0.0.1:4000", f"127.0.0.1:{self.session.receiver_port}")

    def run(self) -> int:
        page_blocks = blocks(self.path)
        if not page_blocks:
            return 0
        if self.path.name == "rate-limits.md":
            # The rate windows are UTC minutes: run the page inside one.
            wait = 60 - time.time() % 60
            if wait < 5:
                time.sleep(wait + 0.5)
        if self.strict or not self.sandbox:
            self.fresh()
        try:
            for fence, body, skip in page_blocks:
                if skip:
                    if self.strict:
                        print(f"  {self.name}:{fence}: skipped ({skip})")
                    continue
                commands = parse_block(fence, body)
                if commands and STARTS_SANDBOX.match(commands[0].text) and (self.ran or not self.strict):
                    self.fresh()
                for command in commands:
                    self.command(command)
            self.stop()
        finally:
            if self.receiver:
                self.receiver.stop()
            if self.strict:
                self.session.close()
        return self.ran

    def command(self, command: Command) -> None:
        text = command.text.strip()
        if STARTS_SANDBOX.match(text):
            return
        if STARTS_RECEIVER.match(text):
            if not self.session.secret:
                raise self.fail(command, "a receiver is started before any answer showed a secret")
            if self.receiver:
                self.receiver.stop()
            self.receiver = Receiver(self.args.receiver, self.session.receiver_port, self.session.secret, self.work)
            return
        if ASSIGNMENT.match(text):
            self.session.assignments.append(text)
            return
        if "curl" not in text:
            return
        if self.session.secret:
            text = text.replace("whsec_...", self.session.secret)
        for (resource, shown_id), actual_id in self.ids.items():
            text = re.sub(rf"/{resource}/{shown_id}\b", f"/{resource}/{actual_id}", text)
        calls = Path(tempfile.mkdtemp(dir=self.work))
        script = CURL_WRAPPER + self.rewrite("\n".join(self.session.assignments) + "\n" + text) + "\n"
        try:
            done = subprocess.run(
                ["bash", "-c", script],
                cwd=calls,
                capture_output=True,
                env={**os.environ, "DOCS_RUNNER_CALLS": str(calls)},
                timeout=60,
            )
        except subprocess.TimeoutExpired:
            raise self.fail(command, "still running after 60 s") from None
        self.ran += 1
        out = done.stdout.decode("utf-8", errors="replace")
        heads = sorted(calls.glob("h*"), key=lambda p: int(p.name[1:]))
        statuses = []
        for head in heads:
            first = head.read_text(errors="replace").split("\r\n", 1)[0]
            statuses.append(int(first.split()[1]) if first.startswith("HTTP/") else 0)
        exits = [e.read_text().strip() for e in sorted(calls.glob("e*"), key=lambda p: int(p.name[1:]))]
        shutil.rmtree(calls)
        if not statuses:
            raise self.fail(command, f"no HTTP answer: {done.stderr.decode(errors='replace')[-500:]}")
        if 0 in statuses:
            why = f"curl exit codes {exits}: {done.stderr.decode(errors='replace')[-500:]}"
            raise self.fail(command, f"a request got no answer ({why})\n{self.sandbox.state()}")
        for status in statuses:
            if command.status is not None and status != command.status:
                raise self.fail(command, f"the page says {command.status}, the sandbox answered {status}: {out[:300]}")
            if command.status is None and not command.shown and not 200 <= status < 300:
                raise self.fail(command, f"answered {status} (say the status in a comment if meant): {out[:300]}")
        if command.shown:
            self.check(command, out)
            self.compared += 1
        elif out.lstrip().startswith(("{", "[")) and len(statuses) == 1:
            self.remember(command, out)
        if self.args.verbose:
            print(f"  {self.name}:{command.line}: {statuses}")

    def remember(self, command: Command, body: str):
        try:
            value = strict_json(body)
        except Failure as error:
            raise self.fail(command, str(error)) from None
        except json.JSONDecodeError:
            return None
        data = value.get("data") if isinstance(value, dict) else None
        if isinstance(data, dict) and isinstance(data.get("secret"), str):
            self.session.secret = data["secret"]
        return value

    def check(self, command: Command, out: str) -> None:
        shown = self.rewrite("\n".join(command.shown))
        if not self.strict:
            self.check_outcome(command, shown, out)
            return
        if shown.startswith("HTTP/"):
            self.check_http(command, shown, out)
        elif shown.lstrip().startswith(("{", "[")):
            self.check_json(command, shown, out)
        else:
            expected = [x.split() for x in shown.strip().splitlines()]
            actual = [x.split() for x in out.strip().splitlines()]
            if expected != actual:
                raise self.fail(command, f"shown:\n{shown}\n  the sandbox:\n{out.strip()}")

    def check_outcome(self, command: Command, shown: str, out: str) -> None:
        """As a reader: the shown status, or the shown error code, or a success."""
        text = out.replace("\r\n", "\n")
        if shown.startswith("HTTP/"):
            status = text.split("\n", 1)[0].split()[1:2]
            if status != shown.split()[1:2]:
                raise self.fail(command, f"shown {shown.splitlines()[0]!r}, the sandbox answered {status}")
            shown, text = shown.partition("\n{")[2], text.partition("\n\n")[2]
            shown = "{" + shown if shown else ""
        if not shown.lstrip().startswith(("{", "[")):
            return
        expected = Shown(shown).parse()
        actual = self.remember(command, text)
        members = dict(m for m in expected[1] if m is not ELIDED) if expected[0] == "obj" else {}
        error = members.get("error")
        code = dict(m for m in error[1] if m is not ELIDED).get("code") if isinstance(error, tuple) else None
        got = actual.get("error", {}).get("code") if isinstance(actual, dict) else None
        if code != got:
            what = f"error {code}" if code else "success"
            raise self.fail(command, f"shown {what}, the sandbox answered {text[:300]}")
        created = re.search(r"\$API/(orders|quotes|webhooks)\s", command.text + " ")
        data = members.get("data")
        shown_id = dict(m for m in data[1] if m is not ELIDED).get("id") if isinstance(data, tuple) else None
        if created and "-d" in command.text and isinstance(shown_id, int):
            self.ids[(created.group(1), shown_id)] = actual["data"]["id"]

    def check_json(self, command: Command, shown: str, body: str) -> None:
        try:
            expected = Shown(shown).parse()
        except Failure as error:
            raise self.fail(command, str(error)) from None
        actual = self.remember(command, body)
        if actual is None:
            raise self.fail(command, f"the answer is not JSON: {body[:300]}")
        difference = compare(expected, actual)
        if difference:
            raise self.fail(command, f"{difference}\n  the sandbox answered: {body[:600]}")

    def check_http(self, command: Command, shown: str, out: str) -> None:
        shown_head, _, shown_body = shown.partition("\n{")
        shown_body = "{" + shown_body if _ else ""
        actual_head, _, actual_body = out.replace("\r\n", "\n").partition("\n\n")
        shown_lines = [x.strip() for x in shown_head.splitlines() if x.strip() and x.strip() != "..."]
        actual_lines = actual_head.splitlines()
        if not actual_lines or actual_lines[0].split()[1:] != shown_lines[0].split()[1:]:
            raise self.fail(command, f"shown {shown_lines[0]!r}, the sandbox answered {actual_lines[:1]}")
        headers = {}
        for line in actual_lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        for line in shown_lines[1:]:
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name not in headers:
                raise self.fail(command, f"the answer has no header {name}")
            got = headers[name]
            if name in VOLATILE_HEADERS and VOLATILE_HEADERS[name].match(got):
                continue
            if got != value and not any(s.match(value) and s.match(got) for s in SHAPES):
                raise self.fail(command, f"header {name}: shown {value!r}, got {got!r}")
        if shown_body:
            self.check_json(command, shown_body, actual_body)
        elif actual_body.strip():
            self.remember(command, actual_body)


# ---------------------------------------------------------------- reuse across pages


def keys_in_order(pages: list[Path]) -> list[str]:
    """Where the pages, read in order on one sandbox, would get a 409 they do not show: an
    `Idempotency-Key` sent again with another body, or an `external_reference` sent again other
    than as a replay (same key, same body)."""
    problems = []
    keys: dict[str, tuple[str, str]] = {}
    references: dict[str, tuple[str, tuple[str, str]]] = {}
    for page in pages:
        variables: dict[str, str] = {}
        for fence, body, skip in blocks(page):
            if skip:
                continue
            for command in parse_block(fence, body):
                if ASSIGNMENT.match(command.text.strip()):
                    for name, value in re.findall(r"([A-Z_][A-Z0-9_]*)=('[^']*'|\"[^\"]*\"|[^\s;]*)", command.text):
                        variables[name] = value.strip("'\"")
                    continue
                shown = "\n".join(command.shown)
                if "409" in shown or '"conflict"' in shown or command.status == 409:
                    continue
                text = re.sub(r"\$(\w+)", lambda m: variables.get(m.group(1), m.group(0)), command.text)
                data = re.search(r"-d\s+('[^']*'|\"(?:\\.|[^\"])*\")", text, re.S)
                sent = data.group(1) if data else ""
                where = f"{page.relative_to(ROOT)}:{command.line}"
                key = re.search(r"Idempotency-Key: ([\w.-]+)", text)
                request = (key.group(1) if key else "", sent)
                if key:
                    first = keys.setdefault(key.group(1), (where, sent))
                    if first[1] != sent:
                        problems.append(f"{where}: Idempotency-Key {key.group(1)} is sent with another body at {first[0]}")
                for reference in re.findall(r"\"external_reference\\?\":\s*\\?\"([^\"\\]+)", text):
                    first = references.setdefault(reference, (where, request))
                    if first[0] != where and (first[1] != request or not key):
                        problems.append(f"{where}: external_reference {reference} is already used at {first[0]}")
    return problems


# ---------------------------------------------------------------- the webhook verifiers

NODE_HARNESS = """
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const results = input.cases.map((c) => verify(c.secret, c.headers, Buffer.from(c.body, "utf8")));
console.log(JSON.stringify(results));
"""
PHP_HARNESS = """
$input = json_decode(file_get_contents('php://stdin'), true);
$results = [];
foreach ($input['cases'] as $c) { $results[] = verify($c['secret'], $c['headers'], $c['body']); }
echo json_encode($results), "\\n";
"""
PYTHON_HARNESS = """
import json, sys
data = json.load(sys.stdin)
print(json.dumps([verify(c["secret"], c["headers"], c["body"].encode()) for c in data["cases"]]))
"""


def snippets(page: Path) -> dict[str, str]:
    """The page's `python`, `php` and `js` blocks."""
    text = page.read_text(encoding="utf-8")
    found = {}
    for lang in ("python", "php", "js"):
        blocks_ = re.findall(rf"^```{lang}\n(.*?)^```", text, re.S | re.M)
        if len(blocks_) != 1:
            raise Failure(f"{page.relative_to(ROOT)}: {len(blocks_)} `{lang}` blocks, one verifier expected")
        found[lang] = blocks_[0]
    return found


def capture_deliveries(args, work: Path) -> tuple[str, str, list[tuple[dict, str]]]:
    """Real signed deliveries from a fresh sandbox to a capturing receiver: a ping, then the
    secret is rotated and a second ping carries two signatures (the old and the new secret's).
    Returns (old secret, new secret, [(headers, body)] of the two pings)."""
    captured: list = []

    class Capture(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers["content-length"]))
            captured.append(({k.lower(): v for k, v in self.headers.items()}, body.decode("utf-8")))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *_):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Capture)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sandbox = Sandbox(args.server, work)
    api = f"http://127.0.0.1:{sandbox.port}/api/v1"
    auth = {"Authorization": "Bearer sk_demo_marketer", "Content-Type": "application/json"}

    def post(path: str, body: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else b""
        with urllib.request.urlopen(urllib.request.Request(f"{api}{path}", data, auth, method="POST")) as answer:
            return json.load(answer)["data"]

    def ping(webhook: int, count: int) -> None:
        post(f"/webhooks/{webhook}/ping")
        deadline = time.monotonic() + 15
        while len(captured) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        if len(captured) < count:
            raise Failure("docs/webhooks.md: the sandbox delivered no ping to the verifiers' receiver")

    try:
        webhook = post("/webhooks", {"url": f"http://127.0.0.1:{server.server_address[1]}/webhooks"})
        ping(webhook["id"], 1)
        rotated = post(f"/webhooks/{webhook['id']}/rotate_secret")
        ping(webhook["id"], 2)
    finally:
        sandbox.stop()
        server.shutdown()
    names = ("webhook-id", "webhook-timestamp", "webhook-signature")
    deliveries = [({k: headers[k] for k in names}, body) for headers, body in captured]
    return webhook["secret"], rotated["secret"], deliveries


def sign(secret: str, msg_id: str, timestamp: str, body: str) -> str:
    """A Standard Webhooks signature header, as the sandbox makes it."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    mac = hmac.new(key, f"{msg_id}.{timestamp}.{body}".encode(), hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def check_verifiers(args, work: Path) -> None:
    """Each verifier of docs/webhooks.md, as the page shows it, on real deliveries."""
    page = ROOT / "docs" / "webhooks.md"
    code = snippets(page)
    secret, new_secret, [(headers, body), (rotated, rotated_body)] = capture_deliveries(args, work)
    if sign(secret, headers["webhook-id"], headers["webhook-timestamp"], body) not in headers["webhook-signature"]:
        raise Failure("the captured delivery is not signed as docs/webhooks.md says")
    if len(rotated["webhook-signature"].split(" ")) != 2:
        raise Failure(f"a delivery after a rotation has not two signatures: {rotated['webhook-signature']}")
    other = "whsec_" + "QUJD" * 10 + "QUI="
    hour_ago = str(int(headers["webhook-timestamp"]) - 3600)
    cases = [
        ("the delivery", True, secret, headers, body),
        ("a delivery after a rotation, with the old secret", True, secret, rotated, rotated_body),
        ("a delivery after a rotation, with the new secret", True, new_secret, rotated, rotated_body),
        ("a changed body", False, secret, headers, body.replace('"ping"', '"pong"')),
        ("a changed webhook-id", False, secret, {**headers, "webhook-id": headers["webhook-id"][:-1] + "x"}, body),
        ("a changed webhook-timestamp", False, secret, {**headers, "webhook-timestamp": hour_ago}, body),
        ("another secret", False, other, headers, body),
        (
            "a replay an hour old, signed",
            False,
            secret,
            {**headers, "webhook-timestamp": hour_ago, "webhook-signature": sign(secret, headers["webhook-id"], hour_ago, body)},
            body,
        ),
    ]
    if cases[3][4] == body:
        raise Failure("the ping's body has no type to tamper with")
    runs = {
        "Python": (["python3"], "py", code["python"] + PYTHON_HARNESS),
        "Node": (["node"], "js", code["js"] + NODE_HARNESS),
        "PHP": (["php"], "php", "<?php\n" + code["php"] + PHP_HARNESS),
    }
    payload = json.dumps({"cases": [{"secret": k, "headers": h, "body": b} for _, _, k, h, b in cases]})
    for lang, (argv, ext, source) in runs.items():
        script = work / f"verify.{ext}"
        script.write_text(source, encoding="utf-8")
        done = subprocess.run(argv + [str(script)], input=payload.encode(), capture_output=True, timeout=60)
        if done.returncode != 0:
            raise Failure(f"{page.relative_to(ROOT)}: the {lang} verifier did not run: {done.stderr.decode()[-800:]}")
        results = json.loads(done.stdout)
        for (what, expected, *_), result in zip(cases, results, strict=True):
            if result is not expected:
                verdict = "refused" if expected else "accepted"
                raise Failure(f"{page.relative_to(ROOT)}: the {lang} verifier {verdict} {what}")
        print(f"  {page.relative_to(ROOT)}: the {lang} verifier accepts real deliveries (3 cases) and refuses 5 forged ones")


# ---------------------------------------------------------------- the runner's own checks


def self_test() -> None:
    """The matcher and the block parser on known cases: each line one that must hold."""

    def matches(shown: str, actual: str) -> bool:
        return compare(Shown(shown).parse(), strict_json(actual)) is None

    def refused(parse, text: str) -> bool:
        try:
            parse(text)
        except Failure:
            return True
        return False

    assert matches('{"a":"1.00","b":[1,2]}', '{"b":[1,2],"a":"1.00"}')
    assert not matches('{"a":"1.00"}', '{"a":"1.01"}'), "an amount is exact"
    assert not matches('{"a":5}', '{"a":6}'), "an id is exact"
    assert not matches('{"a":1}', '{"a":1,"b":2}'), "without ..., the keys are the answer's"
    assert matches('{"a":1,...}', '{"a":1,"b":2}')
    assert not matches('{"a":1,"c":3,...}', '{"a":1,"b":2}'), "a shown key must be in the answer"
    assert matches('[{"id":1},...,{"id":9}]', '[{"id":1},{"id":4},{"id":9}]')
    assert not matches('[{"id":1},...,{"id":9}]', '[{"id":1},{"id":4}]')
    assert not matches("[1,2]", "[1,2,3]"), "without ..., the elements are the answer's"
    assert matches('{"t":"...","s":"whsec_..."}', '{"t":"x","s":"whsec_abc"}')
    assert not matches('{"s":"whsec_..."}', '{"s":"sk_abc"}')
    assert matches('{"at":"2026-11-24T14:04:50+02:00"}', '{"at":"2027-01-01T00:00:00+02:00"}')
    assert not matches('{"at":"2026-11-24T14:04:50+02:00"}', '{"at":null}')
    assert matches('{"r":"req_7k2m9qxa4b1c8d3e5f6g0h2j"}', '{"r":"req_000000000000000000000000"}')
    assert not matches('{"r":"req_7k2m9qxa4b1c8d3e5f6g0h2j"}', '{"r":"shop-42"}')
    assert not matches('{"code":"not_found"}', '{"code":"conflict"}')
    assert not matches('{"open":false}', '{"open":true}'), "a boolean is exact"
    assert matches('{"withdrawal":{"open":false}}', '{"withdrawal":{"open":true}}')
    assert not matches('{"a":1}', '{"a":"1"}'), "a number is not a string"
    assert refused(lambda t: Shown(t).parse(), '{"request_id":"x","request_id":"y"}'), "a shown key twice"
    assert refused(strict_json, '{"e":{"request_id":"x","request_id":"y"}}'), "an answer's key twice"
    commands = parse_block(10, [
        "$ curl -s $API/x -H 'a: b' \\",
        "    -d '{\"x\":",
        "  1}'",
        '{"data":1}',
        "",
        "$ curl -s $API/y",
        '{"error":{}}',
    ])
    assert [(c.line, c.shown) for c in commands] == [(11, ['{"data":1}']), (16, ['{"error":{}}'])]
    commands = parse_block(1, ["curl -s a   # 404: gone", "curl -s b", "# → 201, made", "# {\"id\":4}"])
    assert [(c.status, c.shown) for c in commands] == [(404, []), (201, ['{"id":4}'])]
    print("docs runner: its own checks hold")


# ---------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", type=Path, default=ROOT / "target/debug/examples/server")
    parser.add_argument("--receiver", type=Path, default=ROOT / "target/debug/examples/webhook_receiver")
    parser.add_argument("--no-verifiers", action="store_true", help="skip the webhook verifiers")
    parser.add_argument("--self-test", action="store_true", help="only the runner's own checks (always run first)")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("pages", nargs="*", type=Path)
    args = parser.parse_args()
    self_test()
    if args.self_test:
        return 0
    for binary in (args.server, args.receiver):
        if not binary.exists():
            sys.exit(f"docs runner: {binary} is missing: cargo build --all-features --examples")
    pages = [p.resolve() for p in args.pages] or reading_order()
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="docs-runner-"))
    try:
        problems = keys_in_order(reading_order())
        if problems:
            raise Failure("pages read in order reuse keys:\n  " + "\n  ".join(problems))
        total = compared = 0
        for page in pages:
            run = Page(page, args, work)
            if run.run():
                print(f"{page.relative_to(ROOT)}: {run.ran} commands ran, {run.compared} answers as shown")
            total += run.ran
            compared += run.compared
        if not args.pages:
            # As a reader follows them: one sandbox for all the pages in order.
            session = Session()
            try:
                for page in pages:
                    Page(page, args, work, session).run()
            except Failure as error:
                raise Failure(f"read in order on one sandbox: {error}") from None
            finally:
                session.close()
            print("the pages read in order on one sandbox: every command as its page says")
        if not args.no_verifiers:
            check_verifiers(args, work)
    except Failure as error:
        print(f"docs runner: FAILED\n{error}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"docs runner: {total} commands of {len(pages)} pages ran, {compared} answers as shown, "
        f"in {time.monotonic() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
