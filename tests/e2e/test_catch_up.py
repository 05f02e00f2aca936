"""End to end: in client mode Herald catches up after downtime, through real Prosody and
ejabberd. Chats that reached its account while it was not running are in the account's
archive (XEP-0313); logging in, Herald reads them and answers each sender once, for all they
wrote ([agent] catch_up = "answer", the default).

    tests/e2e/run bazel-bin/component/herald test_catch_up
"""

import re
import unittest

from agent import Agent, client_config, runtime_sections
from servers import Ejabberd, Prosody
from test_conversation import ANSWER, SILENCE, _ConversationBase


class _CatchUpTests(_ConversationBase):

    def test_chats_sent_while_herald_was_away_are_answered_once_when_it_is_back(self):
        alice = self.client("alice")
        herald = self.server.jid("herald")
        # Herald is not running: the server keeps these in the account's archive.
        alice.send(herald, "are you there?")
        alice.send(herald, "what is the capital of France?")
        alice.discard_pending()  # and any error the server bounced for the absent account

        llm = self.fake_llm()
        agent = Agent.start(client_config(self.server) + runtime_sections(llm=self.llm_keys(llm)))
        self.addCleanup(agent.stop)
        self.agent = agent

        got = alice.replies_from(herald, within=2 * ANSWER, count=1)
        self.assertEqual(len(got), 1, f"{got}\n{self.diagnosis()}")
        self.assertRegex(got[0], re.compile(
            r"^you said: \(While I was offline you wrote:\)\n"
            r"\[\d\d:\d\d UTC\] are you there\?\n"
            r"\[\d\d:\d\d UTC\] what is the capital of France\?$"), self.diagnosis())
        # Once: nothing else follows, and a new message is answered as usual.
        self.assertEqual(alice.replies_from(herald, within=SILENCE), [], self.diagnosis())
        self.assertEqual(self.ask_agent(alice, herald, "and now?"), "you said: and now?")

    def ask_agent(self, alice, herald, body):
        reply = alice.ask(herald, body, timeout=ANSWER)
        self.assertIsNotNone(reply, self.diagnosis())
        return reply


class ProsodyCatchUpTest(_CatchUpTests, unittest.TestCase):
    server_class = Prosody


class EjabberdCatchUpTest(_CatchUpTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
