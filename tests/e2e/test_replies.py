"""End to end: in a room, Herald's answer says which message it answers (XEP-0461), through
real Prosody and ejabberd: by the id the room gave that message (XEP-0359 stanza-id) when the
room gives one, else by the sender's own id, so Conversations, Gajim, Dino and Monal show the
answer attached to the question among everyone else's talk.

    tests/e2e/run bazel-bin/component/herald test_replies
"""

import unittest

from servers import Ejabberd, Prosody
from test_conversation import ANSWER, _ConversationBase


class _ReplyTests(_ConversationBase):

    def test_a_room_answer_refers_to_the_message_it_answers(self):
        alice = self.alice_in_room_with_herald()
        self.assertIn("urn:xmpp:reply:0", alice.features_of(self.herald))

        alice.say_in_room_with_id(self.room, "herald: hello", "e2e-question-1")
        traffic = alice.room_traffic(self.room, within=ANSWER, until_nick="herald")

        question = [m for m in traffic if m["nick"] == "alice"]
        answer = [m for m in traffic if m["nick"] == "herald"]
        self.assertEqual(len(question), 1, f"{traffic}\n{self.diagnosis()}")
        self.assertEqual(len(answer), 1, f"{traffic}\n{self.diagnosis()}")
        self.assertEqual(answer[0]["body"], "you said: alice: herald: hello")
        expected_id = question[0]["stanza_id"] or "e2e-question-1"
        self.assertEqual(answer[0]["reply"], (f"{self.room}/alice", expected_id),
                         f"{traffic}\n{self.diagnosis()}")


class ProsodyRepliesTest(_ReplyTests, unittest.TestCase):
    server_class = Prosody


class EjabberdRepliesTest(_ReplyTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
