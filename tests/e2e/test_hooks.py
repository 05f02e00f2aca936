"""End to end: hooks (docs/hooks.md), through real Prosody and ejabberd.

Herald runs on the fake LLM (it answers "you said: <text>") with its control plane; the
example hooks in tools/hooks attach over HookService as any operator's program would. The
profanity filter masks words in what alice sends (the model reads the masked text) and in the
answer she gets, and refuses a message that is nothing but such words — the model never sees
it. The context injector gives the model notes from a file with every message. When a hook's
process dies, the next message goes through unchanged: a crashed hook blocks nobody.

    tests/e2e/run bazel-bin/component/herald test_hooks
"""

import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from agent import Agent, component_config, runtime_sections
from servers import Ejabberd, Prosody
from test_control import SOCKET, TOKEN, control_section
from test_conversation import ANSWER, _ConversationBase

HOOKS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                      "tools", "hooks"))
REGISTERED = 30.0  # the first run makes the Python messages with protoc


class _HookTests(_ConversationBase):

    def start_with_control(self):
        llm = self.fake_llm()
        config = (component_config(self.server) + runtime_sections(llm=self.llm_keys(llm))
                  + control_section())
        agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(agent.stop)
        self.agent = agent
        return agent

    def attach(self, script, *args):
        """Starts tools/hooks/<script> against Herald and waits until it is registered."""
        proc = subprocess.Popen(
            [sys.executable, os.path.join(HOOKS, script), "--target",
             f"unix:{os.path.join(self.agent.dir, SOCKET)}", "--token", TOKEN, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)

        def stop():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        self.addCleanup(stop)
        ready, _, _ = select.select([proc.stdout], [], [], REGISTERED)
        line = proc.stdout.readline() if ready else ""
        if line.strip() != "registered":
            stop()
            self.fail(f"{script} did not register: {line!r}\n{proc.stderr.read()}\n"
                      f"{self.diagnosis()}")
        return proc

    def test_the_profanity_filter_masks_both_ways_and_refuses_a_bare_curse(self):
        agent = self.start_with_control()
        alice = self.client("alice")
        self.wait_online(alice, agent)
        filter_proc = self.attach("profanity_filter.py", "--words", "darn,said")
        before = len(self.llm.requests())
        self.assertEqual(self.ask(alice, "what a darn day"), "you ****: what a **** day",
                         self.diagnosis())
        requests = self.llm.requests()
        self.assertEqual(requests[-1]["last_user_text"], "what a **** day")

        self.assertEqual(self.ask(alice, "darn!"), "Please say that without the language.")
        time.sleep(0.5)
        self.assertEqual(len(self.llm.requests()), before + 1,
                         "the refused message never reached the model")

        # The hook dies: it is detached, and messages go through unchanged.
        os.killpg(filter_proc.pid, signal.SIGKILL)
        filter_proc.wait()
        deadline = time.monotonic() + ANSWER
        answer = None
        while time.monotonic() < deadline:
            answer = self.ask(alice, "a darn fine day")
            if answer == "you said: a darn fine day":
                break
        self.assertEqual(answer, "you said: a darn fine day", self.diagnosis())
        self.assertIn("hooks: 'profanity-filter' detached", agent.log())

    def test_the_context_injector_gives_the_model_notes(self):
        agent = self.start_with_control()
        alice = self.client("alice")
        self.wait_online(alice, agent)
        notes = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
        self.addCleanup(os.unlink, notes.name)
        notes.write("The office closes at 17:00 on Fridays.")
        notes.close()
        self.attach("context_injector.py", "--file", notes.name)
        self.assertEqual(self.ask(alice, "when do you close?"), "you said: when do you close?")
        system = self.llm.requests()[-1]["system"]
        self.assertIn("The office closes at 17:00 on Fridays.", system)
        self.assertIn("Notes from the operator's systems for this message", system)


class ProsodyHookTest(_HookTests, unittest.TestCase):
    server_class = Prosody


class EjabberdHookTest(_HookTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
