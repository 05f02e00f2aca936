"""End to end: conversations with the real Herald binary through real Prosody and ejabberd.

Herald runs as the server's component with an LLM that is a local fake
(tests/fakes/fake_llm_main, see fake_llm.py: it calls current_time when asked about the time,
answers "The time is <result>." with the tool's result, echoes "you said: <text>", and
takes 5 s for a message that mentions "slow"), or with no LLM at all (the scripted
provider). Each test starts its own fake and its own Herald; the server is shared by the
class. What the tests read back — the fake's request log and Herald's memory folder — is
what an operator would look at.

    tests/e2e/run bazel-bin/component/herald test_conversation
"""

import datetime
import hashlib
import os
import re
import time
import unittest

from agent import Agent, agent_program, component_config, runtime_sections
from client import Client, ClientError
from fake_llm import FakeLlm, fake_llm_program
from memory_files import read_history, room_folder, user_folder
from servers import Ejabberd, Prosody, free_port, tail

# Generous bounds: they only matter when something is broken.
ONLINE = 20.0         # agent start + connect + one /ping round trip
ANSWER = 15.0         # one turn through the fake LLM (two calls for a tool round)
SILENCE = 3.0         # how long a message that must not be answered is watched (an
                      # answered one, through the fake LLM, takes milliseconds on loopback)
ROOM_READY = 20.0     # Herald has created (or joined) its room
FILES = 5.0           # the memory write that follows a reply
SLOW = 5              # seconds the fake takes for a "slow" message (fake_llm_main's flag)
QUICK = 2.0           # the bound on the other user's reply while the slow one runs

ROOM_NAME = "lobby"


def _echo_agent():
    return os.environ.get("HERALD_E2E_AGENT") == "echo"


