"""End to end: reactions (XEP-0444) through real Prosody and ejabberd.

A 👍 on one of Herald's answers, as Conversations, Gajim, Dino and Monal send it, is recorded
as feedback in the chat's memory; in a room, Herald marks the message it works on with 👀 and
takes the mark back once its answer is there.

    tests/e2e/run bazel-bin/component/herald test_reactions
"""

import unittest

from servers import Ejabberd, Prosody
from test_conversation import ANSWER, _ConversationBase

THUMBS_UP = "\U0001F44D"
EYES = "\U0001F440"


class _ReactionTests(_ConversationBase):

    def test_herald_announces_reactions(self):
        agent = self.start_agent()
        alice = self.client("alice")
        self.wait_online(alice, agent)
        self.assertIn("urn:xmpp:reactions:0", alice.features_of(self.herald))

    def test_a_thumbs_up_on_an_answer_is_kept_as_feedback(self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm))
        alice = self.client("alice")
        self.wait_online(alice, agent)

        alice.send(self.herald, "what is the capital of France")
        answer = "you said: what is the capital of France"
        got = alice.corrections_from(self.herald, within=ANSWER, until=answer)
        self.assertEqual(len(got), 1, f"{got}\n{self.diagnosis()}")
        answer_id = got[0][0]

        alice.react(self.herald, answer_id, [THUMBS_UP])
        entries = self.history_of("alice@localhost", 3)
        notes = [entry for entry in entries if entry.role == "note"]
        self.assertEqual([(note.author, note.text) for note in notes],
                         [("alice@localhost", f"reacted {THUMBS_UP} to: {answer}")],
                         self.diagnosis())

    def test_a_room_message_is_marked_while_herald_works_on_it(self):
        alice = self.alice_in_room_with_herald()

        alice.say_in_room_with_id(self.room, "herald: slow please", "e2e-mark-1")
        first = alice.room_traffic(self.room, within=ANSWER, until_nick="herald", reactions=True)
        question = [m for m in first if m["nick"] == "alice" and m["body"]]
        self.assertEqual(len(question), 1, f"{first}\n{self.diagnosis()}")
        marked = question[0]["stanza_id"] or "e2e-mark-1"
        # The answer is slow: first comes the mark on alice's message...
        self.assertEqual(first[-1]["reactions"], (marked, [EYES]), f"{first}")
        # ...then the answer, then the mark taken back.
        answer = alice.room_traffic(self.room, within=ANSWER, until_nick="herald",
                                    reactions=True)
        self.assertEqual(answer[-1]["body"], "you said: alice: herald: slow please", f"{answer}")
        unmarked = alice.room_traffic(self.room, within=ANSWER, until_nick="herald",
                                      reactions=True)
        self.assertEqual(unmarked[-1]["reactions"], (marked, []), f"{unmarked}")


class ProsodyReactionsTest(_ReactionTests, unittest.TestCase):
    server_class = Prosody


class EjabberdReactionsTest(_ReactionTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
