"""End to end: client mode survives a flaky network (XEP-0198 stream management), through real
Prosody (mod_smacks) and ejabberd (mod_stream_mgmt).

Herald logs in as a client account through a TCP proxy; while alice's and bob's questions are
coming, the proxy resets the connection. Herald reconnects and resumes the stream: the server hands it
what it had not acknowledged, Herald sends again what the server had not acknowledged, and
every question is answered exactly once.

    tests/e2e/run bazel-bin/component/herald test_stream_management
"""

import time
import unittest

from agent import Agent, client_config, runtime_sections
from servers import Ejabberd, Prosody
from tcp_proxy import TcpProxy
from test_conversation import ANSWER, ONLINE, SILENCE, _ConversationBase

# Each sender's within one conversation's mailbox ([agent] mailbox_limit, 8), so none is
# answered "busy"; two senders have twice as many in flight.
QUESTIONS = 6
CUT_AFTER = 3


class _StreamManagementTests(_ConversationBase):

    def start_client_agent(self, proxy):
        llm = self.fake_llm()
        config = client_config(self.server, port=proxy.port,
                               allowed_jids=("alice@localhost", "bob@localhost")
                               ) + runtime_sections(llm=self.llm_keys(llm))
        agent = Agent.start(config)
        self.addCleanup(agent.stop)
        self.agent = agent
        return agent

    def wait_answering(self, alice, herald, agent):
        deadline = time.monotonic() + ONLINE
        while time.monotonic() < deadline:
            if agent.exit_code() is not None:
                self.fail(f"the agent exited\n{self.diagnosis()}")
            if alice.ask(herald, "/ping", timeout=1.0) is not None:
                alice.discard_pending()
                return
        self.fail(f"Herald did not answer /ping within {ONLINE:.0f}s\n{self.diagnosis()}")

    def test_a_cut_connection_is_resumed_and_every_message_answered_exactly_once(self):
        proxy = TcpProxy(self.server.c2s_port)
        self.addCleanup(proxy.stop)
        agent = self.start_client_agent(proxy)
        alice = self.client("alice")
        bob = self.client("bob")
        herald = self.server.jid("herald")
        self.wait_answering(alice, herald, agent)
        self.wait_answering(bob, herald, agent)
        self.assertIn("stream management enabled (resumable)", agent.log(), self.diagnosis())

        for i in range(1, QUESTIONS + 1):
            alice.send(herald, f"question {i}")
            bob.send(herald, f"bob's question {i}")
            if i == CUT_AFTER:
                proxy.cut()
        for client, asked in ((alice, "question"), (bob, "bob's question")):
            got = client.replies_from(herald, within=2 * ANSWER, count=QUESTIONS)
            # Anything sent twice would come right behind the rest.
            got += client.replies_from(herald, within=SILENCE)
            expected = [f"you said: {asked} {i}" for i in range(1, QUESTIONS + 1)]
            self.assertEqual(sorted(got), sorted(expected), f"{got}\n{self.diagnosis()}")
        self.assertGreaterEqual(proxy.connections, 2, "the connection was never cut")
        self.assertIn("resumed the stream", agent.log(), self.diagnosis())


class ProsodyStreamManagementTest(_StreamManagementTests, unittest.TestCase):
    server_class = Prosody


class EjabberdStreamManagementTest(_StreamManagementTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