class _ConversationBase:
    server_class = None

    @classmethod
    def setUpClass(cls):
        if _echo_agent():
            raise unittest.SkipTest("the echo stand-in has no agent runtime: these tests need "
                                    "the herald binary")
        agent_program()      # a wrong HERALD_E2E_AGENT fails here, before any server starts
        fake_llm_program()   # and so does a missing fake LLM
        cls.server = cls.server_class()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    @property
    def herald(self):
        return self.server.component_domain

    @property
    def room(self):
        """The test's own room: a room outlives a test on the class's server, and with its
        archive (XEP-0313) it would bring one test's talk into the next."""
        test = hashlib.sha1(self.id().encode()).hexdigest()[:8]
        return f"{ROOM_NAME}-{test}@{self.server.muc_domain}"

    # Starting things; each is stopped when the test ends, whatever happens.
    def fake_llm(self, wire_format="anthropic", tls=False):
        llm = FakeLlm(wire_format, slow_seconds=SLOW, tls=tls)
        self.addCleanup(llm.stop)
        self.llm = llm
        return llm

    def llm_keys(self, llm):
        """[llm] keys that make `llm` Herald's only model, with quick failures."""
        return {"default": f"{llm.format}:fake", "max_retries": 0,
                "connect_timeout_seconds": 2, "request_timeout_seconds": 20,
                llm.format: ({"host": llm.base_url} if llm.format == "ollama"
                             else {"base_url": llm.base_url, "api_key": "e2e-not-a-secret"})}

    def start_agent(self, llm_keys=None, allowed=("alice@localhost",), rooms=(), admins=()):
        config = component_config(self.server, allowed_jids=allowed,
                                  admin_jids=admins) + runtime_sections(llm=llm_keys, rooms=rooms)
        agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(agent.stop)
        self.agent = agent
        return agent

    def alice_in_room_with_herald(self):
        """Herald on the fake LLM in the test room (answering mentions) and alice, online
        and in the room too; alice's client."""
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm), rooms=[
            {"jid": self.room, "nick": "herald", "activation": "mention"}])
        alice = self.client("alice")
        self.wait_online(alice, agent)
        self.wait_for_herald_room(alice)
        self.join_room(alice)
        return alice

    def client(self, user, plugins=()):
        c = Client(self.server, user, plugins=plugins)
        c.connect()
        self.addCleanup(c.close)
        return c

    # Waiting and diagnosing.
    def diagnosis(self):
        parts = []
        if getattr(self, "agent", None) is not None:
            parts.append(f"--- the agent's log ---\n{self.agent.log()}")
        if getattr(self, "llm", None) is not None and self.llm.dir is not None:
            parts.append(f"--- the fake LLM's requests ---\n{self.llm.requests()}\n"
                         f"--- its console ---\n{self.llm.log()}")
        parts.append(f"--- tail of {self.server.name}'s log ---\n"
                     f"{tail(self.server.log_file, 15)}")
        return "\n".join(parts)

    def wait_online(self, client, agent):
        """Pings every second until Herald answers; fails at once if it dies."""
        deadline = time.monotonic() + ONLINE
        while time.monotonic() < deadline:
            code = agent.exit_code()
            if code is not None:
                self.fail(f"the agent exited with {code} before answering\n{self.diagnosis()}")
            if client.ask(self.herald, "/ping", timeout=1.0) is not None:
                client.discard_pending()
                return
        self.fail(f"the agent did not answer /ping within {ONLINE:.0f}s\n{self.diagnosis()}")

    def ask(self, client, body, timeout=ANSWER):
        reply = client.ask(self.herald, body, timeout=timeout)
        self.assertIsNotNone(reply, f"no answer to {body!r} within {timeout:.0f}s\n"
                                    f"{self.diagnosis()}")
        return reply

    def wait_for_herald_room(self, client):
        """Waits until Herald has created its room: it exists (and is open) for `client`."""
        deadline = time.monotonic() + ROOM_READY
        while not client.exists(self.room, timeout=2):
            if time.monotonic() > deadline:
                self.fail(f"Herald did not create {self.room}\n{self.diagnosis()}")
            time.sleep(0.2)

    def join_room(self, client):
        """Joins, retrying while the room is still locked by its creator's configuration."""
        deadline = time.monotonic() + ROOM_READY
        while True:
            try:
                return client.join_room(self.room, "alice")
            except ClientError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)

    def history_of(self, jid, count):
        """alice's history.md once it holds at least count entries (the write follows the
        reply), or whatever it holds after FILES seconds."""
        path = os.path.join(user_folder(self.agent.memory_dir, jid), "history.md")
        deadline = time.monotonic() + FILES
        while True:
            entries = read_history(path)
            if len(entries) >= count or time.monotonic() >= deadline:
                return entries
            time.sleep(0.05)

    def assertLooksLikeNow(self, text):
        year = datetime.datetime.now(datetime.timezone.utc).year
        self.assertRegex(text, rf"{year}|{year - 1}|\d\d:\d\d",
                         f"{text!r} does not look like the current time")


