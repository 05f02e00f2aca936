"""End to end: Herald's entity capabilities (XEP-0115) through real Prosody and ejabberd.

Herald's presence in a room carries <c hash='sha-1' node='urn:herald:caps' ver=.../>, and a
client that asks disco#info at node#ver gets the identity and features that hash to ver —
so Conversations, Gajim, Dino and Monal learn what Herald supports (receipts, markers, ...)
without asking each time.

    tests/e2e/run bazel-bin/component/herald test_caps
"""

import base64
import hashlib
import unittest

from servers import Ejabberd, Prosody
from test_conversation import _ConversationBase


def verification_string(identities, features):
    """XEP-0115 §5.1 for a disco#info without forms."""
    text = "".join(f"{c}/{t}/{lang}/{name}<" for c, t, lang, name in sorted(identities))
    text += "".join(f"{f}<" for f in sorted(features))
    return base64.b64encode(hashlib.sha1(text.encode("utf-8")).digest()).decode("ascii")


class _CapsTests(_ConversationBase):

    def test_herald_in_a_room_shows_caps_that_match_its_disco_info(self):
        agent = self.start_agent(rooms=[{"jid": self.room, "nick": "herald"}])
        alice = self.client("alice")
        self.wait_online(alice, agent)
        self.wait_for_herald_room(alice)
        occupants, _ = self.join_room(alice)
        self.assertIn("herald", occupants)

        caps = alice.caps_of(f"{self.room}/herald")
        self.assertIsNotNone(caps, f"Herald's presence in the room had no caps\n"
                                   f"{self.diagnosis()}")
        self.assertEqual((caps.get("hash"), caps.get("node")), ("sha-1", "urn:herald:caps"))
        identities, features = alice.disco_info(self.herald,
                                                f"urn:herald:caps#{caps.get('ver')}")
        self.assertEqual(verification_string(identities, features), caps.get("ver"))
        self.assertIn("urn:xmpp:receipts", features)
        # The same as disco#info without a node.
        self.assertEqual(alice.disco_info(self.herald), (identities, features))


class ProsodyCapsTest(_CapsTests, unittest.TestCase):
    server_class = Prosody


class EjabberdCapsTest(_CapsTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
