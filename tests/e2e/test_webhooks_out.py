"""End to end: webhooks out, through real Prosody.

Herald runs on the scripted provider with two [[webhooks.out]] targets, both local receivers
of this test: "ops" answers 500 twice and then 200, so a run_completed event reaches it on the
third attempt (1 s and 2 s later, same delivery id, each attempt signed); "audit" allows one
attempt and answers 500, so its delivery becomes a dead letter, which `heraldctl webhooks
dead-letters` lists and `heraldctl webhooks replay ID` sends again once the receiver works.

    tests/e2e/run bazel-bin/component/herald test_webhooks_out
"""

import hashlib
import hmac
import json
import os
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agent import Agent, agent_program, component_config, runtime_sections
from client import Client
from servers import Prosody, tail
from test_control import control_section, heraldctl_program, run_heraldctl

ONLINE = 20.0
DELIVERED = 30.0  # three attempts take 1 s + 2 s of backoff (with jitter, at most that)
OPS_SECRET = "ops-e2e-secret-2b3c4d5e"
AUDIT_SECRET = "audit-e2e-secret-6f7a8b9c"


class Receiver:
    """A local HTTP endpoint that fails the first `failures` POSTs with 500."""

    def __init__(self, failures):
        self.failures = failures
        self.posts = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.posts.append({"headers": {k.lower(): v for k, v in self.headers.items()},
                                           "body": body})
                    fail = receiver.failures > 0
                    if fail:
                        receiver.failures -= 1
                self.send_response(500 if fail else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def snapshot(self):
        with self.lock:
            return list(self.posts)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def signed_by(secret, post):
    header = post["headers"].get("x-herald-signature", "")
    parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
    expected = hmac.new(secret.encode(), parts.get("t", "").encode() + b"." + post["body"],
                        hashlib.sha256).hexdigest()
    return hmac.compare_digest(parts.get("v1", ""), expected)


class ProsodyWebhooksOutTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get("HERALD_E2E_AGENT") == "echo":
            raise unittest.SkipTest("the echo stand-in has no webhooks")
        agent_program()
        heraldctl_program()
        cls.server = Prosody()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def setUp(self):
        self.ops = Receiver(failures=2)
        self.addCleanup(self.ops.stop)
        self.audit = Receiver(failures=1)
        self.addCleanup(self.audit.stop)
        config = component_config(self.server) + runtime_sections() + control_section()
        config += f"""
[[webhooks.out]]
name = "ops"
url = "{self.ops.url}"
secret = "{OPS_SECRET}"
events = ["run_completed"]

[[webhooks.out]]
name = "audit"
url = "{self.audit.url}"
secret = "{AUDIT_SECRET}"
events = ["run_completed"]
max_attempts = 1
"""
        self.agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(self.agent.stop)
        self.alice = Client(self.server, "alice")
        self.alice.connect()
        self.addCleanup(self.alice.close)

    def diagnosis(self):
        return (f"--- the agent's log ---\n{self.agent.log()}\n"
                f"--- ops got ---\n{self.ops.snapshot()}\n--- audit got ---\n"
                f"{self.audit.snapshot()}\n--- tail of prosody's log ---\n"
                f"{tail(self.server.log_file, 15)}")

    def heraldctl(self, *args):
        return run_heraldctl(self.agent.dir, *args)

    def wait_for(self, condition, limit):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if condition():
                return True
            time.sleep(0.1)
        return condition()

    def test_a_run_reaches_a_receiver_after_two_failures_and_a_dead_letter_is_replayed(self):
        deadline = time.monotonic() + ONLINE
        answer = None
        while answer is None and time.monotonic() < deadline:
            self.assertIsNone(self.agent.exit_code(), self.diagnosis())
            answer = self.alice.ask(self.server.component_domain, "hello there", timeout=1.0)
        self.assertIsNotNone(answer, f"no answer\n{self.diagnosis()}")

        self.assertTrue(self.wait_for(lambda: len(self.ops.snapshot()) >= 3, DELIVERED),
                        self.diagnosis())
        posts = self.ops.snapshot()
        ids = {post["headers"].get("x-herald-delivery") for post in posts[:3]}
        self.assertEqual(len(ids), 1, f"the attempts carry one delivery id: {ids}")
        self.assertTrue(next(iter(ids)).startswith("d-"), ids)
        for post in posts[:3]:
            self.assertTrue(signed_by(OPS_SECRET, post), post)
            self.assertEqual(post["headers"].get("x-herald-event"), "run_completed")
        payload = json.loads(posts[2]["body"])
        self.assertEqual(payload["type"], "run_completed")
        self.assertEqual(payload["jid"], "alice@localhost")

        # The audit target allowed one attempt: a dead letter, listed and replayed.
        letters = []
        def listed():
            nonlocal letters
            result = self.heraldctl("--json", "webhooks", "dead-letters")
            if result.returncode != 0:
                return False
            letters = json.loads(result.stdout).get("letters", [])
            return len(letters) > 0
        self.assertTrue(self.wait_for(listed, DELIVERED), self.diagnosis())
        letter = letters[0]
        self.assertEqual(letter["target"], "audit")
        self.assertEqual(letter["eventType"], "run_completed")
        self.assertIn("HTTP 500", letter["error"])
        replay = self.heraldctl("webhooks", "replay", letter["id"])
        self.assertEqual(replay.returncode, 0, f"{replay.stdout}{replay.stderr}")
        self.assertTrue(self.wait_for(lambda: len(self.audit.snapshot()) >= 2, DELIVERED),
                        self.diagnosis())
        replayed = self.audit.snapshot()[1]
        self.assertEqual(replayed["headers"].get("x-herald-delivery"), letter["id"])
        self.assertTrue(signed_by(AUDIT_SECRET, replayed))
        self.assertTrue(self.wait_for(lambda: json.loads(
            self.heraldctl("--json", "webhooks", "dead-letters").stdout).get("letters", []) == [],
            DELIVERED), self.diagnosis())


if __name__ == "__main__":
    unittest.main()
