"""End to end: the control plane over HTTP/JSON (docs/http-api.md), called with curl.

Herald runs as the component of a real Prosody and a real ejabberd, on the fake LLM
(fake_llm.py), with its HTTP listener on a loopback port picked at run time and two control
tokens: `ops` with every scope and `dashboard` with `read` only (only their SHA-256 are in
the config). Every call goes through the real `curl` binary, the way an operator would make
it; alice is a real XMPP client (slixmpp) whose chat the API then shows. What the tests read
back — curl's output and Herald's audit log — is what an operator would look at.

    tests/e2e/run bazel-bin/component/herald test_http_api
"""

import json
import os
import secrets
import subprocess
import threading
import time
import unittest

from fake_llm import FakeLlm
from http_api import ANSWER, CALL, HeraldOverHttp, curl_program
from servers import Ejabberd, Prosody, wait_until

RECORDED = 10.0   # an audit entry or history line written after the answer that caused it
SLOW = 5          # seconds the fake LLM takes for a message that mentions "slow"

# The tokens are made for this run; the config holds only their SHA-256.
OPS_TOKEN = secrets.token_urlsafe(24)
READ_TOKEN = secrets.token_urlsafe(24)
AUDIT = "data/audit.log"


def parse_events(text):
    """Server-sent events as [(event, data parsed as JSON)]; comments as (":", text)."""
    events = []
    name, data = None, []
    for line in text.split("\n"):
        if line == "":
            if name is not None or data:
                events.append((name or "message", json.loads("\n".join(data))))
            name, data = None, []
        elif line.startswith(":"):
            events.append((":", line[1:].strip()))
        elif line.startswith("event: "):
            name = line[len("event: "):]
        elif line.startswith("data: "):
            data.append(line[len("data: "):])
    return events


