"""End to end: a skill that needs an approval and a credential, through Prosody.

Herald runs as Prosody's component on the scripted provider: "weather CITY" makes it call the
external skill `weather` (a manifest and a small program in a world-readable folder, run in
the sandbox), and any tool result is answered "The weather tool says: <result>". The
operator's rules say every weather run needs a yes, and the skill declares the credential
WEATHER_KEY. So alice's first question pauses the run twice — she approves it, then sends
the key in the chat — and then it completes; the key reaches the program's environment and
nothing else: not the answer, the memory files, the log or the audit log.

    tests/e2e/run bazel-bin/component/herald test_skills
"""

import json
import os
import shutil
import stat
import tempfile
import time
import unittest

from agent import Agent, agent_program, component_config, runtime_sections
from client import Client
from memory_files import read_history, user_folder
from servers import Prosody, tail, wait_until

ONLINE = 20.0
ANSWER = 15.0
FILES = 5.0       # the memory write that follows a reply; the audit log's writer thread
SECRET = "wk-e2e-7f3a9c1d55"

RULES = """
[[rule]]
name = "after any tool"
after_tool = "*"
reply = "The {tool} tool says: {tool_result}"

[[rule]]
name = "weather"
starts_with = "weather"
tool = "weather"
arguments = { city = "{rest}" }

[[rule]]
name = "fallback"
reply = "Ask me about the weather."
"""

MANIFEST = """name = "weather"
description = "Today's weather in a city."
executable = "weather.py"
category = "external"
[parameters]
type = "object"
required = ["city"]
properties.city = { type = "string", maxLength = 100 }
[[credentials]]
name = "WEATHER_KEY"
description = "the API key of your weather.example account"
where_to_get = "https://weather.example/keys"
"""

# Echoes its key back, so that the test sees the runtime redact it.
PROGRAM = """#!/usr/bin/python3
import json, os, sys
request = json.load(sys.stdin)
city = request["arguments"]["city"]
key = os.environ.get("WEATHER_KEY", "")
print(json.dumps({"ok": True, "output": f"Sunny in {city} (asked with key {key})"}))
"""


class ProsodySkillTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get("HERALD_E2E_AGENT") == "echo":
            raise unittest.SkipTest("the echo stand-in has no skills")
        agent_program()
        cls.server = Prosody()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    @property
    def herald(self):
        return self.server.component_domain

    def setUp(self):
        # The sandbox runs the program as a uid of its own: its folder must be readable by all.
        self.skills_dir = tempfile.mkdtemp(prefix="herald-e2e-skills-")
        self.addCleanup(shutil.rmtree, self.skills_dir, True)
        os.chmod(self.skills_dir, 0o755)
        with open(os.path.join(self.skills_dir, "weather.toml"), "w") as f:
            f.write(MANIFEST)
        program = os.path.join(self.skills_dir, "weather.py")
        with open(program, "w") as f:
            f.write(PROGRAM)
        os.chmod(program, 0o755)
        rules = os.path.join(self.skills_dir, "rules.toml")
        with open(rules, "w") as f:
            f.write(RULES)
        key_file = os.path.join(self.skills_dir, "credentials.key")
        with open(key_file, "wb") as f:
            f.write(os.urandom(32))
        os.chmod(key_file, stat.S_IRUSR | stat.S_IWUSR)

        config = component_config(self.server) + runtime_sections(
            llm={"default": "scripted:e2e", "scripted": {"rules_file": rules}},
            skills=("weather",))
        config += f"""
[skills.approvals]
skills = ["weather"]
timeout_seconds = 60

[control]
listen = "unix:data/control.sock"
audit_path = "data/audit.log"
state_path = "data/runtime-state.json"
"""
        # [skills] keys beyond `enabled` go into the table runtime_sections wrote.
        config = config.replace(
            '[skills]\n',
            f'[skills]\npath = "{self.skills_dir}"\n'
            f'credentials_path = "data/credentials.db"\n'
            f'credentials_key_file = "{key_file}"\n', 1)
        self.agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(self.agent.stop)
        self.alice = Client(self.server, "alice")
        self.alice.connect()
        self.addCleanup(self.alice.close)
        self.wait_online()

    def diagnosis(self):
        return (f"--- the agent's log ---\n{self.agent.log()}\n"
                f"--- tail of prosody's log ---\n{tail(self.server.log_file, 15)}")

    def wait_online(self):
        deadline = time.monotonic() + ONLINE
        while time.monotonic() < deadline:
            if self.agent.exit_code() is not None:
                self.fail(f"herald exited with {self.agent.exit_code()}\n{self.diagnosis()}")
            if self.alice.ask(self.herald, "/ping", timeout=1.0) is not None:
                self.alice.discard_pending()
                return
        self.fail(f"herald did not answer /ping\n{self.diagnosis()}")

    def audited(self, action, outcome):
        """Whether the audit log holds an entry of action with outcome."""
        try:
            with open(os.path.join(self.agent.dir, "data", "audit.log")) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return False
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line still being written
            if entry.get("action") == action and entry.get("outcome") == outcome:
                return True
        return False

    def say(self, body, count):
        """Sends body and returns the next `count` replies."""
        self.alice.send(self.herald, body)
        replies = self.alice.replies_from(self.herald, within=ANSWER, count=count)
        self.assertEqual(len(replies), count,
                         f"after {body!r} expected {count} replies, got {replies}\n"
                         f"{self.diagnosis()}")
        return replies

    def test_a_run_pauses_for_an_approval_and_a_credential_then_completes(self):
        self.alice.discard_pending()
        [question] = self.say("weather Paris", 1)
        self.assertIn('I\'d like to run weather with {"city":"Paris"}', question)
        self.assertIn("Reply yes or no", question)

        ok, request = self.say("yes", 2)
        self.assertEqual(ok, "OK, running weather.")
        self.assertIn("To run weather I need a secret I don't have yet:", request)
        self.assertIn("WEATHER_KEY: the API key of your weather.example account", request)
        self.assertIn("https://weather.example/keys", request)

        thanks, answer = self.say(SECRET, 2)
        self.assertEqual(thanks, "Thanks, I stored WEATHER_KEY encrypted for you. Carrying on.")
        self.assertEqual(
            answer, "The weather tool says: Sunny in Paris (asked with key [redacted WEATHER_KEY])")

        # The key is kept: the next run asks for the approval only.
        [question] = self.say("weather Rome", 1)
        self.assertIn("I'd like to run weather", question)
        ok, answer = self.say("yes", 2)
        self.assertEqual(
            answer, "The weather tool says: Sunny in Rome (asked with key [redacted WEATHER_KEY])")

        # A denial: the model is told, the program does not run.
        self.say("weather Oslo", 1)
        no, answer = self.say("no", 2)
        self.assertEqual(no, "OK, I won't run weather.")
        self.assertIn("did not approve running weather", answer)

        # The key went nowhere but the skill's environment and the sealed store. Once what the
        # runs above write is on disk: the last answer in alice's history (written right after
        # the reply) and the denial in the audit log (written by its writer thread).
        history = os.path.join(user_folder(self.agent.memory_dir, "alice@localhost"),
                               "history.md")
        wait_until(lambda: any(e.role == "assistant" and e.text == answer
                               for e in read_history(history))
                   and self.audited("skill approval", "denied"), FILES)
        for folder, _, files in os.walk(self.agent.dir):
            for name in files:
                path = os.path.join(folder, name)
                if not stat.S_ISREG(os.lstat(path).st_mode):
                    continue  # the control socket
                with open(path, "rb") as f:
                    self.assertNotIn(SECRET.encode(), f.read(), f"the key is in {path}")
        with open(os.path.join(self.agent.dir, "data", "audit.log")) as f:
            audit = f.read()
        self.assertIn("skill approval", audit)
        self.assertIn("skill credentials", audit)


if __name__ == "__main__":
    unittest.main()
