"""End to end: delivery receipts (XEP-0184) and displayed markers (XEP-0333) through real
Prosody and ejabberd, as Conversations, Gajim, Dino and Monal ask for them.

On a component link no server offers stream management (XEP-0198 is for client and
server-to-server streams), so a receipt is what tells a user's client that Herald has the
message: Herald sends it only once the message is stored (fsynced in history.md), then a
displayed marker as it starts working on it, then the answer.

    tests/e2e/run bazel-bin/component/herald test_receipts
"""

import unittest

from servers import Ejabberd, Prosody
from test_conversation import ANSWER, SILENCE, _ConversationBase


class _ReceiptTests(_ConversationBase):

    def test_herald_announces_receipts_and_markers(self):
        agent = self.start_agent()
        alice = self.client("alice")
        self.wait_online(alice, agent)
        features = alice.features_of(self.herald)
        self.assertIn("urn:xmpp:receipts", features)
        self.assertIn("urn:xmpp:chat-markers:0", features)

    def test_a_message_is_acknowledged_once_stored_then_marked_then_answered(self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm))
        alice = self.client("alice")
        self.wait_online(alice, agent)

        alice.send_marked(self.herald, "remember the milk", "e2e-msg-1")
        got = alice.exchange_from(self.herald, within=ANSWER)

        self.assertEqual(got, [("received", "e2e-msg-1"), ("displayed", "e2e-msg-1"),
                               ("body", "you said: remember the milk")], self.diagnosis())
        entries = self.history_of("alice@localhost", 1)
        self.assertEqual((entries[0].role, entries[0].text), ("user", "remember the milk"))

    def test_nothing_is_acknowledged_for_a_command_or_a_stranger(self):
        agent = self.start_agent()
        alice = self.client("alice")
        bob = self.client("bob")  # not allowed
        self.wait_online(alice, agent)

        alice.send_marked(self.herald, "/ping", "e2e-cmd-1")
        got = alice.exchange_from(self.herald, within=ANSWER)
        self.assertEqual([kind for kind, _ in got], ["body"], f"{got}\n{self.diagnosis()}")
        self.assertTrue(got[0][1].startswith("pong"), got)
        bob.send_marked(self.herald, "hello?", "e2e-stranger-1")
        # An answered message takes milliseconds on loopback; SILENCE is long past that.
        self.assertEqual(bob.exchange_from(self.herald, within=SILENCE), [], self.diagnosis())


class ProsodyReceiptsTest(_ReceiptTests, unittest.TestCase):
    server_class = Prosody


class EjabberdReceiptsTest(_ReceiptTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
