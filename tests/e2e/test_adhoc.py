"""End to end: Herald's slash commands as XEP-0050 ad-hoc commands, the menus Gajim and
Cheogram show, through real Prosody and ejabberd with a slixmpp client.

    tests/e2e/run bazel-bin/component/herald test_adhoc
"""

import unittest

from client import ClientError
from servers import Ejabberd, Prosody
from test_conversation import ANSWER, SILENCE, _ConversationBase


class _AdhocTests(_ConversationBase):

    def test_commands_are_listed_and_run_and_a_form_asks_for_arguments(self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm))
        alice = self.client("alice")
        self.wait_online(alice, agent)
        self.assertIn("http://jabber.org/protocol/commands", alice.features_of(self.herald))

        nodes = [node for node, _ in alice.commands_of(self.herald)]
        self.assertIn("ping", nodes)
        self.assertIn("history", nodes)
        self.assertNotIn("raw", nodes, "a developer command was offered to a user")

        ping = alice.run_command(self.herald, "ping")
        self.assertEqual(ping["status"], "completed", f"{ping}\n{self.diagnosis()}")
        self.assertTrue(ping["note"].startswith("pong"), ping)

        self.assertEqual(self.ask(alice, "first words"), "you said: first words")
        form = alice.run_command(self.herald, "history")
        self.assertEqual((form["status"], form["form"]),
                         ("executing",
                          [{"var": "n", "type": "text-single", "value": "10", "options": []}]),
                         form)
        done = alice.run_command(self.herald, "history", session=form["sessionid"],
                                 fields={"n": "2"}, timeout=ANSWER)
        self.assertEqual(done["status"], "completed", f"{done}\n{self.diagnosis()}")
        self.assertIn("alice@localhost: first words", done["note"])
        self.assertIn("Herald: you said: first words", done["note"])

    def test_admin_commands_are_offered_to_admins_only(self):
        agent = self.start_agent(allowed=("alice@localhost", "bob@localhost"),
                                 admins=("alice@localhost",))
        alice = self.client("alice")  # an admin
        bob = self.client("bob")      # allowed, not an admin
        self.wait_online(alice, agent)

        self.assertIn("pending", [node for node, _ in alice.commands_of(self.herald)])
        self.assertNotIn("pending", [node for node, _ in bob.commands_of(self.herald)])
        self.assertEqual(bob.run_command(self.herald, "pending"), {"error": "item-not-found"})
        # Nothing waits, so there is nothing to choose: the answer says so at once.
        none = alice.run_command(self.herald, "pending")
        self.assertEqual((none["status"], none["note"]),
                         ("completed", "Nothing is waiting for your answer."), none)
        # An admin's /usage asks whose; a user's runs at once, for themselves.
        usage = alice.run_command(self.herald, "usage")
        self.assertEqual(usage["form"], [{"var": "jid", "type": "jid-single", "value": None,
                                          "options": []}], usage)
        done = alice.run_command(self.herald, "usage", session=usage["sessionid"],
                                 fields={"jid": "bob@localhost"})
        self.assertEqual(done["status"], "completed", done)
        self.assertIn("bob@localhost", done["note"])
        self.assertEqual(bob.run_command(self.herald, "usage")["status"], "completed")
        # A choice: safe mode on or off.
        safe = bob.run_command(self.herald, "safemode")
        self.assertEqual(safe["form"][0]["options"], ["show", "on", "off"], safe)
        on = bob.run_command(self.herald, "safemode", session=safe["sessionid"],
                             fields={"mode": "on"})
        self.assertIn("Safe mode is on", on["note"], on)

    def test_an_admin_lets_someone_in_and_sends_herald_into_a_room(self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm), allowed=("alice@localhost",),
                                 admins=("alice@localhost",))
        alice = self.client("alice")  # an admin
        bob = self.client("bob")      # not allowed yet
        self.wait_online(alice, agent)
        self.assertIsNone(bob.ask(self.herald, "/ping", timeout=SILENCE),
                          "bob is not allowed yet and must get silence")

        # The allowlist from Gajim's or Cheogram's command menu: a form, then the change.
        form = alice.run_command(self.herald, "allowlist")
        self.assertEqual([field["var"] for field in form.get("form", [])], ["action", "entry"],
                         form)
        self.assertEqual(form["form"][0]["options"], ["show", "add", "remove"], form)
        done = alice.run_command(self.herald, "allowlist", session=form["sessionid"],
                                 fields={"action": "add", "entry": "bob@localhost"})
        self.assertTrue(done.get("note", "").startswith("Added bob@localhost to the allowlist."),
                        f"{done}\n{self.diagnosis()}")
        self.assertEqual(bob.ask(self.herald, "/ping", timeout=ANSWER), "pong", self.diagnosis())
        self.assertNotIn("allowlist", [node for node, _ in bob.commands_of(self.herald)])

        # A room, from chat: Herald joins it, answering everything there, and leaves it again.
        reply = self.ask(alice, f"/rooms join {self.room} all")
        self.assertTrue(reply.startswith(f"Joining {self.room}"), reply)
        self.wait_for_herald_room(alice)
        self.join_room(alice)
        alice.say_in_room(self.room, "hello everyone")
        said = alice.room_messages(self.room, within=ANSWER, count=1)
        self.assertEqual(said, [("herald", "you said: alice: hello everyone")],
                         self.diagnosis())
        self.assertEqual(self.ask(alice, f"/rooms leave {self.room}"), f"Left {self.room}.")
        self.assertTrue(self.ask(alice, "/rooms").startswith("Herald is in no room."))

    def test_a_stranger_may_not_list_or_run_commands(self):
        agent = self.start_agent()
        alice = self.client("alice")
        bob = self.client("bob")  # not allowed
        self.wait_online(alice, agent)
        with self.assertRaises(ClientError) as refused:
            bob.commands_of(self.herald)
        self.assertEqual(str(refused.exception), "forbidden")
        self.assertEqual(bob.run_command(self.herald, "ping"), {"error": "forbidden"})


class ProsodyAdhocTest(_AdhocTests, unittest.TestCase):
    server_class = Prosody


class EjabberdAdhocTest(_AdhocTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
