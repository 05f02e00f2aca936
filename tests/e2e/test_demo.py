"""End to end: tools/demo's conversation (tests/e2e/demo.py) with the real Herald binary.

With no API key in the environment the demo runs on the scripted provider and its
transcript shows a tool call; with a key (or OLLAMA_HOST) it uses that provider — here a
local fake, reached through the *_BASE_URL variables the demo honours, so nothing leaves
the machine.

    tests/e2e/run bazel-bin/component/herald test_demo
"""

import os
import stat
import subprocess
import sys
import tempfile
import types
import unittest

from agent import agent_program
from demo import choose_llm, operator_lines, write_token_file
from fake_llm import FakeLlm, fake_llm_program

HERE = os.path.dirname(os.path.abspath(__file__))
DEMO_TIMEOUT = 120  # the whole demo, Prosody's start included
MODEL_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY",
                   "OPENAI_BASE_URL", "OLLAMA_HOST", "HERALD_DEMO_MODEL")


class ProviderChoiceTest(unittest.TestCase):
    """Which model the demo's config names, from the environment alone (no servers)."""

    def test_no_variable_leaves_the_llm_section_out_so_the_scripted_provider_answers(self):
        keys, described = choose_llm({})
        self.assertIsNone(keys)
        self.assertIn("scripted:demo", described)

    def test_an_anthropic_key_wins_and_reaches_herald_only_through_its_environment(self):
        keys, _ = choose_llm({"ANTHROPIC_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o",
                              "OLLAMA_HOST": "http://127.0.0.1:1"})
        self.assertEqual(keys, {"default": "anthropic:claude-sonnet-4-5",
                                "anthropic": {"api_key": "${ANTHROPIC_API_KEY}"}})

    def test_an_openai_key_comes_before_an_ollama_host(self):
        keys, _ = choose_llm({"OPENAI_API_KEY": "sk-o", "OLLAMA_HOST": "http://127.0.0.1:1",
                              "HERALD_DEMO_MODEL": "gpt-4.1"})
        self.assertEqual(keys, {"default": "openai:gpt-4.1",
                                "openai": {"api_key": "${OPENAI_API_KEY}"}})

    def test_an_ollama_host_without_a_scheme_becomes_a_url(self):
        keys, _ = choose_llm({"OLLAMA_HOST": "127.0.0.1:11434"})
        self.assertEqual(keys, {"default": "ollama:llama3.1",
                                "ollama": {"host": "http://127.0.0.1:11434"}})


class OperatorSummaryTest(unittest.TestCase):
    """What --keep prints for the operator's side, from a made-up demo (no servers)."""

    def test_the_summary_names_the_addresses_and_the_token_file_but_never_the_token(self):
        token = "t0ken-made-for-this-demo-only"
        with tempfile.TemporaryDirectory() as folder:
            path = write_token_file(folder, token)
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
            with open(path) as f:
                self.assertEqual(f.read(), token + "\n")
            lines = operator_lines(types.SimpleNamespace(dir=folder),
                                   {"http_port": 41234, "token_file": path}, "bin/heraldctl")
        self.assertIn("http://127.0.0.1:41234/console/", lines)
        self.assertIn("http://127.0.0.1:41234/metrics", lines)
        self.assertIn("http://127.0.0.1:41234/api/", lines)
        self.assertIn(f"bin/heraldctl --target unix:{folder}/data/control.sock "
                      f"--token-file {path} status", lines)
        self.assertNotIn(token, lines)


class DemoTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get("HERALD_E2E_AGENT") == "echo":
            raise unittest.SkipTest("the demo's transcript needs the herald binary, not the "
                                    "echo stand-in")
        cls.herald = agent_program()[0]

    def run_demo(self, expect_success=True, **variables):
        env = {k: v for k, v in os.environ.items() if k not in MODEL_VARIABLES}
        env.update(variables)
        done = subprocess.run([sys.executable, os.path.join(HERE, "demo.py"),
                               "--agent", self.herald], env=env, cwd=HERE,
                              capture_output=True, text=True, timeout=DEMO_TIMEOUT)
        transcript = done.stdout + done.stderr
        if expect_success:
            self.assertEqual(done.returncode, 0, f"the demo failed:\n{transcript}")
        else:
            self.assertNotEqual(done.returncode, 0, f"the demo did not fail:\n{transcript}")
        return transcript

    def test_without_an_api_key_the_transcript_shows_the_scripted_provider_calling_tools(self):
        transcript = self.run_demo()
        self.assertIn("model: scripted:demo", transcript)
        self.assertRegex(transcript, r"\[tool\] +current_time \{\} → ")
        self.assertRegex(transcript, r"herald → alice: It is \S")
        self.assertRegex(transcript, r'\[tool\] +memory_recall \{"query":"my favourite colour"\}')
        self.assertRegex(transcript, r"favourite colour is green")
        self.assertRegex(transcript, r"\n  herald: Hello! I'm Herald")  # in the room

    def test_an_api_key_in_the_environment_makes_the_demo_use_that_provider(self):
        key = "sk-e2e-demo-key"
        with FakeLlm("anthropic", api_key=key) as llm:
            transcript = self.run_demo(ANTHROPIC_API_KEY=key, ANTHROPIC_BASE_URL=llm.base_url)
            requests = llm.requests()
        self.assertIn("model: anthropic:claude-sonnet-4-5", transcript)
        # The fake refuses requests without the key: answers prove Herald sent it.
        self.assertRegex(transcript, r"herald → alice: The time is \S")
        self.assertIn("herald → alice: you said: Hello Herald!", transcript)
        self.assertTrue(requests)
        self.assertEqual({r["model"] for r in requests}, {"claude-sonnet-4-5"})
        self.assertNotIn(key, transcript, "the API key appeared in the demo's output")

    def test_a_refused_api_key_fails_the_demo_and_shows_why(self):
        with FakeLlm("anthropic", api_key="the-right-key") as llm:
            transcript = self.run_demo(expect_success=False, ANTHROPIC_API_KEY="a-wrong-key",
                                       ANTHROPIC_BASE_URL=llm.base_url)
        self.assertIn("Demo FAILED", transcript)
        self.assertIn("could not get an answer from its model", transcript)
        self.assertIn("--- Herald's log ---", transcript)
        self.assertRegex(transcript, r"conversation c\d+/\d+: .*401")
        self.assertNotIn("a-wrong-key", transcript, "the API key appeared in the demo's output")

    def test_an_ollama_host_in_the_environment_makes_the_demo_use_ollama(self):
        fake_llm_program()
        with FakeLlm("ollama") as llm:
            transcript = self.run_demo(OLLAMA_HOST=f"127.0.0.1:{llm.port}")
            requests = llm.requests()
        self.assertIn("model: ollama:llama3.1", transcript)
        self.assertRegex(transcript, r"herald → alice: The time is \S")
        self.assertTrue(requests)
        self.assertEqual({r["path"] for r in requests}, {"/api/chat"})


if __name__ == "__main__":
    unittest.main()
