"""End to end: Prometheus scrapes Herald's /metrics, through Prosody.

Herald runs as Prosody's component with its HTTP listener on a loopback port; a real
Prometheus (Debian's `prometheus`), started by this test on another loopback port with its data
in a temporary folder, scrapes it every second. Alice sends messages; Prometheus's answer to
`herald_messages_received_total` grows by exactly their number. /metrics answers without a
token from loopback, and its text is what Prometheus accepts (it scraped it).

    tests/e2e/run bazel-bin/component/herald test_metrics
"""

import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

from agent import Agent, agent_program, component_config, runtime_sections
from client import Client
from servers import Prosody, free_port, tail

ONLINE = 20.0
ANSWER = 15.0
SCRAPED = 30.0  # Prometheus scrapes every second; its first scrape waits for its start-up
PROMETHEUS = "/usr/bin/prometheus"


def http_get(url, timeout=5.0):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read().decode()


class Prometheus:
    """A private Prometheus on loopback that scrapes one target every second."""

    def __init__(self, target):
        self.dir = tempfile.mkdtemp(prefix="herald-e2e-prometheus-")
        self.port = free_port()
        config = os.path.join(self.dir, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: herald\n"
                    f"    static_configs:\n      - targets: ['{target}']\n")
        self.log_path = os.path.join(self.dir, "prometheus.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={self.dir}/data",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT)

    def query(self, expression):
        """The value of an instant query's single sample, or None."""
        url = (f"http://127.0.0.1:{self.port}/api/v1/query?"
               + urllib.parse.urlencode({"query": expression}))
        try:
            _, _, body = http_get(url)
        except OSError:
            return None
        result = json.loads(body).get("data", {}).get("result", [])
        return float(result[0]["value"][1]) if len(result) == 1 else None

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.dir, True)


class ProsodyMetricsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get("HERALD_E2E_AGENT") == "echo":
            raise unittest.SkipTest("the echo stand-in has no HTTP listener")
        if not os.access(PROMETHEUS, os.X_OK):
            raise RuntimeError(f"{PROMETHEUS} is missing: tools/setup installs prometheus")
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
        self.http_port = free_port()
        config = component_config(self.server) + runtime_sections()
        config += f'\n[http]\nlisten = "127.0.0.1:{self.http_port}"\n'
        self.agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(self.agent.stop)
        self.alice = Client(self.server, "alice")
        self.alice.connect()
        self.addCleanup(self.alice.close)
        self.wait_online()

    def diagnosis(self):
        parts = [f"--- the agent's log ---\n{self.agent.log()}",
                 f"--- tail of prosody's log ---\n{tail(self.server.log_file, 15)}"]
        prometheus = getattr(self, "prometheus", None)
        if prometheus is not None:
            parts.append(f"--- prometheus's log ---\n{tail(prometheus.log_path, 20)}")
        return "\n".join(parts)

    def wait_online(self):
        deadline = time.monotonic() + ONLINE
        while time.monotonic() < deadline:
            if self.agent.exit_code() is not None:
                self.fail(f"herald exited with {self.agent.exit_code()}\n{self.diagnosis()}")
            if self.alice.ask(self.herald, "/ping", timeout=1.0) is not None:
                self.alice.discard_pending()
                return
        self.fail(f"herald did not answer /ping\n{self.diagnosis()}")

    def metrics(self):
        return http_get(f"http://127.0.0.1:{self.http_port}/metrics")

    def test_the_exposition_is_served_from_loopback_without_a_token(self):
        status, content_type, text = self.metrics()
        self.assertEqual(status, 200)
        self.assertTrue(content_type.startswith("text/plain; version=0.0.4"), content_type)
        self.assertIn("# TYPE herald_messages_received_total counter", text)
        self.assertIn("herald_xmpp_connected 1", text)
        self.assertIn("process_resident_memory_bytes", text)

    def test_prometheus_counts_the_messages_alice_sent(self):
        self.prometheus = Prometheus(f"127.0.0.1:{self.http_port}")
        self.addCleanup(self.prometheus.stop)
        up = None
        deadline = time.monotonic() + SCRAPED
        while time.monotonic() < deadline and up != 1.0:
            time.sleep(0.5)
            up = self.prometheus.query('up{job="herald"}')
        self.assertEqual(up, 1.0, f"Prometheus never scraped Herald\n{self.diagnosis()}")
        before = self.prometheus.query("herald_messages_received_total")
        self.assertIsNotNone(before)

        sent = 5
        for i in range(sent):
            self.assertIsNotNone(self.alice.ask(self.herald, f"message {i}", timeout=ANSWER),
                                 self.diagnosis())
        expected = before + sent
        value = None
        deadline = time.monotonic() + SCRAPED
        while time.monotonic() < deadline and value != expected:
            time.sleep(0.5)
            value = self.prometheus.query("herald_messages_received_total")
        self.assertEqual(value, expected, self.diagnosis())
        self.assertGreaterEqual(self.prometheus.query('herald_runs_total{outcome="completed"}'),
                                sent)


if __name__ == "__main__":
    unittest.main()
