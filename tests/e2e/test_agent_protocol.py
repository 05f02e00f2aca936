"""End to end: the agent protocol (urn:herald:agent:0) and delegation, on real Prosody and ejabberd.

Two Heralds share one server: A is the component at agent.localhost and B logs in as
herald@localhost. A's model (the scripted provider) calls the `delegate` skill, which asks B
over IQ to run a skill or answer a question; the answer comes back to alice through A. A
plain XMPP client (bob, a peer with the read scope only) lists B's skills, is refused what its
scope does not allow and a request that went round too many agents; alice, no peer at all, is
refused everything.

    tests/e2e/run bazel-bin/component/herald test_agent_protocol
"""

import json
import os
import shutil
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

from slixmpp.exceptions import IqError

from agent import Agent, client_config, component_config, runtime_sections
from servers import Ejabberd, Prosody
from test_control import SOCKET, TOKEN, control_section, run_heraldctl
from test_conversation import ANSWER, _ConversationBase

AGENT_NS = "urn:herald:agent:0"
STANZAS = "urn:ietf:params:xml:ns:xmpp-stanzas"

A_RULES = """
[[rule]]
name = "after the delegation"
after_tool = "delegate"
reply = "From b: {tool_result}"

[[rule]]
name = "a skill of b's"
starts_with = "ask b the time"
tool = "delegate"
arguments = { agent = "b", skill = "current_time", arguments = {} }

[[rule]]
name = "a question for b"
starts_with = "ask b about the weather"
tool = "delegate"
arguments = { agent = "b", question = "What is the weather over there?" }

[[rule]]
name = "a skill of b's, over b's control plane"
starts_with = "ask b over grpc the time"
tool = "delegate"
arguments = { agent = "b-grpc", skill = "current_time", arguments = {} }

[[rule]]
name = "a question for b, over b's control plane"
starts_with = "ask b over grpc about the weather"
tool = "delegate"
arguments = { agent = "b-grpc", question = "What is the weather over there?" }

[[rule]]
name = "a skill b does not have"
starts_with = "ask b to fly"
tool = "delegate"
arguments = { agent = "b", skill = "fly" }

[[rule]]
name = "a loop: ask b, who asks back"
contains = "ping-pong"
tool = "delegate"
arguments = { agent = "b", question = "ping-pong" }

[[rule]]
name = "fallback"
reply = "Ask me to ask b."
"""

B_RULES = """
[[rule]]
name = "after the delegation"
after_tool = "delegate"
reply = "From a: {tool_result}"

[[rule]]
name = "a loop: ask a, who asks back"
contains = "ping-pong"
tool = "delegate"
arguments = { agent = "a", question = "ping-pong" }

[[rule]]
name = "the weather"
contains = "what is the weather"
reply = "Sunny over at B."

[[rule]]
name = "fallback"
reply = "B here."
"""


