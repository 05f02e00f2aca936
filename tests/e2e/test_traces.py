"""End to end: run traces (docs/operations.md, "Traces"), read over the HTTP/JSON API with
curl and exported to an OTLP/HTTP collector.

Herald runs as the component of a real Prosody and a real ejabberd, on the fake LLM
(fake_llm.py: "what time is it?" makes it call current_time, then it answers "The time is
<result>."), with its HTTP listener on a loopback port picked at run time and three control
tokens: `ops` with every scope, `dashboard` with `read` only and `operator` with every scope
but `read` (only their SHA-256 are in the config). alice is a real XMPP client (slixmpp); the
trace of her chat is read back with AdminService.ListTraces/GetTrace through the real `curl`
binary, and, with `[traces] otlp_endpoint`, as the OTLP/HTTP JSON a fake collector (a Python
http.server on a loopback port picked at run time) receives.

    tests/e2e/run bazel-bin/component/herald test_traces
"""

import calendar
import http.server
import json
import re
import secrets
import threading
import time
import unittest

from fake_llm import FakeLlm
from http_api import MODEL, HeraldOverHttp
from servers import Ejabberd, Prosody, wait_until

# Generous bounds: they only matter when something is broken.
TRACED = 10.0     # a run's trace finished after its answer (the memory write comes last)
EXPORTED = 15.0   # a finished trace at the collector (export_interval_seconds = 1, and a
                  # refused request is retried twice with backoff before the warning)

OPS_TOKEN = secrets.token_urlsafe(24)
READ_TOKEN = secrets.token_urlsafe(24)
NO_READ_TOKEN = secrets.token_urlsafe(24)

CONVERSATION = "direct:alice@localhost"
LIST = "herald.v1.AdminService/ListTraces"
GET = "herald.v1.AdminService/GetTrace"

_RFC3339 = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$")


