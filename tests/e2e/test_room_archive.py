"""End to end: a room's archive (XEP-0313) through real Prosody (mod_muc_mam) and ejabberd
(mod_mam with rooms archived).

Herald joins rooms without the history the room would replay; when the room keeps an archive,
Herald asks it for the last messages instead, and what people said before it came becomes the
room's history.md, which the next turn reads. So a question about what was just said is not
answered blind.

    tests/e2e/run bazel-bin/component/herald test_room_archive
"""

import os
import time
import unittest

from memory_files import read_history, room_folder
from servers import Ejabberd, Prosody
from test_conversation import ANSWER, ROOM_READY, _ConversationBase


class _RoomArchiveTests(_ConversationBase):

    def test_herald_joining_a_room_reads_what_was_said_before_it_came(self):
        room = f"archived@{self.server.muc_domain}"
        alice = self.client("alice")
        alice.join_room(room, "alice")
        alice.say_in_room(room, "the code word is marmalade")
        alice.say_in_room(room, "and the meeting moved to Thursday")

        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm), rooms=[
            {"jid": room, "nick": "herald", "activation": "mention"}])
        self.wait_online(alice, agent)

        path = os.path.join(room_folder(agent.memory_dir, room), "history.md")
        deadline = time.monotonic() + ROOM_READY
        while len(read_history(path)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual([(e.role, e.author, e.text) for e in read_history(path)],
                         [("user", "alice", "the code word is marmalade"),
                          ("user", "alice", "and the meeting moved to Thursday")],
                         self.diagnosis())

        # The next question is answered with those in the history: the fake model's request
        # holds them, and the question, in its one user message.
        alice.say_in_room(room, "herald: what was the code word?")
        traffic = alice.room_traffic(room, within=ANSWER, until_nick="herald")
        self.assertEqual(traffic[-1]["nick"], "herald", f"{traffic}\n{self.diagnosis()}")
        self.assertEqual(traffic[-1]["body"],
                         "you said: alice: the code word is marmalade\n\n"
                         "alice: and the meeting moved to Thursday\n\n"
                         "alice: herald: what was the code word?",
                         f"{traffic}\n{self.diagnosis()}")


class ProsodyRoomArchiveTest(_RoomArchiveTests, unittest.TestCase):
    server_class = Prosody


class EjabberdRoomArchiveTest(_RoomArchiveTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
