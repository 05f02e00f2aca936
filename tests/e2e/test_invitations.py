"""End to end: who may bring Herald into a room (issue 16, finding 1).

A mediated invitation (XEP-0045 §7.8.2) is written by the room, inviter included, so a
hostile server can name any allowed user as the inviter of a room of its own. Herald believes
the inviter a room names only when the room lives on a MUC service the XMPP server announces
as its own (or the operator lists in [server] muc_services). A second component on the test
server plays the hostile server (hostile.py).

    tests/e2e/run bazel-bin/component/herald test_invitations
"""

import time
import unittest

from agent import Agent, agent_program, component_config, runtime_sections
from client import Client, ClientError
from hostile import HostileServer
from servers import Ejabberd, Prosody, tail, wait_until

ONLINE = 20.0     # agent start + connect + one /ping round trip
JOINED = 20.0     # Herald follows a genuine invitation
# How long the hostile room is watched for Herald's join, after Herald followed the genuine
# invitation that came after the forged one: it acts on invitations as they come, and a join
# would reach the hostile component over loopback within milliseconds.
SILENCE = 3.0


class _InvitationTests:
    server_class = None

    @classmethod
    def setUpClass(cls):
        if agent_program()[0].endswith(".py"):
            raise unittest.SkipTest("the echo stand-in does not follow invitations")
        cls.server = cls.server_class()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def diagnosis(self):
        return (f"--- the agent's log ---\n{self.agent.log()}\n"
                f"--- tail of {self.server.name}'s log ---\n{tail(self.server.log_file, 15)}")

    def test_a_foreign_room_cannot_bring_herald_in_by_naming_an_allowed_user(self):
        config = component_config(self.server, allowed_jids=("alice@localhost",)) + \
            runtime_sections()
        self.agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(self.agent.stop)
        alice = Client(self.server, "alice")
        alice.connect()
        self.addCleanup(alice.close)
        deadline = time.monotonic() + ONLINE
        while alice.ask(self.server.component_domain, "/ping", timeout=1.0) is None:
            if self.agent.exit_code() is not None or time.monotonic() > deadline:
                self.fail(f"the agent did not answer /ping\n{self.diagnosis()}")
        alice.discard_pending()

        evil = HostileServer(self.server)
        evil.connect()
        self.addCleanup(evil.close)
        trap = f"trap@{self.server.hostile_domain}"
        evil.send_raw(
            f"<message from='{trap}' to='{self.server.component_domain}'>"
            "<x xmlns='http://jabber.org/protocol/muc#user'>"
            f"<invite from='{alice.jid}'><reason>join us</reason></invite></x>"
            "<body>alice invites you</body></message>")
        # Herald has dealt with it before the genuine invitation is sent, so it came first.
        wait_until(lambda: f"ignored an invitation relayed by {trap}" in self.agent.log(), JOINED)

        # The genuine invitation, through the server's own MUC service, is followed: so the
        # forged one was not ignored for want of trying.
        party = f"party@{self.server.muc_domain}"
        for _ in range(50):
            try:
                alice.join_room(party, "alice")
                break
            except ClientError:
                time.sleep(0.2)
        alice.show_real_jids(party)  # or the room would name her by her nick only
        alice.invite(party, self.server.component_domain, reason="come in")
        self.assertTrue(alice.occupant_arrives(party, "herald", within=JOINED),
                        f"Herald did not follow alice's invitation\n{self.diagnosis()}")

        # The forged invitation came first; Herald never entered the hostile room.
        reached = evil.stanzas_to(trap, within=SILENCE)
        self.assertEqual([s.xml.tag for s in reached], [],
                         f"Herald answered the forged invitation\n{self.diagnosis()}")
        self.assertIn(f"ignored an invitation relayed by {trap}", self.agent.log())


class ProsodyInvitationTest(_InvitationTests, unittest.TestCase):
    server_class = Prosody


class EjabberdInvitationTest(_InvitationTests, unittest.TestCase):
    server_class = Ejabberd
