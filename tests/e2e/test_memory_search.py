"""End to end: memory search (M3, M4) with the real Herald binary through real Prosody and
ejabberd.

Herald runs on the fake LLM in the OpenAI format, which also serves /v1/embeddings (a bag of
words with a few synonyms folded together, so "feline" is "cat": tests/fakes/fake_embeddings.h),
with `[memory] embeddings_model` set — the hybrid path. The fake calls memory_search with
the rest of a message that starts with "recall:", and answers "Memory says: <result>".

    tests/e2e/run bazel-bin/component/herald test_memory_search
"""

import os
import time
import unittest

from agent import Agent, component_config, runtime_sections
from servers import Ejabberd, Prosody
from test_conversation import ANSWER, _ConversationBase

REINDEXED = 10.0  # an edit by hand is re-read and embedded


class _MemorySearchTests(_ConversationBase):

    def start_memory_agent(self):
        llm = self.fake_llm("openai")
        config = component_config(self.server, allowed_jids=("alice@localhost", "bob@localhost"),
                                  admin_jids=("alice@localhost",))
        config += runtime_sections(llm=self.llm_keys(llm),
                                   skills=("memory_search",),
                                   memory={"embeddings_model": "openai:fake-embed",
                                           "embeddings_cache_path": "data/embeddings.db"})
        agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(agent.stop)
        self.agent = agent
        return llm, agent

    def recall(self, client, query):
        reply = self.ask(client, f"recall: {query}")
        self.assertTrue(reply.startswith("Memory says: "), f"{reply!r}\n{self.diagnosis()}")
        return reply

    def test_shared_notes_and_edits_by_hand_are_found_by_meaning_and_private_memory_is_not(self):
        llm, agent = self.start_memory_agent()
        alice = self.client("alice")
        bob = self.client("bob")
        self.wait_online(alice, agent)
        self.wait_online(bob, agent)

        # Alice is an admin, so a shared writer; Bob is not.
        self.assertEqual(self.ask(alice, "/remember shared Our cat Biscuit guards the office."),
                         "Noted in shared memory: everyone's memory search can find it now.")
        self.assertEqual(self.ask(bob, "/remember shared Free pizza for everyone."),
                         "Only shared writers ([memory] shared_writers) can add to shared "
                         "memory.")
        self.assertEqual(self.ask(bob, "/remember My kitten is named Shadow."),
                         "Noted: your memory search can find it now.")
        self.assertEqual(self.ask(alice, "I told my sister about my kitty Pepper."),
                         "you said: I told my sister about my kitty Pepper.")

        # "feline" shares no word with any of it: only the vector path finds the cats. Each
        # search sees its asker's memory and the shared folder, nothing else.
        said = self.recall(bob, "feline")
        self.assertIn("[shared/herald-notes.md", said, self.diagnosis())
        self.assertIn("Our cat Biscuit guards the office.", said)
        self.assertIn("[notes.md", said)
        self.assertIn("My kitten is named Shadow.", said)
        self.assertNotIn("Pepper", said, "Bob's search returned Alice's memory")
        self.assertNotIn("pizza", said, "a refused shared note was kept")
        said = self.recall(alice, "feline")
        self.assertIn("Pepper", said)
        self.assertIn("Biscuit", said)
        self.assertNotIn("Shadow", said, "Alice's search returned Bob's memory")
        self.assertNotIn("recall: feline", said, "the question found itself")

        # An operator adds a page by hand: it is re-read and embedded before anyone asks.
        shared = os.path.join(agent.memory_dir, "shared")
        embedded_before = len(llm.embedding_requests())
        with open(os.path.join(shared, "visitors.md"), "w", encoding="utf-8") as page:
            page.write("# Visitors\n\nA kitty may visit the office on Fridays.\n")
        deadline = time.monotonic() + REINDEXED
        while len(llm.embedding_requests()) == embedded_before and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertGreater(len(llm.embedding_requests()), embedded_before,
                           f"the edit was not re-indexed\n{self.diagnosis()}")
        said = self.recall(bob, "feline visits")
        self.assertIn("[shared/visitors.md", said, self.diagnosis())
        self.assertIn("A kitty may visit the office on Fridays.", said)
        self.assertNotIn("Pepper", said)


class ProsodyMemorySearchTest(_MemorySearchTests, unittest.TestCase):
    server_class = Prosody


class EjabberdMemorySearchTest(_MemorySearchTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
