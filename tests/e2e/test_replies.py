"""End to end: in a room, Herald's answer says which message it answers (XEP-0461), through
real Prosody and ejabberd: by the id the room gave that message (XEP-0359 stanza-id) when the
room gives one, else by the sender's own id, so Conversations, Gajim, Dino and Monal show the
answer attached to the question among everyone else's talk. And the other way: a user who
replies to one of Herald's earlier messages (in a chat, or in a room without naming Herald) is
answered with that whole message in mind, not only the part their client quoted.

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

    def test_a_reply_to_an_older_answer_brings_it_in_whole(self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm))
        alice = self.client("alice")
        self.wait_online(alice, agent)

        alice.send(self.herald, "first question")
        first = "you said: first question"
        got = alice.corrections_from(self.herald, within=ANSWER, until=first)
        self.assertEqual(len(got), 1, f"{got}\n{self.diagnosis()}")
        first_id = got[0][0]
        alice.send(self.herald, "second question")
        alice.corrections_from(self.herald, within=ANSWER, until="you said: second question")

        # The client quoted only the start of the answer; Herald brings in all of it.
        alice.reply(self.herald, "tell me more", first_id, self.herald, "you said: first…")
        expected = f"you said: > {first}\ntell me more"
        got = alice.corrections_from(self.herald, within=ANSWER, until=expected)
        self.assertEqual(got[-1][1], expected, f"{got}\n{self.diagnosis()}")

    def test_a_reply_to_herald_in_a_room_is_answered_with_the_replied_message_in_mind(self):
        alice = self.alice_in_room_with_herald()
        alice.say_in_room_with_id(self.room, "herald: hello", "e2e-question-2")
        traffic = alice.room_traffic(self.room, within=ANSWER, until_nick="herald")
        answer = [m for m in traffic if m["nick"] == "herald"]
        self.assertEqual(len(answer), 1, f"{traffic}\n{self.diagnosis()}")

        # No mention of Herald's nick: replying to its message is addressing it. A client
        # names a room message by the id the room gave it, or its own id when there is none.
        replied_id = answer[0]["stanza_id"] or answer[0]["id"]
        alice.reply(self.room, "and then?", replied_id, f"{self.room}/herald", answer[0]["body"],
                    mtype="groupchat")
        traffic = alice.room_traffic(self.room, within=ANSWER, until_nick="herald")
        self.assertEqual(traffic[-1]["nick"], "herald", f"{traffic}\n{self.diagnosis()}")
        self.assertEqual(traffic[-1]["body"],
                         "you said: alice: > you said: alice: herald: hello\nand then?",
                         f"{traffic}\n{self.diagnosis()}")


class ProsodyRepliesTest(_ReplyTests, unittest.TestCase):
    server_class = Prosody


class EjabberdRepliesTest(_ReplyTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