class _AgentProtocolTests(_ConversationBase):

    def rules_file(self, name, text):
        folder = tempfile.mkdtemp(prefix="herald-e2e-agents-")
        self.addCleanup(shutil.rmtree, folder, True)
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    @property
    def b_jid(self):
        return self.server.jid("herald") + "/herald"

    def start_b(self, delegates_to_a=False):
        """B: herald@localhost in client mode, serving A (every scope) and bob (read only);
        with delegates_to_a, its model may ask A too."""
        config = (client_config(self.server)
                  + runtime_sections(llm={"default": "scripted:b",
                                          "scripted": {"rules_file": self.rules_file(
                                              "b.toml", B_RULES)}},
                                     skills=("current_time", "delegate")))
        if delegates_to_a:
            config += f"""
[[delegate.agent]]
name = "a"
jid = "{self.server.component_domain}"
timeout_seconds = 30
"""
        config += control_section()
        config += f"""
[agent_protocol]
enabled = true
max_hops = 3

[[agent_protocol.peer]]
jid = "{self.server.component_domain}"
scopes = ["read", "execute", "operate"]

[[agent_protocol.peer]]
jid = "{self.server.jid('bob')}"
scopes = ["read"]
"""
        b = Agent.start(config)
        self.addCleanup(b.stop)
        self.b = b
        return b

    def start_a(self, serves_b=False):
        """A: the component, whose model delegates to B; with serves_b, B may ask it too."""
        config = (component_config(self.server)
                  + runtime_sections(llm={"default": "scripted:a",
                                          "scripted": {"rules_file": self.rules_file(
                                              "a.toml", A_RULES)}},
                                     skills=("delegate",)))
        config += f"""
[[delegate.agent]]
name = "b"
description = "the other Herald"
jid = "{self.b_jid}"
timeout_seconds = 30

[[delegate.agent]]
name = "b-grpc"
description = "the other Herald, through its control plane"
grpc = "unix:{os.path.join(self.b.dir, SOCKET)}"
token = "{TOKEN}"
timeout_seconds = 30
"""
        if serves_b:
            config += f"""
[agent_protocol]
enabled = true
max_hops = 3

[[agent_protocol.peer]]
jid = "{self.server.jid('herald')}"
scopes = ["operate"]
"""
        a = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(a.stop)
        self.agent = a
        return a

    def diagnosis(self):
        text = super().diagnosis()
        if getattr(self, "b", None) is not None:
            text = f"--- B's log ---\n{self.b.log()}\n" + text
        return text

    def wait_b_online(self, client):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            code = self.b.exit_code()
            if code is not None:
                self.fail(f"B exited with {code}\n{self.diagnosis()}")
            if client.ask(self.server.jid("herald"), "/ping", timeout=1.0) is not None:
                client.discard_pending()
                return
        self.fail(f"B did not answer /ping\n{self.diagnosis()}")

    def both_online(self, loop=False):
        self.start_b(delegates_to_a=loop)
        self.start_a(serves_b=loop)
        alice = self.client("alice")
        self.wait_b_online(alice)
        self.wait_online(alice, self.agent)
        return alice

    # --- an XMPP client speaking the protocol -----------------------------------------------
    def request(self, client, kind, payload_name, attributes=None, children=(), timeout=10.0):
        """Sends one request to B; ("result", element) or ("error", (condition, text))."""
        async def send():
            iq = (client.xmpp.make_iq_get(ito=self.b_jid) if kind == "get"
                  else client.xmpp.make_iq_set(ito=self.b_jid))
            payload = ET.SubElement(iq.xml, f"{{{AGENT_NS}}}{payload_name}", attributes or {})
            for name, text in children:
                ET.SubElement(payload, f"{{{AGENT_NS}}}{name}").text = text
            try:
                result = await iq.send(timeout=timeout)
            except IqError as e:
                # Read from the XML: slixmpp's list of conditions lacks policy-violation.
                error = e.iq.xml.find("{jabber:client}error")
                conditions = [c.tag.split("}")[1] for c in error
                              if c.tag.startswith(f"{{{STANZAS}}}") and not c.tag.endswith("}text")]
                return "error", (conditions[0] if conditions else "",
                                 error.findtext(f"{{{STANZAS}}}text") or "")
            return "result", result.xml
        return client._run(send(), timeout + 2, f"agent protocol {payload_name}")

    def audit_entries(self, action, count=1):
        """B's audit entries of `action`, once there are `count` (the log is written behind)."""
        path = os.path.join(self.b.dir, "data", "audit.log")
        deadline = time.monotonic() + 5
        while True:
            entries = []
            if os.path.exists(path):
                with open(path) as f:
                    entries = [json.loads(line) for line in f if line.strip()]
            found = [e for e in entries if e.get("action") == action]
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    # --- the tests ----------------------------------------------------------------------------
    def test_one_herald_runs_a_skill_of_another_over_iq(self):
        alice = self.both_online()
        asked = time.monotonic()
        answer = self.ask(alice, "ask b the time, please")
        round_trip = time.monotonic() - asked
        self.assertTrue(answer.startswith("From b: "), f"{answer!r}\n{self.diagnosis()}")
        self.assertLooksLikeNow(answer)
        self.assertRegex(answer, r"\(b answered in \d+\.\d s\)")
        [entry] = self.audit_entries("agent_protocol/execute")
        self.assertEqual((entry["actor"], entry["target"], entry["outcome"]),
                         ("xmpp:agent.localhost", "current_time", "OK"))
        print(f"\n[agent protocol] {self.server.name}: alice's question, A's model, A asking B "
              f"over IQ to run current_time, A's answer: {round_trip * 1000:.0f} ms in all")

    def test_one_herald_asks_another_a_question(self):
        alice = self.both_online()
        answer = self.ask(alice, "ask b about the weather")
        self.assertRegex(answer, r"^From b: Sunny over at B\.\n\n\(b answered in \d+\.\d s; "
                                 r"\d+ tokens\)$", self.diagnosis())
        # B kept the question in an API conversation of the peer's, one per conversation of
        # A's that asks (alice's here), so that two of A's users never share B's history.
        api = os.path.join(self.b.memory_dir, "api")
        deadline = time.monotonic() + 5
        folders = []
        while not folders and time.monotonic() < deadline:
            folders = [f for f in os.listdir(api) if f.startswith("peer-agent.localhost_")] \
                if os.path.isdir(api) else []
            time.sleep(0.1)
        self.assertEqual(len(folders), 1, f"{folders}\n{self.diagnosis()}")
        with open(os.path.join(api, folders[0], "history.md")) as f:
            self.assertIn("What is the weather over there?", f.read())

    def test_one_herald_delegates_to_another_over_its_control_plane(self):
        alice = self.both_online()
        answer = self.ask(alice, "ask b over grpc the time")
        self.assertTrue(answer.startswith("From b: "), f"{answer!r}\n{self.diagnosis()}")
        self.assertLooksLikeNow(answer)
        self.assertRegex(answer, r"\(b-grpc answered in \d+\.\d s\)")
        answer = self.ask(alice, "ask b over grpc about the weather")
        self.assertRegex(answer, r"^From b: Sunny over at B\.\n\n\(b-grpc answered in "
                                 r"\d+\.\d s; \d+ tokens\)$", self.diagnosis())
        # B's audit chain holds both calls, made with A's token, and verifies.
        verified = run_heraldctl(self.b.dir, "audit", "verify")
        self.assertEqual(verified.returncode, 0, verified.stdout + verified.stderr)

    def test_two_agents_that_ask_each_other_stop_at_the_hop_limit(self):
        alice = self.both_online(loop=True)
        started = time.monotonic()
        answer = self.ask(alice, "let us play ping-pong", timeout=60)
        took = time.monotonic() - started
        # alice → A → B (hop 1) → A (2) → B (3), whose delegation would be hop 4: not sent.
        self.assertEqual(answer.count("From b: From a: "), 2, f"{answer!r}\n{self.diagnosis()}")
        self.assertIn("already passed through 3 agents", answer)
        self.assertLess(took, 20, "the loop should stop at once, not at a timeout")
        print(f"\n[agent protocol] {self.server.name}: a loop of two agents stopped after 3 "
              f"hops in {took * 1000:.0f} ms")

    def test_a_refusal_of_the_other_agent_reaches_the_model(self):
        alice = self.both_online()
        answer = self.ask(alice, "ask b to fly")
        # The model read the tool's error; the scripted rule quotes it.
        self.assertIn("no skill 'fly'", answer, self.diagnosis())

    def test_a_client_lists_skills_and_is_held_to_its_scope(self):
        self.start_b()
        self.wait_b_online(self.client("alice"))  # bob may not chat with B: alice asks
        bob = self.client("bob")
        features = bob.features_of(self.b_jid)
        self.assertIn(AGENT_NS, features)
        kind, skills = self.request(bob, "get", "skills")
        self.assertEqual(kind, "result", skills)
        listed = {s.get("name"): s for s in skills.find(f"{{{AGENT_NS}}}skills")}
        self.assertEqual(list(listed), ["current_time", "delegate"])
        schema = listed["current_time"].findtext(f"{{{AGENT_NS}}}parameters")
        self.assertTrue(schema.startswith("{"), schema)

        kind, (condition, text) = self.request(bob, "set", "execute", {"skill": "current_time"})
        self.assertEqual((kind, condition), ("error", "forbidden"))
        self.assertIn("lacks the 'execute' scope", text)

        kind, (condition, text) = self.request(bob, "get", "skills", {"hops": "9"})
        self.assertEqual((kind, condition), ("error", "policy-violation"))
        self.assertIn("hop limit 3", text)

        kind, (condition, _) = self.request(bob, "get", "skills", {"hops": "many"})
        self.assertEqual((kind, condition), ("error", "bad-request"))
        refused = self.audit_entries("agent_protocol/execute")
        self.assertEqual([(e["actor"], e["outcome"]) for e in refused],
                         [("xmpp:bob@localhost", "PERMISSION_DENIED")])

    def test_a_stranger_is_refused(self):
        self.start_b()
        alice = self.client("alice")
        self.wait_b_online(alice)
        kind, (condition, text) = self.request(alice, "get", "skills")
        self.assertEqual((kind, condition), ("error", "forbidden"), self.diagnosis())
        self.assertIn("not a peer", text)
        self.assertIn("refused alice@localhost", self.b.log())
        # A peer's request after it is audited; the stranger's before it is not.
        kind, _ = self.request(self.client("bob"), "get", "skills")
        self.assertEqual(kind, "result")
        audited = self.audit_entries("agent_protocol/skills")
        self.assertEqual([e["actor"] for e in audited], ["xmpp:bob@localhost"],
                         "a stranger's request is not audited")


class ProsodyAgentProtocolTest(_AgentProtocolTests, unittest.TestCase):
    server_class = Prosody


class EjabberdAgentProtocolTest(_AgentProtocolTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