class CurlStream:
    """`curl -N -D -` on a streaming method, running in the background; what it has printed so
    far is read by a thread, so the test can wait for an event while the stream stays open.

    The head is printed with `-D -`, not `-i`: curl 7.88 holds `-i`'s headers back until the
    first bytes of the body, and Subscribe's head comes long before its first event."""

    def __init__(self, command):
        self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self._lock = threading.Lock()
        self._out = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        while True:
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return
            with self._lock:
                self._out += chunk

    def output(self):
        with self._lock:
            return self._out.decode("utf-8", errors="replace")

    def head(self):
        """The response's status line and headers once they have arrived, else None."""
        text = self.output()
        end = text.find("\r\n\r\n")
        return None if end < 0 else text[:end]

    def status(self):
        head = self.head()
        return int(head.split(" ", 2)[1]) if head else None

    def events(self):
        """The complete events received so far."""
        text = self.output()
        end = text.find("\r\n\r\n")
        if end < 0:
            return []
        body = text[end + 4:]
        return parse_events(body[:body.rfind("\n\n") + 2]) if "\n\n" in body else []

    def running(self):
        return self.proc.poll() is None

    def wait(self, timeout):
        """Waits for curl to end (the stream ended); its exit code, or None."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        self._reader.join(timeout=5)
        return code

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout=5)
        self.proc.stdout.close()
        self.proc.stderr.close()


class _HttpApiTests(HeraldOverHttp):
    tokens = (("ops", OPS_TOKEN, ["read", "operate", "execute", "admin"]),
              ("dashboard", READ_TOKEN, ["read"]))
    read_token = READ_TOKEN

    def setUp(self):
        self.start_herald(FakeLlm("anthropic", slow_seconds=SLOW))

    # --- curl -------------------------------------------------------------------------------

    def call(self, method, body=None, token=OPS_TOKEN):
        """POST /api/<method> with curl; a Reply (status 0 when nothing answered)."""
        return self.curl(method, body, token)

    def ok(self, method, body=None, token=OPS_TOKEN):
        """A call that must answer 200; its JSON."""
        return self.expect_json(method, self.call(method, body, token))

    def stream(self, method, body, token=OPS_TOKEN):
        """curl -N on a streaming method, in the background; stopped when the test ends."""
        stream = CurlStream(self.curl_command(method, body, token, "--no-buffer",
                                              "--dump-header", "-"))
        self.addCleanup(stream.stop)
        return stream

    # --- reading back -----------------------------------------------------------------------

    def audit_entries(self):
        try:
            with open(os.path.join(self.agent.dir, AUDIT), encoding="utf-8") as f:
                return [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            return []

    # --- the tests --------------------------------------------------------------------------

    def test_get_status_needs_a_token_with_the_scope(self):
        status = self.ok("herald.v1.AdminService/GetStatus", token=READ_TOKEN)
        self.assertTrue(status["version"], status)
        # Protobuf's JSON mapping: lowerCamelCase names, enums by name, int64 as a string,
        # a Duration as seconds with an "s", every field written even at its default.
        self.assertEqual(status["connectionState"], "CONNECTION_STATE_ONLINE")
        self.assertIsInstance(status["messagesReceived"], str)
        self.assertRegex(status["uptime"], r"^\d+(\.\d+)?s$")
        self.assertEqual(status["conversationsBusy"], 0)
        self.assertEqual(status["connection"], f"component {self.herald}")
        # An empty body is {}.
        self.assertEqual(self.ok("herald.v1.AdminService/GetStatus", body="{}",
                                 token=READ_TOKEN)["version"], status["version"])

        reply = self.call("herald.v1.AdminService/GetStatus", token=None)
        self.assertEqual(reply.status, 401, reply)
        self.assertTrue(reply.content_type.startswith("application/json"), reply)
        self.assertEqual(reply.json(), {"code": 16, "status": "UNAUTHENTICATED",
                                        "message": "missing bearer token in the authorization "
                                                   "metadata"})
        reply = self.call("herald.v1.AdminService/GetStatus", token="not-a-token")
        self.assertEqual(reply.status, 401, reply)
        self.assertEqual(reply.json()["message"], "unknown token")

        reply = self.call("herald.v1.AdminService/ReloadConfig", token=READ_TOKEN)
        self.assertEqual(reply.status, 403, reply)
        error = reply.json()
        self.assertEqual((error["code"], error["status"]), (7, "PERMISSION_DENIED"))
        self.assertIn("token 'dashboard' lacks the 'admin' scope", error["message"])

        # A stream the token may not open is a plain refusal, not an event stream.
        reply = self.call("herald.v1.SessionService/Converse", token=READ_TOKEN,
                          body='{"conversation": "e2e-http", "text": "hello"}')
        self.assertEqual(reply.status, 403, reply)
        self.assertTrue(reply.content_type.startswith("application/json"), reply)
        self.assertEqual(reply.json()["status"], "PERMISSION_DENIED")

        # A body that is not the request message: 400, naming the unknown field.
        reply = self.call("herald.v1.SessionService/ListSessions", body='{"pageSise": 5}',
                          token=READ_TOKEN)
        self.assertEqual(reply.status, 400, reply)
        self.assertEqual(reply.json()["status"], "INVALID_ARGUMENT")
        self.assertIn("pageSise", reply.json()["message"])

    def test_a_chat_shows_in_list_sessions_and_get_history(self):
        self.assertEqual(self.ask("hello from alice"), "you said: hello from alice")

        listed = self.ok("herald.v1.SessionService/ListSessions",
                         body='{"kind": "CONVERSATION_KIND_DIRECT", "pageSize": 10}',
                         token=READ_TOKEN)
        keys = [c["key"] for c in listed["conversations"]]
        self.assertIn({"kind": "CONVERSATION_KIND_DIRECT", "address": "alice@localhost",
                       "thread": ""}, keys, listed)
        self.assertEqual(listed["nextPageToken"], "")

        request = json.dumps({"key": {"kind": "CONVERSATION_KIND_DIRECT",
                                      "address": "alice@localhost"}, "page_size": 10})
        history = {}

        def both_recorded():
            nonlocal history
            history = self.ok("herald.v1.SessionService/GetHistory", body=request,
                              token=READ_TOKEN)
            texts = [(e["role"], e["text"]) for e in history["entries"]]
            return (("user", "hello from alice") in texts
                    and ("assistant", "you said: hello from alice") in texts)

        self.assertTrue(wait_until(both_recorded, RECORDED, interval=0.2),
                        f"{history}\n{self.diagnosis()}")
        for entry in history["entries"]:
            self.assertRegex(entry["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")

    def test_converse_streams_the_run_as_server_sent_events(self):
        stream = self.stream("herald.v1.SessionService/Converse",
                             '{"conversation": "e2e-http", "text": "what time is it?"}')
        self.assertEqual(stream.wait(CALL), 0, f"{stream.output()}\n{self.diagnosis()}")
        self.assertEqual(stream.status(), 200, stream.output())
        self.assertIn("Content-Type: text/event-stream", stream.head())
        events = stream.events()
        self.assertEqual(events[-1], ("end", {"code": 0, "status": "OK", "message": ""}),
                         stream.output())
        runs = [data for name, data in events if name == "message"]
        self.assertEqual([name for name, _ in events if name not in (":", "message", "end")],
                         [], stream.output())
        kinds = [next(k for k in e if k not in ("runId", "conversation", "time")) for e in runs]
        self.assertEqual(kinds[0], "started", stream.output())
        self.assertIn("toolStarted", kinds, stream.output())
        self.assertIn("toolCompleted", kinds, stream.output())
        self.assertEqual(kinds[-1], "completed", stream.output())
        self.assertIn("The time is", runs[-1]["completed"]["text"])
        self.assertEqual(runs[-1]["conversation"], "api:e2e-http")
        self.assertEqual(runs[-1]["completed"]["model"], "anthropic:fake")

        # The events come as they happen: the run's start arrives while the model still
        # thinks (the fake takes SLOW seconds to answer a message that mentions "slow").
        stream = self.stream("herald.v1.SessionService/Converse",
                             '{"conversation": "e2e-http", "text": "a slow one"}')
        self.assertTrue(wait_until(lambda: stream.events() or not stream.running(), ANSWER),
                        f"no event within {ANSWER:.0f}s: {stream.output()}\n{self.diagnosis()}")
        first = stream.events()
        self.assertTrue(first and "started" in first[0][1], stream.output())
        self.assertTrue(stream.running(), f"the stream ended before the slow answer came "
                                          f"(it should take {SLOW}s): {stream.output()}")
        self.assertNotIn("completed", json.dumps(first), stream.output())
        self.assertEqual(stream.wait(CALL), 0, stream.output())
        events = stream.events()
        self.assertEqual(events[-1][0], "end", stream.output())
        self.assertEqual(events[-2][1]["completed"]["text"], "you said: a slow one",
                         stream.output())

    def test_subscribe_in_the_background_receives_a_chat_run(self):
        stream = self.stream("herald.v1.AdminService/Subscribe",
                             '{"jid": "alice@localhost", "types": ["EVENT_TYPE_RUN_STARTED", '
                             '"EVENT_TYPE_RUN_COMPLETED"]}', token=READ_TOKEN)
        # The head comes once the call is under way; the subscription is in place once
        # Herald counts a subscriber.
        self.assertTrue(wait_until(lambda: stream.head() or not stream.running(), ANSWER),
                        stream.output())
        self.assertEqual(stream.status(), 200, stream.output())
        self.assertIn("Content-Type: text/event-stream", stream.head())
        self.assertTrue(wait_until(lambda: self.ok("herald.v1.AdminService/GetStatus",
                                                   token=READ_TOKEN)["subscribers"] >= 1,
                                   ANSWER, interval=0.1),
                        f"no subscriber\n{stream.output()}\n{self.diagnosis()}")

        self.assertEqual(self.ask("tell the subscriber"), "you said: tell the subscriber")

        def of_type(kind):
            return [data for name, data in stream.events()
                    if name == "message" and data.get("type") == kind]

        self.assertTrue(wait_until(lambda: of_type("EVENT_TYPE_RUN_COMPLETED"), ANSWER),
                        f"{stream.output()}\n{self.diagnosis()}")
        started = of_type("EVENT_TYPE_RUN_STARTED")
        completed = of_type("EVENT_TYPE_RUN_COMPLETED")
        self.assertEqual(len(started), 1, stream.output())
        self.assertEqual(started[0]["jid"], "alice@localhost")
        self.assertEqual(started[0]["conversation"], "direct:alice@localhost")
        self.assertEqual(completed[0]["runId"], started[0]["runId"])
        self.assertIsInstance(started[0]["sequence"], str)  # uint64: a string in JSON
        self.assertTrue(stream.running(), "Subscribe ends only when the client leaves")

    def test_calls_are_audited_with_the_token_name_and_never_the_token(self):
        self.ok("herald.v1.AdminService/GetStatus", token=READ_TOKEN)
        self.assertEqual(self.call("herald.v1.AdminService/GetStatus", token=None).status, 401)
        self.assertEqual(self.call("herald.v1.AdminService/ReloadConfig",
                                   token=READ_TOKEN).status, 403)
        self.ok("herald.v1.AdminService/UpdateAllowlist", body='{"addJids": ["bob@localhost"]}')
        stream = self.stream("herald.v1.SessionService/Converse",
                             '{"conversation": "e2e-audit", "text": "hello"}')
        self.assertEqual(stream.wait(CALL), 0, stream.output())
        verified = self.ok("herald.v1.AdminService/VerifyAudit")
        self.assertTrue(verified["ok"], verified)
        self.assertGreater(int(verified["entries"]), 0, verified)

        # (A call refused for its scope is checked in the next test.)
        wanted = [("dashboard", "/herald.v1.AdminService/GetStatus", "OK"),
                  ("anonymous", "/herald.v1.AdminService/GetStatus", "UNAUTHENTICATED"),
                  ("ops", "/herald.v1.AdminService/UpdateAllowlist", "OK"),
                  ("ops", "/herald.v1.SessionService/Converse", "OK")]

        def all_there():
            seen = {(e["actor"], e["action"], e["outcome"]) for e in self.audit_entries()}
            return all(w in seen for w in wanted)

        self.assertTrue(wait_until(all_there, RECORDED, interval=0.1),
                        json.dumps(self.audit_entries(), indent=1))
        converse = [e for e in self.audit_entries()
                    if e["action"] == "/herald.v1.SessionService/Converse"]
        self.assertEqual(converse[0]["target"], "api:e2e-audit")
        allowlist = [e for e in self.audit_entries()
                     if e["action"] == "/herald.v1.AdminService/UpdateAllowlist"]
        self.assertEqual(allowlist[0]["target"], "bob@localhost")
        with open(os.path.join(self.agent.dir, AUDIT), encoding="utf-8") as f:
            text = f.read()
        for token in (OPS_TOKEN, READ_TOKEN):
            self.assertNotIn(token, text, "a token is in the audit log")
            self.assertNotIn(token, self.agent.log(), "a token is in Herald's log")

    def test_a_call_refused_for_its_scope_is_audited_under_the_token_name(self):
        # docs/api.md: the actor is "the token's name, or `anonymous` when no token matched".
        reply = self.call("herald.v1.AdminService/ReloadConfig", token=READ_TOKEN)
        self.assertEqual(reply.status, 403, reply)
        self.ok("herald.v1.AdminService/VerifyAudit")  # flushes the log

        def refused():
            return [e for e in self.audit_entries()
                    if e["action"] == "/herald.v1.AdminService/ReloadConfig"]

        self.assertTrue(wait_until(refused, RECORDED, interval=0.1), self.audit_entries())
        entry = refused()[0]
        self.assertEqual(entry["outcome"], "PERMISSION_DENIED")
        self.assertIn("token 'dashboard' lacks the 'admin' scope", entry["detail"])
        self.assertEqual(entry["actor"], "dashboard", entry)

    def test_the_index_lists_the_methods_without_a_token(self):
        result = subprocess.run([curl_program(), "--silent", "--show-error", "--fail",
                                 "--max-time", str(int(CALL)), f"{self.base_url}/api/"],
                                capture_output=True, text=True, timeout=CALL + 10)
        self.assertEqual(result.returncode, 0, result.stderr)
        methods = {m["path"]: m for m in json.loads(result.stdout)["methods"]}
        self.assertEqual(methods["/api/herald.v1.AdminService/GetStatus"],
                         {"path": "/api/herald.v1.AdminService/GetStatus", "scope": "read",
                          "streaming": False, "http": True})
        self.assertTrue(methods["/api/herald.v1.SessionService/Converse"]["streaming"])
        self.assertFalse(methods["/api/herald.v1.HookService/Attach"]["http"])
        reply = self.call("herald.v1.HookService/Attach", body="{}")
        self.assertEqual(reply.status, 501, reply)
        self.assertEqual(reply.json()["status"], "UNIMPLEMENTED")


class ProsodyHttpApiTest(_HttpApiTests, unittest.TestCase):
    server_class = Prosody


class EjabberdHttpApiTest(_HttpApiTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
