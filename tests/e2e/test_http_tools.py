"""End to end: a registry tool whose executor is HTTP, found and called in one chat turn.

Herald runs as Prosody's component on the scripted provider with `tool_search` enabled and a
registry imported with heraldctl. "forecast CITY" makes the model search the registry, then
call the tool it found, `forecast`: an HTTP endpoint (a small server of this test's own on
127.0.0.1, which [skills.http_tools] allow_hosts exempts from the private-address refusal)
that needs the credential FORECAST_KEY in a header. Alice sends the key when asked; the
endpoint gets one request with the city in its path and the key in its header, and echoes the
key back — which the answer shows redacted. A tool whose endpoint is not exempt is refused
without a request.

    tests/e2e/run bazel-bin/component/herald test_http_tools
"""

import json
import os
import shutil
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agent import Agent, agent_program, component_config, runtime_sections
from client import Client
from servers import Prosody, tail
from test_control import SOCKET, control_section, heraldctl_program, run_heraldctl

ONLINE = 20.0
ANSWER = 15.0
SECRET = "fk-e2e-0c9d8e7f6a"

RULES = """
[[rule]]
name = "call what the search found"
after_tool = "tool_search"
tool = "forecast"
arguments = { city = "Oslo" }

[[rule]]
name = "after any tool"
after_tool = "*"
reply = "The {tool} tool says: {tool_result}"

[[rule]]
name = "search"
starts_with = "forecast"
tool = "tool_search"
arguments = { query = "weather forecast for the coming days" }

[[rule]]
name = "fallback"
reply = "Ask me for a forecast."
"""


class Endpoint:
    """An HTTP API on 127.0.0.1 that records what it is sent and answers JSON."""

    def __init__(self):
        self.requests = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                endpoint.requests.append({"path": self.path, "key": self.headers.get("X-Api-Key")})
                body = json.dumps({"forecast": "sunny", "key_seen": self.headers.get("X-Api-Key")})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class ProsodyHttpToolTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get("HERALD_E2E_AGENT") == "echo":
            raise unittest.SkipTest("the echo stand-in has no skills")
        agent_program()
        heraldctl_program()
        cls.server = Prosody()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    @property
    def herald(self):
        return self.server.component_domain

    def setUp(self):
        self.endpoint = Endpoint()
        self.addCleanup(self.endpoint.stop)
        self.dir = tempfile.mkdtemp(prefix="herald-e2e-http-tools-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        rules = os.path.join(self.dir, "rules.toml")
        with open(rules, "w") as f:
            f.write(RULES)
        config = (component_config(self.server)
                  + runtime_sections(llm={"default": "scripted:e2e",
                                          "scripted": {"rules_file": rules}},
                                     skills=("tool_search",))
                  + control_section())
        config += '\n[skills.http_tools]\nallow_hosts = ["127.0.0.1"]\ntimeout_seconds = 10\n'
        self.agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(self.agent.stop)
        self.wait_for_socket()
        self.alice = Client(self.server, "alice")
        self.alice.connect()
        self.addCleanup(self.alice.close)
        self.wait_online()

    def diagnosis(self):
        return (f"--- the agent's log ---\n{self.agent.log()}\n"
                f"--- the endpoint's requests ---\n{self.endpoint.requests}\n"
                f"--- tail of prosody's log ---\n{tail(self.server.log_file, 15)}")

    def heraldctl(self, *args):
        return run_heraldctl(self.agent.dir, *args)

    def wait_for_socket(self):
        deadline = time.monotonic() + ONLINE
        while time.monotonic() < deadline:
            if self.agent.exit_code() is not None:
                self.fail(f"herald exited with {self.agent.exit_code()}\n{self.diagnosis()}")
            if (os.path.exists(os.path.join(self.agent.dir, SOCKET))
                    and self.heraldctl("status").returncode == 0):
                return
            time.sleep(0.1)
        self.fail(f"no control socket\n{self.diagnosis()}")

    def wait_online(self):
        deadline = time.monotonic() + ONLINE
        while time.monotonic() < deadline:
            if self.alice.ask(self.herald, "/ping", timeout=1.0) is not None:
                self.alice.discard_pending()
                return
        self.fail(f"herald did not answer /ping\n{self.diagnosis()}")

    def import_forecast(self, host):
        line = {"id": "weather.forecast", "name": "forecast",
                "description": "Weather forecast for the coming days in a city",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                                 "required": ["city"]},
                "required_env": [{"name": "FORECAST_KEY",
                                  "description": "your forecast.example key",
                                  "url": "https://forecast.example/keys"}],
                "executor": {"type": "http", "method": "GET",
                             "url": f"http://{host}:{self.endpoint.port}/v1/{{city}}",
                             "headers": {"X-Api-Key": "${FORECAST_KEY}"}}}
        path = os.path.join(self.dir, "registry.jsonl")
        with open(path, "w") as f:
            f.write(json.dumps(line) + "\n")
        result = self.heraldctl("tools", "import", path)
        self.assertEqual(result.returncode, 0, f"{result.stdout}\n{result.stderr}")

    def say(self, body, count):
        self.alice.send(self.herald, body)
        replies = self.alice.replies_from(self.herald, within=ANSWER, count=count)
        self.assertEqual(len(replies), count,
                         f"after {body!r} expected {count} replies, got {replies}\n"
                         f"{self.diagnosis()}")
        return replies

    def test_a_tool_found_calls_its_endpoint_with_the_credential_the_user_gave(self):
        self.import_forecast("127.0.0.1")
        [request] = self.say("forecast please", 1)
        self.assertIn("To run forecast I need a secret I don't have yet:", request)
        self.assertIn("FORECAST_KEY: your forecast.example key", request)
        self.assertEqual(self.endpoint.requests, [], "called before the key was there")

        thanks, answer = self.say(SECRET, 2)
        self.assertIn("for this run only", thanks)  # no credential key configured here
        self.assertEqual(self.endpoint.requests, [{"path": "/v1/Oslo", "key": SECRET}],
                         self.diagnosis())
        self.assertIn("The forecast tool says: HTTP 200, application/json", answer)
        self.assertIn('"forecast": "sunny"', answer)
        self.assertIn("[redacted FORECAST_KEY]", answer)
        self.assertNotIn(SECRET, answer)
        self.assertNotIn(SECRET, self.agent.log())

    def test_an_endpoint_on_a_private_address_not_allowed_is_refused(self):
        # 127.0.0.2 is a loopback address like 127.0.0.1, but only 127.0.0.1 is exempt.
        self.import_forecast("127.0.0.2")
        self.say("forecast please", 1)
        [answer] = self.say(SECRET, 2)[1:]
        self.assertIn("The forecast tool says: refused", answer)
        self.assertIn("loopback", answer)
        self.assertEqual(self.endpoint.requests, [])


if __name__ == "__main__":
    unittest.main()
