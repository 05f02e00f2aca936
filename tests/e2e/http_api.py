"""What the end-to-end tests of the HTTP/JSON API share (test_http_api, test_traces): curl,
the control tokens' config section, and a Herald on the fake LLM with alice connected, read
back over /api/ with the real `curl` binary."""

import hashlib
import json
import os
import shutil
import subprocess
import time
import unittest

from agent import Agent, agent_program, component_config, runtime_sections
from client import Client
from fake_llm import fake_llm_program
from servers import free_port, tail

# Generous bounds: they only matter when something is broken.
ONLINE = 20.0     # Herald started, its HTTP listener up, its XMPP stream online, one /ping
ANSWER = 15.0     # one turn through the fake LLM (two calls for a tool round)
CALL = 30.0       # one curl call (curl's own --max-time)
MODEL = "anthropic:fake"


def curl_program():
    path = shutil.which("curl")
    if path is None:
        raise RuntimeError("curl is missing (apt-get install curl)")
    return path


def control_section(http_port, tokens, socket="data/control.sock", audit="data/audit.log"):
    """[http] on `http_port` and [control] with `tokens`: (name, bearer value, scopes) each,
    of which only the SHA-256 goes into the config."""
    section = f"""
[http]
listen = "127.0.0.1:{http_port}"

[control]
listen = "unix:{socket}"
audit_path = "{audit}"
state_path = "data/runtime-state.json"
"""
    for name, token, scopes in tokens:
        section += f"""
[[control.tokens]]
name = "{name}"
token_sha256 = "{hashlib.sha256(token.encode()).hexdigest()}"
scopes = {json.dumps(scopes)}
"""
    return section


class Reply:
    """One unary answer as curl saw it: the HTTP status, Content-Type and body."""

    def __init__(self, status, content_type, body, stderr):
        self.status = status
        self.content_type = content_type
        self.body = body
        self.stderr = stderr

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return f"HTTP {self.status} ({self.content_type}): {self.body}{self.stderr}"


class HeraldOverHttp:
    """A mixin for a unittest.TestCase class whose `server_class` is a server of servers.py:
    starts the server once per class, and for a test Herald on the fake LLM with the HTTP API
    (start_herald) and alice connected. The class sets `tokens` (see control_section) and
    `read_token` (a token with the read scope, for waiting until Herald is online)."""

    server_class = None
    tokens = ()
    read_token = None

    @classmethod
    def setUpClass(cls):
        if os.environ.get("HERALD_E2E_AGENT") == "echo":
            raise unittest.SkipTest("the echo stand-in has no control plane")
        agent_program()     # a wrong HERALD_E2E_AGENT fails here, before any server starts
        fake_llm_program()  # and so does a missing fake LLM
        curl_program()
        cls.server = cls.server_class()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    @property
    def herald(self):
        return self.server.component_domain

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.http_port}"

    def start_herald(self, llm, extra_config=""):
        """Herald on `llm` (a FakeLlm, stopped when the test ends) with the HTTP API;
        `extra_config` is appended to its config."""
        self.llm = llm
        self.addCleanup(self.llm.stop)
        llm_keys = {"default": MODEL, "max_retries": 0,
                    "connect_timeout_seconds": 2, "request_timeout_seconds": 20,
                    "anthropic": {"base_url": self.llm.base_url, "api_key": "e2e-not-a-secret"}}
        self.http_port = free_port()
        config = (component_config(self.server) + runtime_sections(llm=llm_keys)
                  + control_section(self.http_port, self.tokens) + extra_config)
        self.agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(self.agent.stop)
        self.alice = Client(self.server, "alice")
        self.alice.connect()
        self.addCleanup(self.alice.close)
        self.wait_online()

    def curl_command(self, method, body, token, *options):
        """curl POSTing `body` (JSON text, or None for none) to /api/<method>."""
        command = [curl_program(), "--silent", "--show-error", "--max-time", str(int(CALL)),
                   *options, "-X", "POST", f"{self.base_url}/api/{method}"]
        if token is not None:
            command += ["-H", f"Authorization: Bearer {token}"]
        if body is not None:
            command += ["-H", "Content-Type: application/json", "--data-binary", body]
        return command

    def curl(self, method, body, token):
        """POST /api/<method> with curl; a Reply (status 0 when nothing answered)."""
        command = self.curl_command(method, body, token,
                                    "--write-out", "\n%{http_code} %{content_type}")
        result = subprocess.run(command, capture_output=True, text=True, timeout=CALL + 10)
        body_text, _, last = result.stdout.rpartition("\n")
        code, _, content_type = last.partition(" ")
        return Reply(int(code or 0), content_type, body_text, result.stderr)

    def expect_json(self, method, reply):
        """A reply that must be 200 with JSON; its JSON."""
        self.assertEqual(reply.status, 200, f"{method}: {reply}\n{self.diagnosis()}")
        self.assertTrue(reply.content_type.startswith("application/json"), reply)
        return reply.json()

    def diagnosis(self):
        return "\n".join([f"--- the agent's log ---\n{self.agent.log()}",
                          f"--- the fake LLM's requests ---\n{self.llm.requests()}",
                          f"--- tail of {self.server.name}'s log ---\n"
                          f"{tail(self.server.log_file, 15)}"])

    def wait_online(self):
        """Until GetStatus answers over HTTP with the stream online and Herald answers alice's
        /ping; fails at once if Herald exits."""
        deadline = time.monotonic() + ONLINE
        while time.monotonic() < deadline:
            if self.agent.exit_code() is not None:
                self.fail(f"herald exited with {self.agent.exit_code()}\n{self.diagnosis()}")
            reply = self.curl("herald.v1.AdminService/GetStatus", None, self.read_token)
            if (reply.status == 200
                    and reply.json().get("connectionState") == "CONNECTION_STATE_ONLINE"
                    and self.alice.ask(self.herald, "/ping", timeout=1.0) is not None):
                self.alice.discard_pending()
                return
            time.sleep(0.1)
        self.fail(f"herald was not online over HTTP and XMPP within {ONLINE:.0f}s\n"
                  f"{self.diagnosis()}")

    def ask(self, body):
        reply = self.alice.ask(self.herald, body, timeout=ANSWER)
        self.assertIsNotNone(reply, f"no answer to {body!r}\n{self.diagnosis()}")
        return reply
