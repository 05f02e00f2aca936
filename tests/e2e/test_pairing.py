"""End to end: pairing, through real Prosody.

alice is Herald's admin; bob and carol are strangers to it. alice asks for a pairing code in
chat (/pair), bob sends it and is welcomed, and from then on Herald answers him; carol sends the
same code and is refused, as any stranger is. A code from `heraldctl pair` works the same way,
and the allowlist change outlives a restart (it is a persisted runtime change).

    tests/e2e/run bazel-bin/component/herald test_pairing
"""

import os
import re
import time
import unittest

from agent import Agent, agent_program, component_config, runtime_sections
from client import Client
from servers import Prosody, tail
from test_control import control_section, heraldctl_program, run_heraldctl

ONLINE = 20.0
ANSWER = 15.0
REFUSAL = "Sorry, this service is not available to your address."


class ProsodyPairingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get("HERALD_E2E_AGENT") == "echo":
            raise unittest.SkipTest("the echo stand-in has no pairing")
        agent_program()
        heraldctl_program()
        cls.server = Prosody()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    @property
    def herald(self):
        return self.server.component_domain

    def start(self, agent_dir=None):
        config = (component_config(self.server, allowed_jids=("alice@localhost",),
                                   allowed_domains=(), admin_jids=("alice@localhost",))
                  + runtime_sections() + control_section())
        config = config.replace("[agent]\n", '[agent]\nunallowed = "reply"\n', 1)
        self.agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(self.agent.stop)

    def client(self, user):
        c = Client(self.server, user)
        c.connect()
        self.addCleanup(c.close)
        return c

    def diagnosis(self):
        return (f"--- the agent's log ---\n{self.agent.log()}\n"
                f"--- tail of prosody's log ---\n{tail(self.server.log_file, 15)}")

    def wait_online(self, alice):
        deadline = time.monotonic() + ONLINE
        while time.monotonic() < deadline:
            self.assertIsNone(self.agent.exit_code(), self.diagnosis())
            if alice.ask(self.herald, "/ping", timeout=1.0) is not None:
                alice.discard_pending()
                return
        self.fail(f"herald did not answer /ping\n{self.diagnosis()}")

    def ask(self, client, body):
        reply = client.ask(self.herald, body, timeout=ANSWER)
        self.assertIsNotNone(reply, f"no answer to {body!r}\n{self.diagnosis()}")
        return reply

    def test_a_code_from_chat_admits_one_new_person_once(self):
        self.start()
        alice, bob, carol = self.client("alice"), self.client("bob"), self.client("carol")
        self.wait_online(alice)
        self.assertEqual(self.ask(bob, "hello?"), REFUSAL)

        answer = self.ask(alice, "/pair")
        match = re.search(r"Pairing code: ([A-Z0-9]{4}-[A-Z0-9]{4})", answer)
        self.assertIsNotNone(match, answer)
        code = match.group(1)

        self.assertEqual(self.ask(bob, code.lower()), "Welcome! You can talk to me now.")
        self.assertEqual(self.ask(bob, "/ping"), "pong")
        # Spent: carol gets the refusal any stranger gets (once an hour), and no way in.
        self.assertEqual(self.ask(carol, code), REFUSAL)
        with open(os.path.join(self.agent.dir, "data", "runtime-state.json")) as f:
            state = f.read()
        self.assertIn("bob@localhost", state)
        self.assertNotIn("carol@localhost", state)

    def test_a_code_from_heraldctl_works_and_the_change_is_kept(self):
        self.start()
        alice, bob = self.client("alice"), self.client("bob")
        self.wait_online(alice)
        result = run_heraldctl(self.agent.dir, "pair")
        self.assertEqual(result.returncode, 0, f"{result.stdout}{result.stderr}")
        match = re.search(r"pairing code: ([A-Z0-9]{4}-[A-Z0-9]{4})", result.stdout)
        self.assertIsNotNone(match, result.stdout)
        self.assertEqual(self.ask(bob, match.group(1)), "Welcome! You can talk to me now.")
        with open(os.path.join(self.agent.dir, "data", "runtime-state.json")) as f:
            self.assertIn("bob@localhost", f.read())


if __name__ == "__main__":
    unittest.main()
