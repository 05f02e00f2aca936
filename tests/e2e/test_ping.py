"""End to end: Herald answers /ping through a real Prosody and a real ejabberd.

Each server class starts its server once (setUpClass); each test starts its own agent
process and real client connections. Which agent runs is HERALD_E2E_AGENT (see agent.py).

    HERALD_E2E_AGENT=bazel-bin/component/herald \
        /usr/bin/python3 -m unittest discover -s tests/e2e -p 'test_*.py' -v
"""

import secrets
import shutil
import tempfile
import time
import unittest

from agent import Agent, agent_program, client_config, component_config
from client import Client
from servers import Ejabberd, Prosody, make_certificates, tail

# Generous bounds: they only matter when something is broken.
FIRST_PONG = 20.0      # agent start + connect + one round trip
SILENCE = 3.0          # how long a refused sender listens for a reply that must not come
                       # (an allowed /ping is answered within milliseconds on loopback)
DOWNTIME = 1.5        # how long the restarted server stays down
AFTER_RESTART = 30.0   # server back up + the agent's backoff (max 2 s in the config)
SECRET_EXIT = 15.0     # a refused secret must end the process, not loop
UNTRUSTED = 8.0        # how long an agent given the wrong CA is watched for an answer
                       # (its reconnection delay is at most 2 s: several attempts)


class _AgentOnServer:
    """The behaviour every server must show; subclasses name the server."""

    server_class = None

    @classmethod
    def setUpClass(cls):
        agent_program()  # a missing or wrong HERALD_E2E_AGENT fails here, before any server
        cls.server = cls.server_class()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def start_component(self, secret=None):
        agent = Agent.start(component_config(self.server),
                            secret=secret or self.server.component_secret)
        self.addCleanup(agent.stop)
        return agent

    def client(self, user):
        c = Client(self.server, user)
        c.connect()
        self.addCleanup(c.close)
        return c

    def diagnosis(self, agent):
        return (f"--- the agent's log ---\n{agent.log()}"
                f"--- tail of {self.server.name}'s log ---\n{tail(self.server.log_file, 15)}")

    def assertPong(self, body, agent):
        self.assertIsNotNone(body, f"no answer from the agent\n{self.diagnosis(agent)}")
        self.assertTrue(body.startswith("pong"), f"answer {body!r} does not start with pong")

    def ping_until_answered(self, client, peer, agent, timeout):
        """Pings every second until an answer or timeout; fails at once if the agent dies."""
        deadline = time.monotonic() + timeout
        while True:
            code = agent.exit_code()
            if code is not None:
                how = f"was killed by signal {-code}" if code < 0 else f"exited with {code}"
                self.fail(f"the agent {how} before answering\n{self.diagnosis(agent)}")
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            body = client.ask(peer, "/ping", timeout=min(1.0, left))
            if body is not None:
                return body

    def test_component_answers_ping_from_an_allowed_jid(self):
        agent = self.start_component()
        alice = self.client("alice")
        body = self.ping_until_answered(alice, self.server.component_domain, agent, FIRST_PONG)
        self.assertPong(body, agent)
        self.assertNotIn(self.server.component_secret, agent.log(),
                         "the component secret appeared in the agent's log")

    def test_component_stays_silent_to_a_jid_that_is_not_allowed(self):
        agent = self.start_component()
        alice = self.client("alice")
        bob = self.client("bob")
        # Wait until the agent is online, so bob's silence means refusal, not absence.
        self.assertPong(self.ping_until_answered(alice, self.server.component_domain, agent,
                                                 FIRST_PONG), agent)
        bob.send(self.server.component_domain, "/ping")
        self.assertEqual(bob.replies_from(self.server.component_domain, within=SILENCE), [],
                         "a JID that is not allowed got an answer")
        # And the agent is still fine afterwards.
        self.assertPong(alice.ask(self.server.component_domain, "/ping", timeout=10), agent)

    def test_component_reconnects_by_itself_after_a_server_restart(self):
        agent = self.start_component()
        with Client(self.server, "alice") as alice:
            self.assertPong(self.ping_until_answered(alice, self.server.component_domain, agent,
                                                     FIRST_PONG), agent)
        # Down long enough for the agent to meet a few refused connections.
        self.server.restart(downtime=DOWNTIME)
        self.assertIsNone(agent.exit_code(),
                          f"the agent exited on restart\n{self.diagnosis(agent)}")
        alice = self.client("alice")
        body = self.ping_until_answered(alice, self.server.component_domain, agent,
                                        AFTER_RESTART)
        self.assertPong(body, agent)

    def test_component_exits_with_a_clear_message_when_the_secret_is_refused(self):
        wrong = "wrong-" + secrets.token_hex(8)
        agent = self.start_component(secret=wrong)
        code = agent.exit_code(timeout=SECRET_EXIT)
        log = agent.log()
        self.assertIsNotNone(code, f"the agent kept running with a refused secret:\n{log}")
        self.assertNotEqual(code, 0, f"the agent exited 0 with a refused secret:\n{log}")
        refusal = [line for line in log.splitlines()
                   if "not-authorized" in line and "secret" in line.lower()]
        self.assertTrue(refusal, f"no log line says the secret was refused:\n{log}")
        self.assertNotIn(wrong, log, "the secret appeared in the agent's log")

    def test_client_mode_over_verified_starttls_answers_ping(self):
        agent = Agent.start(client_config(self.server))
        self.addCleanup(agent.stop)
        alice = self.client("alice")
        body = self.ping_until_answered(alice, self.server.jid("herald"), agent, FIRST_PONG)
        self.assertPong(body, agent)
        self.assertNotIn(self.server.password("herald"), agent.log(),
                         "the account password appeared in the agent's log")

    def test_client_mode_refuses_a_certificate_its_ca_did_not_sign(self):
        other = tempfile.mkdtemp(prefix="herald-e2e-other-ca-")
        self.addCleanup(shutil.rmtree, other, True)
        other_ca, _, _ = make_certificates(other)
        agent = Agent.start(client_config(self.server, ca_file=other_ca))
        self.addCleanup(agent.stop)
        alice = self.client("alice")
        deadline = time.monotonic() + UNTRUSTED
        while agent.exit_code() is None and time.monotonic() < deadline:
            self.assertIsNone(alice.ask(self.server.jid("herald"), "/ping", timeout=1.0),
                              "the agent logged in through a certificate it should not trust")
        self.assertIn("certificate", agent.log().lower(),
                      f"the agent's log does not say why it did not connect\n"
                      f"{self.diagnosis(agent)}")


class ProsodyTest(_AgentOnServer, unittest.TestCase):
    server_class = Prosody


class EjabberdTest(_AgentOnServer, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
