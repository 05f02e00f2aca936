"""What the tests of files and voice share (test_attachments, test_media_out): a real server
with its upload service, Herald as its component on a fake LLM, and alice, a real client.

    class PicturesTest(UploadServiceCase, unittest.TestCase):
        server_class = Prosody
        def test_x(self):
            self.start_herald(config_text, FakeLlm("anthropic"))
"""

import os
import time
import unittest

from agent import Agent, agent_program
from client import Client
from fake_llm import fake_llm_program
from servers import tail

ONLINE = 20.0  # Herald started, online, and its upload service trusted


class UploadServiceCase:
    """A mixin for unittest.TestCase; `server_class` is a server of servers.py."""

    server_class = None

    @classmethod
    def setUpClass(cls):
        if os.environ.get("HERALD_E2E_AGENT") == "echo":
            raise unittest.SkipTest("the echo stand-in handles no files")
        agent_program()
        fake_llm_program()
        cls.server = cls.server_class()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    @property
    def herald(self):
        return self.server.component_domain

    def start_herald(self, config, llm):
        """Starts Herald with `config` on `llm` (a FakeLlm, stopped after the test) and alice,
        and waits until Herald answers alice and trusts the server's upload service."""
        self.llm = llm
        self.addCleanup(self.llm.stop)
        self.agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(self.agent.stop)
        self.alice = Client(self.server, "alice")
        self.alice.connect()
        self.addCleanup(self.alice.close)
        deadline = time.monotonic() + ONLINE
        while time.monotonic() < deadline:
            if self.agent.exit_code() is not None:
                self.fail(f"herald exited with {self.agent.exit_code()}\n{self.diagnosis()}")
            if ("files under http://localhost:" in self.agent.log()
                    and self.alice.ask(self.herald, "/ping", timeout=1.0) is not None):
                self.alice.discard_pending()
                return
            time.sleep(0.1)
        self.fail(f"herald was not online with its upload service trusted within "
                  f"{ONLINE:.0f}s\n{self.diagnosis()}")

    def diagnosis(self):
        return "\n".join([f"--- the agent's log ---\n{self.agent.log()}",
                          f"--- the fake LLM's requests ---\n{self.llm.requests()}",
                          f"--- tail of {self.server.name}'s log ---\n"
                          f"{tail(self.server.log_file, 15)}"])
