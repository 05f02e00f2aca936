"""End to end: the web console (docs/console.md) in a real browser.

Herald runs as Prosody's component on the fake LLM ("what time is it?" makes it call
current_time, which [skills.approvals] makes wait for a person's yes), with its HTTP listener
on a loopback port picked at run time and a control token `ops` with every scope. alice is a
real XMPP client (slixmpp). Debian's Chromium, headless, driven by playwright-core
(console/drive_console.mjs), signs in to the console, opens alice's conversation, watches the
usage chart grow after alice's next message, approves the run that waits and sees it finish
on the run timeline, edits the allowlist and reads the verified audit log.

    tests/e2e/run bazel-bin/component/herald test_console

HERALD_CONSOLE_SCREENSHOTS=DIR keeps a screenshot of each page in DIR (docs/console.md's come
from there).
"""

import os
import queue
import secrets
import shutil
import subprocess
import threading
import unittest
import urllib.request

from fake_llm import FakeLlm
from http_api import HeraldOverHttp
from servers import Prosody

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "console", "drive_console.mjs")
CHROMIUM = "/usr/bin/chromium"
STEP = 60.0      # the browser's part between two lines it prints (its own waits are 20 s)
BROWSER = 240.0  # the whole browser run

OPS_TOKEN = secrets.token_urlsafe(24)

APPROVALS = """
[skills.approvals]
skills = ["current_time"]
timeout_seconds = 120
"""


def browser_ready():
    """Why the browser test cannot run here, or None when it can."""
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing (tools/setup installs chromium)"
    if shutil.which("node") is None:
        return "node is missing (tools/setup installs nodejs)"
    if not os.path.isdir(os.path.join(HERE, "console", "node_modules", "playwright-core")):
        return "playwright-core is missing (tools/setup runs npm ci in tests/e2e/console)"
    return None


class ProsodyConsoleTest(HeraldOverHttp, unittest.TestCase):
    server_class = Prosody
    tokens = (("ops", OPS_TOKEN, ["read", "operate", "execute", "admin"]),)
    read_token = OPS_TOKEN

    @classmethod
    def setUpClass(cls):
        missing = browser_ready()
        if missing is not None:
            raise AssertionError(missing)  # a machine tools/setup prepared has all of it
        super().setUpClass()

    def setUp(self):
        self.start_herald(FakeLlm("anthropic"), extra_config=APPROVALS)
        self.ask("hello console")

    def test_the_console_pages_in_a_real_browser(self):
        # The page and its files come from the binary, with their security headers.
        with urllib.request.urlopen(f"{self.base_url}/console/", timeout=10) as page:
            self.assertEqual(page.status, 200)
            self.assertIn("script-src 'self'", page.headers["Content-Security-Policy"])
            self.assertIn('src="main.js"', page.read().decode())

        command = ["node", DRIVER, self.base_url, OPS_TOKEN]
        if os.environ.get("HERALD_CONSOLE_SCREENSHOTS"):
            command.append(os.environ["HERALD_CONSOLE_SCREENSHOTS"])
        driver = subprocess.Popen(command, cwd=os.path.dirname(DRIVER), text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.addCleanup(lambda: driver.poll() is None and driver.kill())
        lines = queue.Queue()

        def read_lines():
            for line in driver.stdout:
                lines.put(line)
            lines.put(None)  # the browser's side ended

        threading.Thread(target=read_lines, daemon=True).start()
        transcript = []

        def go(step):
            driver.stdin.write(f"GO {step}\n")
            driver.stdin.flush()

        passed = []
        while True:
            try:
                line = lines.get(timeout=STEP)
            except queue.Empty:
                driver.kill()
                self.fail(f"the browser said nothing for {STEP:.0f}s\n"
                          + "\n".join(transcript) + f"\n{self.diagnosis()}")
            if line is None:
                break
            line = line.rstrip("\n")
            transcript.append(line)
            if line.startswith("PASS "):
                passed.append(line[5:])
            elif line.startswith("FAIL "):
                driver.wait(timeout=30)
                self.fail(f"in the browser: {line[5:]}\n" + "\n".join(transcript)
                          + f"\n{driver.stderr.read()}\n{self.diagnosis()}")
            elif line == "WAIT send-another-message":
                self.ask("hello again")
                go("send-another-message")
            elif line == "WAIT ask-for-the-time":
                # Herald asks alice too; the browser answers first.
                question = self.ask("what time is it?")
                self.assertIn("I'd like to run current_time", question)
                go("ask-for-the-time")
            elif line == "WAIT the-answer-arrived":
                replies = self.alice.replies_from(self.herald, within=30.0, count=1)
                self.assertEqual(len(replies), 1, f"no answer after the approval\n"
                                 f"{self.diagnosis()}")
                self.assertIn("The time is", replies[0])
                go("the-answer-arrived")
        code = driver.wait(timeout=BROWSER)
        self.assertEqual(code, 0, "\n".join(transcript) + f"\n{driver.stderr.read()}")
        self.assertIn("no script errors and no refused loads", passed, "\n".join(transcript))
        self.assertEqual(len(passed), 12, "\n".join(transcript))


if __name__ == "__main__":
    unittest.main()