class _ConversationTests(_ConversationBase):
    """What Herald must do on every server."""

    def test_a_question_about_the_time_is_answered_with_the_result_of_the_tool(self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm))
        alice = self.client("alice")
        self.wait_online(alice, agent)

        reply = self.ask(alice, "what time is it?")

        requests = llm.wait_for_requests(2, timeout=2)
        self.assertEqual(len(requests), 2, f"expected a tool round trip\n{self.diagnosis()}")
        first, second = requests
        self.assertEqual(first["last_user_text"], "what time is it?")
        self.assertIn("current_time", first["tools"])
        self.assertIn("memory_recall", first["tools"])
        self.assertIsNone(first["tool_result"])
        self.assertIsNotNone(second["tool_result"], "the second call did not carry the result")
        self.assertLooksLikeNow(second["tool_result"])
        self.assertEqual(reply, f"The time is {second['tool_result']}.")
        self.assertNotIn("e2e-not-a-secret", agent.log(), "the API key reached the log")

    def test_a_room_mention_is_answered_and_other_room_talk_is_not(self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm), rooms=[
            {"jid": self.room, "nick": "herald", "activation": "mention"}])
        alice = self.client("alice")
        self.wait_online(alice, agent)

        # Herald creates the room: it exists (and is open) before anyone else arrives.
        self.wait_for_herald_room(alice)
        occupants, created = self.join_room(alice)
        self.assertFalse(created, "alice created the room: Herald had not")
        self.assertIn("herald", occupants)

        alice.say_in_room(self.room, "herald: hello")
        said = alice.room_messages(self.room, within=ANSWER, count=1)
        self.assertEqual(len(said), 1, f"no answer in the room\n{self.diagnosis()}")
        nick, body = said[0]
        self.assertEqual(nick, "herald")
        self.assertEqual(body, "you said: alice: herald: hello")
        self.assertEqual(llm.requests()[0]["last_user_text"], "alice: herald: hello")

        alice.say_in_room(self.room, "hello everyone")
        self.assertEqual(alice.room_messages(self.room, within=SILENCE), [],
                         "Herald answered a message that did not mention it")
        self.assertEqual(len(llm.requests()), 1, "a message without mention reached the LLM")

        # The room has its own memory: the mention and the answer, not the other message.
        path = os.path.join(room_folder(agent.memory_dir, self.room), "history.md")
        texts = [(e.role, e.author, e.text) for e in read_history(path)]
        self.assertEqual(texts, [("user", "alice", "herald: hello"),
                                 ("assistant", "Herald", "you said: alice: herald: hello")])

    def test_a_destroyed_room_is_left_and_not_created_again(self):
        room = f"doomed@{self.server.muc_domain}"
        alice = self.client("alice")
        _, created = alice.join_room(room, "alice")
        self.assertTrue(created, "the room existed before the test")  # alice owns it
        agent = self.start_agent(self.llm_keys(self.fake_llm()), rooms=[
            {"jid": room, "nick": "herald", "activation": "mention"}])
        self.assertTrue(alice.occupant_arrives(room, "herald", within=ROOM_READY),
                        f"Herald did not join {room}\n{self.diagnosis()}")

        alice.destroy_room(room, reason="moving on", alternate=self.room)
        deadline = time.monotonic() + ROOM_READY
        while "was destroyed" not in agent.log():
            if time.monotonic() > deadline:
                self.fail(f"Herald did not see {room} destroyed\n{self.diagnosis()}")
            time.sleep(0.2)
        self.assertIn("moving on", agent.log())
        # A rejoin would create the room again: the first comes after rejoin_initial (2 s)
        # at most, so twice that and the join's round trip is enough to see one.
        time.sleep(5)
        self.assertFalse(alice.exists(room, timeout=2),
                         f"Herald created {room} again\n{self.diagnosis()}")
        self.assertIn("not rejoining", agent.log())

    def test_both_sides_of_a_conversation_are_written_to_the_users_history(self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm))
        alice = self.client("alice")
        self.wait_online(alice, agent)
        tricky = "### not a heading\n```\ncode\n```\n---\nrenée's café ☕"

        first = self.ask(alice, "My cat is called Tom.")
        second = self.ask(alice, tricky)

        self.assertEqual(first, "you said: My cat is called Tom.")
        self.assertEqual(second, "you said: " + tricky)
        entries = self.history_of("alice@localhost", 4)
        self.assertEqual([(e.role, e.author, e.text) for e in entries], [
            ("user", "alice@localhost", "My cat is called Tom."),
            ("assistant", "Herald", first),
            ("user", "alice@localhost", tricky),
            ("assistant", "Herald", second),
        ])
        # The model saw the session so far with the second message.
        self.assertEqual(llm.requests()[1]["messages"], 3)
        # /history reads the same file back, without calling the model.
        shown = self.ask(alice, "/history")
        self.assertIn("alice@localhost: My cat is called Tom.", shown)
        self.assertIn("Herald: you said: My cat is called Tom.", shown)
        self.assertEqual(len(llm.requests()), 2, "/history reached the LLM")

    def test_new_archives_the_session_and_starts_an_empty_one(self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm))
        alice = self.client("alice")
        self.wait_online(alice, agent)
        self.ask(alice, "Remember the number 4711.")
        before = self.history_of("alice@localhost", 2)
        self.assertEqual(len(before), 2, f"the exchange was not saved\n{self.diagnosis()}")

        reply = self.ask(alice, "/new")

        folder = user_folder(agent.memory_dir, "alice@localhost")
        sessions = sorted(os.listdir(os.path.join(folder, "sessions")))
        self.assertEqual(len(sessions), 1, f"sessions/ holds {sessions}")
        self.assertRegex(sessions[0], r"^\d{8}-\d{6}(-\d+)?\.md$")
        self.assertIn(f"sessions/{sessions[0]}", reply)
        self.assertEqual(read_history(os.path.join(folder, "sessions", sessions[0])), before)
        history = os.path.join(folder, "history.md")
        self.assertTrue(not os.path.exists(history) or os.path.getsize(history) == 0,
                        "history.md still holds the archived session")
        self.assertEqual(len(llm.requests()), 1, "/new reached the LLM")
        # The next message starts from an empty session: the model sees it alone.
        self.ask(alice, "And now?")
        self.assertEqual(llm.wait_for_requests(2, timeout=2)[1]["messages"], 1)

    def test_a_slow_answer_for_one_user_does_not_hold_up_another(self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm),
                                 allowed=("alice@localhost", "bob@localhost"))
        alice = self.client("alice")
        bob = self.client("bob")
        self.wait_online(alice, agent)
        self.wait_online(bob, agent)

        asked = time.monotonic()
        alice.send(self.herald, "slow question")
        self.assertEqual(len(llm.wait_for_requests(1, timeout=ANSWER)), 1,
                         f"alice's question did not reach the LLM\n{self.diagnosis()}")
        bob_asked = time.monotonic()
        bob.send(self.herald, "quick")
        bob_replies = bob.replies_from(self.herald, within=QUICK, count=1)
        bob_waited = time.monotonic() - bob_asked
        self.assertEqual(bob_replies, ["you said: quick"],
                         f"bob had no answer within {QUICK}s while alice's was pending\n"
                         f"{self.diagnosis()}")

        alice_replies = alice.replies_from(self.herald, within=ANSWER, count=1)
        alice_waited = time.monotonic() - asked
        self.assertEqual(alice_replies, ["you said: slow question"])
        # Alice's answer could not come before the fake's delay; bob's came well before.
        self.assertGreaterEqual(alice_waited, SLOW - 0.5)
        self.assertLess(bob_waited, QUICK)
        self.assertLess(bob_asked - asked + bob_waited, SLOW - 0.5,
                        "bob's answer did not arrive before alice's could have")

    def test_a_provider_that_is_down_fails_over_to_the_fallback(self):
        llm = self.fake_llm("anthropic")
        closed = free_port()  # nothing listens there
        keys = {"default": "openai:dead", "fallback": ["anthropic:fake"], "max_retries": 0,
                "connect_timeout_seconds": 2, "request_timeout_seconds": 20,
                "openai": {"base_url": f"http://127.0.0.1:{closed}/v1",
                           "api_key": "e2e-not-a-secret"},
                "anthropic": {"base_url": llm.base_url, "api_key": "e2e-not-a-secret"}}
        agent = self.start_agent(keys)
        alice = self.client("alice")
        self.wait_online(alice, agent)

        reply = self.ask(alice, "are you there?")

        self.assertEqual(reply, "you said: are you there?")
        requests = llm.requests()
        self.assertEqual(len(requests), 1)
        self.assertEqual(requests[0]["path"], "/v1/messages")
        self.assertEqual(requests[0]["model"], "fake")
        # The default was tried first and its failure logged, naming both models.
        failover = [line for line in agent.log().splitlines()
                    if "openai:dead" in line and "anthropic:fake" in line]
        self.assertTrue(failover, f"no log line tells of the failover\n{self.diagnosis()}")
        self.assertNotIn("e2e-not-a-secret", agent.log(), "the API key reached the log")

    def test_without_a_model_the_scripted_provider_answers_with_the_time_tool(self):
        agent = self.start_agent(llm_keys=None)
        alice = self.client("alice")
        self.wait_online(alice, agent)

        reply = self.ask(alice, "What time is it?")

        entries = self.history_of("alice@localhost", 3)
        self.assertEqual([(e.role, e.author) for e in entries],
                         [("user", "alice@localhost"), ("tool", "current_time"),
                          ("assistant", "Herald")], f"\n{self.diagnosis()}")
        call = re.fullmatch(r"\{\} → (.*)", entries[1].text, re.S)
        self.assertIsNotNone(call, f"unexpected tool entry {entries[1].text!r}")
        self.assertLooksLikeNow(call.group(1))
        self.assertEqual(reply, f"It is {call.group(1)}.")
        self.assertEqual(entries[2].text, reply)


class ProsodyConversationTest(_ConversationTests, unittest.TestCase):
    server_class = Prosody


class EjabberdConversationTest(_ConversationTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
