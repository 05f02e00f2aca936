"""End to end: the gRPC control plane and heraldctl against the real Herald and Prosody.

Herald runs as Prosody's component with the fake LLM (fake_llm.py) and its control plane on
a Unix socket in its folder; heraldctl (//tools/heraldctl, taken from the same bazel-bin as
the herald binary, or HERALD_E2E_HERALDCTL) talks to it with a bearer token whose SHA-256
is in the config, the way an operator would.

    tests/e2e/run bazel-bin/component/herald test_control
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from agent import Agent, agent_program, component_config, runtime_sections
from client import Client
from fake_llm import FakeLlm, fake_llm_program
from memory_files import user_folder
from servers import Prosody, tail, wait_until

ONLINE = 20.0
ANSWER = 15.0
# How long a JID that is not allowed listens for a reply that must not come. An allowed /ping
# is answered within milliseconds on loopback (no model is involved), and an answer to a
# refused one would come as fast: 3 s is hundreds of times more.
SILENCE = 3.0
# How long the fake LLM is watched for a request that must not come once Herald has answered
# that a limit is reached. Herald checks the limit where it would call the model, so a call
# that went ahead anyway is sent before or beside that answer, over loopback to a fake that
# answers and logs it within milliseconds: 1 s is two orders of magnitude more.
LLM_SILENCE = 1.0
TOKEN = "e2e-operator-token"  # the bearer token; only its SHA-256 is in the config
SOCKET = "data/control.sock"  # relative to the agent's folder


def heraldctl_program():
    path = os.environ.get("HERALD_E2E_HERALDCTL", "")
    if not path:
        agent = os.environ.get("HERALD_E2E_AGENT", "")
        if agent and agent != "echo":
            bazel_bin = os.path.dirname(os.path.dirname(os.path.abspath(agent)))
            path = os.path.join(bazel_bin, "tools", "heraldctl", "heraldctl")
    if not path or not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise RuntimeError(f"heraldctl is missing ({path or 'HERALD_E2E_HERALDCTL unset'}): "
                           "build //tools/heraldctl in the same output base as //component:herald")
    return os.path.abspath(path)


def run_heraldctl(agent_dir, *args, token=TOKEN, timeout=30):
    """Runs heraldctl against the control socket of the agent in `agent_dir`, with `token`
    (None: no --token) and without the caller's HERALD_TOKEN; the CompletedProcess."""
    env = dict(os.environ)
    env.pop("HERALD_TOKEN", None)
    command = [heraldctl_program(), "--target", f"unix:{os.path.join(agent_dir, SOCKET)}"]
    if token is not None:
        command += ["--token", token]
    return subprocess.run(command + list(args), capture_output=True, text=True, timeout=timeout,
                          env=env)


def control_section(daily_tokens=100000):
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    return f"""
[quota]
daily_tokens = {daily_tokens}
path = "data/ledger.db"

[control]
listen = "unix:{SOCKET}"
audit_path = "data/audit.log"
state_path = "data/runtime-state.json"

[[control.tokens]]
name = "ops"
token_sha256 = "{digest}"
scopes = ["read", "operate", "execute", "admin"]
"""


class ProsodyControlTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get("HERALD_E2E_AGENT") == "echo":
            raise unittest.SkipTest("the echo stand-in has no control plane")
        agent_program()
        fake_llm_program()
        heraldctl_program()
        cls.server = Prosody()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    @property
    def herald(self):
        return self.server.component_domain

    def start(self, daily_tokens=100000, agent_dir=None):
        llm = getattr(self, "llm", None)
        if llm is None:
            llm = FakeLlm("anthropic")
            self.addCleanup(llm.stop)
            self.llm = llm
        llm_keys = {"default": "anthropic:fake", "max_retries": 0,
                    "connect_timeout_seconds": 2, "request_timeout_seconds": 20,
                    "anthropic": {"base_url": llm.base_url, "api_key": "e2e-not-a-secret"}}
        config = (component_config(self.server) + runtime_sections(llm=llm_keys)
                  + control_section(daily_tokens))
        agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(agent.stop)
        self.agent = agent
        self.wait_for_socket()
        return agent

    def wait_for_socket(self):
        path = os.path.join(self.agent.dir, SOCKET)
        deadline = time.monotonic() + ONLINE
        while time.monotonic() < deadline:
            if self.agent.exit_code() is not None:
                self.fail(f"herald exited with {self.agent.exit_code()}\n{self.diagnosis()}")
            if os.path.exists(path) and self.heraldctl("status", check=False)[0] == 0:
                mode = os.stat(path).st_mode & 0o777
                self.assertEqual(mode, 0o600, f"the control socket has mode {oct(mode)}")
                return
            time.sleep(0.1)
        self.fail(f"no control socket at {path}\n{self.diagnosis()}")

    def client(self, user):
        c = Client(self.server, user)
        c.connect()
        self.addCleanup(c.close)
        return c

    def diagnosis(self):
        parts = [f"--- the agent's log ---\n{self.agent.log()}"]
        if getattr(self, "llm", None) is not None:
            parts.append(f"--- the fake LLM's requests ---\n{self.llm.requests()}")
        parts.append(f"--- tail of prosody's log ---\n{tail(self.server.log_file, 15)}")
        return "\n".join(parts)

    def heraldctl(self, *args, token=TOKEN, timeout=30, check=True):
        """Runs heraldctl against this agent's socket; returns (exit code, stdout, stderr)."""
        result = run_heraldctl(self.agent.dir, *args, token=token, timeout=timeout)
        if check and result.returncode != 0:
            self.fail(f"heraldctl {' '.join(args)} exited with {result.returncode}:\n"
                      f"{result.stdout}\n{result.stderr}\n{self.diagnosis()}")
        self.assertNotIn(TOKEN, result.stdout + result.stderr, "heraldctl printed the token")
        return result.returncode, result.stdout, result.stderr

    def usage_once_recorded(self, jid, window):
        """`heraldctl --json usage` for jid once it counts a call, or as it is after ANSWER
        seconds: Herald records a call's usage on a worker right after the call."""
        out = ""

        def recorded():
            nonlocal out
            _, out, _ = self.heraldctl("--json", "usage", "--jid", jid, "--window", window)
            return any(row.get("jid") == jid and int(row.get("calls", 0)) > 0
                       for row in json.loads(out).get("rows", []))

        wait_until(recorded, ANSWER, interval=0.1)
        return out

    def limit_reached(self, jid):
        """Whether a limit on jid is reached, as the ledger Herald admits calls by says."""
        _, out, _ = self.heraldctl("--json", "limits", "list", "--jid", jid)
        return any(state.get("reached") for state in json.loads(out).get("limits", []))

    def wait_online(self, client):
        deadline = time.monotonic() + ONLINE
        while time.monotonic() < deadline:
            if self.agent.exit_code() is not None:
                self.fail(f"herald exited\n{self.diagnosis()}")
            if client.ask(self.herald, "/ping", timeout=1.0) is not None:
                client.discard_pending()
                return
        self.fail(f"herald did not answer /ping\n{self.diagnosis()}")

    def ask(self, client, body, timeout=ANSWER):
        reply = client.ask(self.herald, body, timeout=timeout)
        self.assertIsNotNone(reply, f"no answer to {body!r}\n{self.diagnosis()}")
        return reply

    # --- the tests ------------------------------------------------------------------------

    def test_a_chat_shows_up_in_sessions_list_and_its_history(self):
        self.start()
        alice = self.client("alice")
        self.wait_online(alice)
        self.assertEqual(self.ask(alice, "hello from alice"), "you said: hello from alice")

        _, listed, _ = self.heraldctl("--json", "sessions", "list")
        conversations = [json.loads(line) for line in listed.splitlines() if line.strip()]
        flat = json.dumps(conversations)
        self.assertIn("alice@localhost", flat, listed)

        deadline = time.monotonic() + 5
        while True:
            _, history, _ = self.heraldctl("sessions", "history", "alice@localhost")
            if "you said: hello from alice" in history or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertIn("hello from alice", history)
        self.assertIn("you said: hello from alice", history)

        _, table, _ = self.heraldctl("sessions", "list")
        self.assertIn("direct:alice@localhost", table)

        # `memory export` writes the same files, byte for byte, into a new private folder.
        export = tempfile.mkdtemp(prefix="herald-e2e-export-")
        self.addCleanup(shutil.rmtree, export, True)
        target = os.path.join(export, "alice")
        _, said, _ = self.heraldctl("memory", "export", "alice@localhost", target)
        self.assertIn("exported 1 file (", said)
        kept = user_folder(self.agent.memory_dir, "alice@localhost")
        for name in ("history.md",):
            with open(os.path.join(kept, name), "rb") as original, \
                    open(os.path.join(target, name), "rb") as copy:
                self.assertEqual(copy.read(), original.read())
        self.assertEqual(os.stat(target).st_mode & 0o777, 0o700)
        self.assertEqual(os.stat(os.path.join(target, "history.md")).st_mode & 0o777, 0o600)
        code, _, err = self.heraldctl("memory", "export", "alice@localhost", target, check=False)
        self.assertEqual(code, 2, err)  # not into a folder that holds files
        self.assertIn("not an empty folder", err)

    def test_converse_streams_the_runs_events(self):
        self.start()
        code, out, err = self.heraldctl("--json", "converse", "--conversation", "e2e",
                                        "what time is it?")
        self.assertEqual(code, 0)
        events = [json.loads(line) for line in out.splitlines() if line.strip()]
        kinds = [next(k for k in e if k not in ("runId", "conversation", "time")) for e in events]
        self.assertEqual(kinds[0], "started", out)
        self.assertIn("toolStarted", kinds, out)
        self.assertIn("toolCompleted", kinds, out)
        self.assertIn("textDelta", kinds, out)
        self.assertEqual(kinds[-1], "completed", out)
        self.assertIn("The time is", events[-1]["completed"]["text"])
        self.assertEqual(events[-1]["conversation"], "api:e2e")

        # In human form the answer is printed as it streams.
        code, out, _ = self.heraldctl("converse", "--conversation", "e2e", "hello there")
        self.assertEqual(code, 0)
        self.assertIn("you said: hello there", out)

    def test_a_block_limit_stops_the_next_message_before_the_llm(self):
        # The fake LLM's answers cost more than 1 token, so the second message is over.
        self.start(daily_tokens=1)
        alice = self.client("alice")
        self.wait_online(alice)
        self.assertEqual(self.ask(alice, "first"), "you said: first")
        before = len(self.llm.requests())
        # The usage is recorded by a worker right after the call; the limit is reached once
        # the ledger counts it.
        wait_until(lambda: self.limit_reached("alice@localhost"), ANSWER, interval=0.1)
        reply = self.ask(alice, "second")
        self.assertIn("daily limit of 1 tokens", reply)
        # Watched for LLM_SILENCE (which says why that is enough); ends early if one comes.
        wait_until(lambda: len(self.llm.requests()) > before, LLM_SILENCE)
        self.assertEqual(len(self.llm.requests()), before,
                         "the blocked message reached the LLM")
        code, out, _ = self.heraldctl("--json", "usage", "--jid", "alice@localhost")
        self.assertEqual(code, 0)
        self.assertIn("alice@localhost", out)

    def test_usage_survives_a_restart(self):
        agent = self.start()
        alice = self.client("alice")
        self.wait_online(alice)
        self.ask(alice, "count me")
        before = self.usage_once_recorded("alice@localhost", "lifetime")
        self.assertIn("alice@localhost", before)
        self.assertEqual(agent.restart(), 0, self.diagnosis())
        self.wait_for_socket()
        _, after, _ = self.heraldctl("--json", "usage", "--jid", "alice@localhost",
                                     "--window", "lifetime")
        self.assertEqual(json.loads(before), json.loads(after))

    def test_changing_one_byte_of_the_audit_log_fails_audit_verify(self):
        self.start()
        self.heraldctl("status")
        self.heraldctl("sessions", "list")
        code, out, _ = self.heraldctl("audit", "verify")
        self.assertEqual(code, 0, out)
        path = os.path.join(self.agent.dir, "data", "audit.log")
        with open(path, "rb") as f:
            data = bytearray(f.read())
        self.assertGreater(len(data), 0)
        offset = len(data) // 2
        data[offset] = (data[offset] + 1) % 256 or 1
        with open(path, "r+b") as f:
            f.write(bytes(data))
        code, out, err = self.heraldctl("audit", "verify", check=False)
        self.assertEqual(code, 1, f"audit verify passed a changed log:\n{out}\n{err}")

    def test_sighup_reloads_the_allowlist_without_dropping_the_stream(self):
        self.start()
        bob = self.client("bob")
        alice = self.client("alice")
        self.wait_online(alice)
        self.assertIsNone(bob.ask(self.herald, "/ping", timeout=SILENCE),
                          "bob is not allowed yet and must get silence")
        with open(self.agent.config_file) as f:
            text = f.read()
        text = text.replace('allowed_jids = ["alice@localhost"]',
                            'allowed_jids = ["alice@localhost", "bob@localhost"]')
        with open(self.agent.config_file, "w") as f:
            f.write(text)
        os.kill(self.agent.proc.pid, signal.SIGHUP)
        deadline = time.monotonic() + ANSWER
        reply = None
        while reply is None and time.monotonic() < deadline:
            reply = bob.ask(self.herald, "/ping", timeout=1.0)
        self.assertEqual(reply, "pong", self.diagnosis())
        self.assertEqual(self.ask(alice, "still there?"), "you said: still there?")
        self.assertIsNone(self.agent.exit_code(), "herald exited on SIGHUP")

    def test_a_tool_registry_is_imported_and_searched(self):
        self.start()
        def tool(tool_id, description):
            return json.dumps({"id": tool_id, "name": tool_id, "description": description,
                               "input_schema": {"type": "object"},
                               "executor": {"type": "http", "method": "GET",
                                            "url": "https://tools.example/" + tool_id}})
        path = os.path.join(self.agent.dir, "registry.jsonl")
        with open(path, "w") as f:
            f.write("\n".join([tool("fx.convert", "Converts amounts between currencies"),
                               tool("clock.now", "Tells the time in any city"),
                               '{"id": "broken", "name": "broken"}',
                               tool("pdf.text", "Extracts the text of a PDF document")]) + "\n")
        code, out, _ = self.heraldctl("tools", "import", path, check=False)
        self.assertEqual(code, 1, f"a refused line must make the import exit 1:\n{out}")
        self.assertIn("3 added", out)
        self.assertIn("line 3: description: missing", out)
        _, out, _ = self.heraldctl("--json", "tools", "search", "currency amounts converter",
                                   "--k", "2")
        matches = json.loads(out)
        self.assertIsInstance(matches, list)
        self.assertEqual(matches[0]["id"], "fx.convert")
        self.assertEqual(matches[0]["name"], "fx.convert")
        self.assertGreater(matches[0]["score"], 0)
        self.assertLessEqual(len(matches), 2)
        code, out, _ = self.heraldctl("tools", "import", path, check=False)
        self.assertIn("3 unchanged", out)

    def test_a_wrong_or_missing_token_is_refused(self):
        self.start()
        code, _, err = self.heraldctl("status", token="not-the-token", check=False)
        self.assertEqual(code, 4, err)
        self.assertIn("UNAUTHENTICATED", err)
        code, _, err = self.heraldctl("status", token=None, check=False)
        self.assertEqual(code, 4, err)


if __name__ == "__main__":
    unittest.main()