def nanos(timestamp):
    """A google.protobuf.Timestamp in its JSON form ("2025-01-02T03:04:05.123456789Z") as
    Unix nanoseconds."""
    match = _RFC3339.match(timestamp)
    if match is None:
        raise AssertionError(f"not an RFC 3339 UTC timestamp: {timestamp!r}")
    seconds = calendar.timegm(time.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S"))
    return seconds * 1_000_000_000 + int((match.group(2) or "").ljust(9, "0"))


def attributes_of(span):
    """The API's attributes [{key, value}] as a dict."""
    return {a["key"]: a["value"] for a in span["attributes"]}


def otlp_attributes(attributes):
    """OTLP's [{key, value: {stringValue}}] as a dict; raises on any other value type."""
    out = {}
    for a in attributes:
        if set(a["value"]) != {"stringValue"}:
            raise AssertionError(f"not a string attribute: {a}")
        out[a["key"]] = a["value"]["stringValue"]
    return out


class FakeCollector:
    """An OTLP/HTTP receiver on 127.0.0.1 (port chosen by the kernel): records each POST —
    path, Content-Type, the body parsed as JSON (None when it is not JSON), the status it
    answered — and answers `status` (200 unless a test sets another) with an empty
    ExportTraceServiceResponse."""

    def __init__(self):
        self._lock = threading.Lock()
        self._posts = []
        self._status = 200
        collector = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    raw = b""
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                        if size == 0:
                            self.rfile.readline()
                            break
                        raw += self.rfile.read(size)
                        self.rfile.readline()
                else:
                    raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with collector._lock:
                    status = collector._status
                    collector._posts.append({"path": self.path,
                                             "content_type": self.headers.get("Content-Type"),
                                             "body": body, "raw": raw, "status": status})
                answer = b"{}"
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}/v1/traces"

    def set_status(self, status):
        with self._lock:
            self._status = status

    def posts(self):
        with self._lock:
            return list(self._posts)

    def posts_with(self, trace_id):
        """The posts whose body holds a span of trace_id."""
        return [p for p in self.posts() if trace_id in spans_by_trace(p["body"])]

    def stop(self):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def spans_by_trace(body):
    """An OTLP body's spans grouped by traceId (empty for anything that is not one)."""
    out = {}
    try:
        for resource in body["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    out.setdefault(span["traceId"], []).append(span)
    except (KeyError, TypeError):
        pass
    return out


class _TraceTests(HeraldOverHttp):
    tokens = (("ops", OPS_TOKEN, ["read", "operate", "execute", "admin"]),
              ("dashboard", READ_TOKEN, ["read"]),
              ("operator", NO_READ_TOKEN, ["operate", "execute", "admin"]))
    read_token = READ_TOKEN

    def start_herald(self, traces=""):
        """Herald on the fake LLM with the HTTP API; `traces` is appended to its config."""
        super().start_herald(FakeLlm("anthropic"), traces)

    # --- curl -------------------------------------------------------------------------------

    def call(self, method, body=None, token=OPS_TOKEN):
        """POST /api/<method> with `body` (a dict) as JSON; a Reply."""
        return self.curl(method, None if body is None else json.dumps(body), token)

    def ok(self, method, body=None, token=READ_TOKEN):
        return self.expect_json(method, self.call(method, body, token))

    def traces(self):
        """ListTraces of alice's conversation, newest first."""
        return self.ok(LIST, {"conversation": CONVERSATION, "limit": 100})["traces"]

    def trace_ids(self):
        return {t["traceId"] for t in self.traces()}

    def next_finished_trace(self, before):
        """Polls ListTraces until a finished trace whose id is not in `before` is listed;
        fails after TRACED seconds. Exactly one new trace is expected (one message, one run)."""
        new = []

        def finished():
            nonlocal new
            new = [t for t in self.traces() if t["traceId"] not in before]
            return any(t["finished"] for t in new)

        self.assertTrue(wait_until(finished, TRACED, interval=0.1),
                        f"no new finished trace of {CONVERSATION} within {TRACED:.0f}s: "
                        f"{json.dumps(new, indent=1)}\n{self.diagnosis()}")
        self.assertEqual(len(new), 1, f"one message, one run: {json.dumps(new, indent=1)}")
        return new[0]

    # --- asking ---------------------------------------------------------------------------

    def ask_the_time(self):
        """alice asks the time: the model calls current_time, then answers with its result;
        returns the tool's result as the answer quotes it."""
        reply = self.ask("what time is it?")
        match = re.fullmatch(r"The time is (.+)\.", reply, re.DOTALL)
        self.assertIsNotNone(match, f"{reply!r}\n{self.diagnosis()}")
        return match.group(1)

    # --- the tests --------------------------------------------------------------------------

    def test_a_chat_with_a_tool_call_is_one_trace_of_its_spans(self):
        self.start_herald()
        before = self.trace_ids()
        tool_result = self.ask_the_time()

        listed = self.next_finished_trace(before)
        self.assertRegex(listed["traceId"], r"^[0-9a-f]{32}$")
        self.assertTrue(listed["runId"], listed)
        self.assertEqual(listed["conversation"], CONVERSATION)
        self.assertEqual(listed["root"]["name"], "turn", listed)
        self.assertEqual(listed["root"]["parentSpanId"], "", listed)
        self.assertEqual(listed["root"]["status"], "SPAN_STATUS_OK", listed)
        self.assertEqual(listed["spans"], [], "ListTraces gives only the root")
        self.assertEqual(listed["droppedSpans"], 0, listed)

        trace = self.ok(GET, {"id": listed["traceId"]})
        dump = json.dumps(trace, indent=1)
        for key in ("traceId", "runId", "conversation", "finished", "root", "spanCount"):
            self.assertEqual(trace[key], listed[key], f"{key}: {dump}")
        spans = trace["spans"]
        self.assertEqual(len(spans), trace["spanCount"], dump)
        # Every span of the run, the root first, in the order the run opened them.
        self.assertEqual([s["name"] for s in spans],
                         ["turn", "memory.read", f"chat {MODEL}", "tool current_time",
                          f"chat {MODEL}", "memory.write"], dump)
        root, read, asks, tool, answers, write = spans
        self.assertEqual(root, listed["root"])
        self.assertEqual(len({s["spanId"] for s in spans}), len(spans), dump)
        for span in spans:
            self.assertRegex(span["spanId"], r"^[0-9a-f]{16}$", dump)
            self.assertEqual(span["status"], "SPAN_STATUS_OK", f"{span['name']}: {dump}")
            self.assertEqual(span["statusMessage"], "", dump)
        for span in spans[1:]:
            self.assertEqual(span["parentSpanId"], root["spanId"], f"{span['name']}: {dump}")

        # Times: every span closed, none before its start, all inside the turn, and the
        # run's steps one after the other.
        start = {s["spanId"]: nanos(s["startTime"]) for s in spans}
        end = {s["spanId"]: nanos(s["endTime"]) for s in spans}
        for span in spans:
            self.assertGreaterEqual(end[span["spanId"]], start[span["spanId"]],
                                    f"{span['name']}: {dump}")
            self.assertGreaterEqual(start[span["spanId"]], start[root["spanId"]],
                                    f"{span['name']} starts before the turn: {dump}")
            self.assertLessEqual(end[span["spanId"]], end[root["spanId"]],
                                 f"{span['name']} ends after the turn: {dump}")
        for first, then in zip(spans[1:], spans[2:]):
            self.assertLessEqual(end[first["spanId"]], start[then["spanId"]],
                                 f"{first['name']} overlaps {then['name']}: {dump}")

        # The model calls: GenAI attributes, tokens as the fake reported them (10 in each).
        input_tokens = output_tokens = 0
        for call in (asks, answers):
            attributes = attributes_of(call)
            self.assertEqual(attributes.get("gen_ai.request.model"), MODEL, dump)
            self.assertEqual(attributes.get("gen_ai.system"), "anthropic", dump)
            self.assertTrue(attributes.get("gen_ai.response.model"), dump)
            self.assertEqual(attributes.get("gen_ai.usage.input_tokens"), "10", dump)
            self.assertRegex(attributes.get("gen_ai.usage.output_tokens", ""), r"^[1-9]\d*$",
                             dump)
            input_tokens += int(attributes["gen_ai.usage.input_tokens"])
            output_tokens += int(attributes["gen_ai.usage.output_tokens"])
        # The turn's tokens are the sum over its model calls.
        self.assertEqual(attributes_of(root).get("gen_ai.usage.input_tokens"),
                         str(input_tokens), dump)
        self.assertEqual(attributes_of(root).get("gen_ai.usage.output_tokens"),
                         str(output_tokens), dump)

        # The tool call: what the model asked for and what it read back.
        attributes = attributes_of(tool)
        self.assertEqual(attributes.get("gen_ai.tool.name"), "current_time", dump)
        self.assertTrue(attributes.get("gen_ai.tool.call.id"), dump)
        self.assertEqual(json.loads(attributes.get("herald.tool.arguments", "null")), {}, dump)
        self.assertEqual(attributes.get("herald.tool.result"), tool_result, dump)
        requests = self.llm.requests()
        self.assertEqual(len(requests), 2, requests)
        self.assertEqual(requests[1]["tool_result"], tool_result, requests)

        # The same trace by its run id; an unknown id is NOT_FOUND.
        self.assertEqual(self.ok(GET, {"id": listed["runId"]}), trace)
        reply = self.call(GET, {"id": "0" * 32}, token=READ_TOKEN)
        self.assertEqual(reply.status, 404, reply)
        self.assertEqual(reply.json()["status"], "NOT_FOUND", reply)

    def test_finished_traces_go_to_the_otlp_collector(self):
        collector = FakeCollector()
        self.addCleanup(collector.stop)
        self.start_herald(f"""
[traces]
otlp_endpoint = "{collector.endpoint}"
export_interval_seconds = 1
""")
        version = self.ok("herald.v1.AdminService/GetStatus")["version"]
        before = self.trace_ids()
        self.ask_the_time()
        listed = self.next_finished_trace(before)
        trace_id = listed["traceId"]
        trace = self.ok(GET, {"id": trace_id})

        self.assertTrue(wait_until(lambda: collector.posts_with(trace_id), EXPORTED,
                                   interval=0.1),
                        f"trace {trace_id} did not reach the collector within "
                        f"{EXPORTED:.0f}s; it got {collector.posts()}\n{self.diagnosis()}")
        posts = collector.posts_with(trace_id)
        self.assertEqual(len(posts), 1, posts)
        post = posts[0]
        self.assertEqual(post["path"], "/v1/traces", post)
        self.assertEqual(post["content_type"], "application/json", post)
        body = post["body"]
        dump = json.dumps(body, indent=1)
        self.assertEqual(len(body["resourceSpans"]), 1, dump)
        resource = otlp_attributes(body["resourceSpans"][0]["resource"]["attributes"])
        self.assertEqual(resource, {"service.name": "herald", "service.version": version,
                                    "service.instance.id": self.herald}, dump)
        self.assertEqual(body["resourceSpans"][0]["scopeSpans"][0]["scope"]["name"], "herald",
                         dump)

        spans = spans_by_trace(body)[trace_id]
        # The spans GetTrace shows, no more, no fewer.
        self.assertEqual(sorted((s["spanId"], s["name"]) for s in spans),
                         sorted((s["spanId"], s["name"]) for s in trace["spans"]), dump)
        roots = [s for s in spans if s["name"] == "turn"]
        self.assertEqual(len(roots), 1, dump)
        root = roots[0]
        self.assertEqual(root["spanId"], trace["root"]["spanId"], dump)
        self.assertFalse(root.get("parentSpanId"), dump)
        self.assertEqual(root["kind"], 2, dump)  # SERVER
        root_attributes = otlp_attributes(root["attributes"])
        self.assertEqual(root_attributes.get("herald.run_id"), listed["runId"], dump)
        self.assertEqual(root_attributes.get("herald.conversation"), CONVERSATION, dump)
        for span in spans:
            self.assertRegex(span["startTimeUnixNano"], r"^\d+$", dump)
            self.assertRegex(span["endTimeUnixNano"], r"^\d+$", dump)
            self.assertGreaterEqual(int(span["endTimeUnixNano"]), int(span["startTimeUnixNano"]),
                                    dump)
            self.assertEqual(span["status"]["code"], 1, dump)  # OK
            otlp_attributes(span["attributes"])
            if span is not root:
                self.assertEqual(span["parentSpanId"], root["spanId"], f"{span['name']}: {dump}")
                self.assertEqual(span["kind"], 1, dump)  # INTERNAL
        # The same times as GetTrace's.
        by_id = {s["spanId"]: s for s in trace["spans"]}
        for span in spans:
            self.assertEqual(int(span["startTimeUnixNano"]),
                             nanos(by_id[span["spanId"]]["startTime"]), dump)
            self.assertEqual(int(span["endTimeUnixNano"]),
                             nanos(by_id[span["spanId"]]["endTime"]), dump)

        # The collector fails: chats go on, the refused trace is dropped with a warning.
        collector.set_status(500)
        before = self.trace_ids()
        self.assertEqual(self.ask("hello while the collector fails"),
                         "you said: hello while the collector fails")
        refused = self.next_finished_trace(before)["traceId"]
        warning = f"traces: the collector at {collector.endpoint} did not take"

        def warned():
            return [line for line in self.agent.log().splitlines()
                    if warning in line and "HTTP 500" in line]

        self.assertTrue(wait_until(warned, EXPORTED, interval=0.1),
                        f"no warning about the refused export within {EXPORTED:.0f}s; the "
                        f"collector got {[p['status'] for p in collector.posts()]}\n"
                        f"{self.diagnosis()}")
        self.assertTrue(warned()[0].startswith("W"), warned())
        attempts = collector.posts_with(refused)
        self.assertTrue(attempts and all(p["status"] == 500 for p in attempts), attempts)
        self.assertLessEqual(len(attempts), 3, "the first attempt and two retries, no more")
        self.assertEqual(self.ask("still there?"), "you said: still there?")
        self.assertIsNone(self.agent.exit_code(), self.diagnosis())

        # The collector is back: the next trace goes, the refused one is not sent again.
        collector.set_status(200)
        before = self.trace_ids()
        self.assertEqual(self.ask("and now?"), "you said: and now?")
        after = self.next_finished_trace(before)["traceId"]
        self.assertTrue(wait_until(lambda: [p for p in collector.posts_with(after)
                                            if p["status"] == 200], EXPORTED, interval=0.1),
                        f"trace {after} did not reach the collector once it answered 200 "
                        f"again\n{self.diagnosis()}")
        self.assertEqual([p for p in collector.posts_with(refused) if p["status"] == 200], [],
                         "a refused trace is dropped, not sent again")
        self.assertEqual([p for p in collector.posts() if p["body"] is None], [],
                         "every request's body is JSON")

    def test_reading_traces_needs_the_read_scope(self):
        self.start_herald()
        self.assertEqual(self.ok(LIST, {"conversation": CONVERSATION}), {"traces": []})

        for method, body in ((LIST, {}), (GET, {"id": "0" * 32})):
            reply = self.call(method, body, token=NO_READ_TOKEN)
            self.assertEqual(reply.status, 403, f"{method}: {reply}")
            self.assertTrue(reply.content_type.startswith("application/json"), reply)
            error = reply.json()
            self.assertEqual((error["code"], error["status"]), (7, "PERMISSION_DENIED"), reply)
            self.assertIn("token 'operator' lacks the 'read' scope", error["message"], reply)

            reply = self.call(method, body, token=None)
            self.assertEqual(reply.status, 401, f"{method}: {reply}")
            self.assertEqual(reply.json()["status"], "UNAUTHENTICATED", reply)


class ProsodyTracesTest(_TraceTests, unittest.TestCase):
    server_class = Prosody


class EjabberdTracesTest(_TraceTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
