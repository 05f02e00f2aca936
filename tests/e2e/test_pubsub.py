"""End to end: PubSub feeds ([[pubsub]], XEP-0060), through real Prosody and ejabberd.

alice publishes to a node of the server's pubsub service (her first publish creates it);
Herald, configured with the node, subscribes when it comes online. Her next items reach her
in chat from Herald — the Atom entry's title and summary — and, on a node with a prompt, as
the answer of a turn the scripted model gives with the item quoted. An item sent again is
said once.

    tests/e2e/run bazel-bin/component/herald test_pubsub
"""

import os
import shutil
import tempfile
import time
import unittest

from agent import Agent, component_config, runtime_sections
from servers import Ejabberd, Prosody
from test_conversation import ANSWER, _ConversationBase

RULES = """
[[rule]]
name = "a release note"
contains = "a new item was published on node 'releases'"
reply = "New release, summarised."

[[rule]]
name = "fallback"
reply = "ok"
"""


class _PubsubTests(_ConversationBase):

    def start_with_feeds(self):
        folder = tempfile.mkdtemp(prefix="herald-e2e-pubsub-")
        self.addCleanup(shutil.rmtree, folder, True)
        rules = os.path.join(folder, "rules.toml")
        with open(rules, "w") as f:
            f.write(RULES)
        service = self.server.pubsub_domain
        config = (component_config(self.server, allowed_jids=("alice@localhost",))
                  + runtime_sections(llm={"default": "scripted:e2e",
                                          "scripted": {"rules_file": rules}}))
        config += f"""
[[pubsub]]
service = "{service}"
node = "alerts"
to = "alice@localhost"

[[pubsub]]
service = "{service}"
node = "releases"
to = "alice@localhost"
prompt = "Summarise it in one line."
"""
        agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(agent.stop)
        self.agent = agent
        return agent

    def test_items_of_a_subscribed_node_reach_the_chat(self):
        alice = self.client("alice")
        service = self.server.pubsub_domain
        # The nodes exist before Herald comes: alice's first items create them.
        alice.publish(service, "alerts", "a0", "Created", "the node")
        alice.publish(service, "releases", "r0", "Created", "the node")
        agent = self.start_with_feeds()
        self.wait_online(alice, agent)
        # Herald subscribes as it comes online; an item published before its subscription
        # took is not for it, so a few are tried, each with its own id.
        got = []
        for attempt in range(1, 4):
            alice.publish(service, "alerts", f"a{attempt}", "Disk alert", f"db1 at 9{attempt}%")
            got = alice.replies_from(self.herald, within=5, count=1)
            if got:
                break
        self.assertTrue(got, f"no item reached alice\n{self.diagnosis()}")
        self.assertRegex(got[0], r"^Disk alert\ndb1 at 9\d%$")
        alice.publish(service, "alerts", f"a{attempt}", "Disk alert", f"db1 at 9{attempt}%")
        self.assertEqual(alice.replies_from(self.herald, within=2), [],
                         "an item published again under its id is said once")

        alice.publish(service, "releases", "r1", "Herald 1.1", "Schedules, hooks and feeds.")
        self.assertEqual(alice.replies_from(self.herald, within=ANSWER, count=1),
                         ["New release, summarised."], self.diagnosis())


class ProsodyPubsubTest(_PubsubTests, unittest.TestCase):
    server_class = Prosody


class EjabberdPubsubTest(_PubsubTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
