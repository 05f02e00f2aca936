"""End to end: webhooks in, through real Prosody and ejabberd.

Herald runs with its HTTP listener on a loopback port and two [[webhooks.in]] endpoints: "ci"
says a build's result in the test's room (Herald is in it), "pager" says an alert to alice.
A delivery signed with the endpoint's secret (X-Herald-Signature: t=...,v1=HMAC-SHA256 of
"<t>.<body>") is said; a forged one, a stale one and a replay are refused with their HTTP
status and said nowhere — the room's next message from Herald is the genuine delivery.

    tests/e2e/run bazel-bin/component/herald test_webhooks
"""

import hashlib
import hmac
import json
import threading
import time
import unittest
import urllib.error
import urllib.request

from agent import Agent, component_config, runtime_sections
from servers import Ejabberd, Prosody, free_port
from test_conversation import ANSWER, _ConversationBase

CI_SECRET = "ci-e2e-secret-5f1e2d3c"
PAGER_SECRET = "pager-e2e-secret-9a8b7c"


def signature(secret, body, at=None):
    t = int(time.time() if at is None else at)
    mac = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


class _WebhookTests(_ConversationBase):

    def start_with_webhooks(self):
        self.http_port = free_port()
        config = (component_config(self.server)
                  + runtime_sections(llm=self.llm_keys(self.fake_llm()), rooms=[
                      {"jid": self.room, "nick": "herald", "activation": "mention"}]))
        config += f"""
[http]
listen = "127.0.0.1:{self.http_port}"

[[webhooks.in]]
name = "ci"
secret = "{CI_SECRET}"
to = "{self.room}"
template = "Build {{{{status}}}} on {{{{repo.name}}}}"

[[webhooks.in]]
name = "pager"
secret = "{PAGER_SECRET}"
to = "alice@localhost"
template = "Alert: {{{{alert}}}}"

[[webhooks.in]]
name = "burst"
secret = "{PAGER_SECRET}"
to = "alice@localhost"
template = "#{{{{n}}}}"
rate_per_minute = 10000
"""
        agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(agent.stop)
        self.agent = agent
        return agent

    def post(self, name, payload, sign_with=None, header=None):
        """POSTs payload to /webhooks/<name>; returns (status, body)."""
        body = json.dumps(payload).encode()
        if header is None:
            header = signature(sign_with, body)
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.http_port}/webhooks/{name}", data=body, method="POST",
            headers={"Content-Type": "application/json", "X-Herald-Signature": header})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def test_a_signed_delivery_is_said_in_the_room_and_a_forged_one_nowhere(self):
        agent = self.start_with_webhooks()
        alice = self.client("alice")
        self.wait_online(alice, agent)
        self.wait_for_herald_room(alice)
        self.join_room(alice)

        forged = self.post("ci", {"status": "forged", "repo": {"name": "x"}},
                           sign_with="not-the-ci-secret")
        self.assertEqual(forged[0], 401, forged)
        stale_body = json.dumps({"status": "stale", "repo": {"name": "x"}}).encode()
        stale = self.post("ci", {"status": "stale", "repo": {"name": "x"}},
                          header=signature(CI_SECRET, stale_body, at=time.time() - 600))
        self.assertEqual(stale[0], 401, stale)

        payload = {"status": "passed", "repo": {"name": "herald"}}
        body = json.dumps(payload).encode()
        header = signature(CI_SECRET, body)
        genuine = self.post("ci", payload, header=header)
        self.assertEqual(genuine[0], 202, f"{genuine}\n{self.diagnosis()}")
        traffic = alice.room_traffic(self.room, within=ANSWER, until_nick="herald")
        said = [m["body"] for m in traffic if m["nick"] == "herald"]
        self.assertEqual(said, ["Build passed on herald"], f"{traffic}\n{self.diagnosis()}")

        replay = self.post("ci", payload, header=header)
        self.assertEqual(replay[0], 409, replay)

    def test_a_delivery_to_a_person_is_a_chat_message(self):
        agent = self.start_with_webhooks()
        alice = self.client("alice")
        self.wait_online(alice, agent)
        status, _ = self.post("pager", {"alert": "disk 91% on db1"}, sign_with=PAGER_SECRET)
        self.assertEqual(status, 202, self.diagnosis())
        replies = alice.replies_from(self.herald, within=ANSWER, count=1)
        self.assertEqual(replies, ["Alert: disk 91% on db1"], self.diagnosis())


    def test_a_burst_of_deliveries_is_said_whole_and_in_time(self):
        """1000 signed deliveries from 8 senders at once: every one taken (202) and said to
        alice, none twice; prints the rate (a measurement, run for real by hand)."""
        agent = self.start_with_webhooks()
        alice = self.client("alice")
        self.wait_online(alice, agent)
        count, senders = 1000, 8
        statuses = []
        lock = threading.Lock()

        def send(first):
            for n in range(first, count, senders):
                status, _ = self.post("burst", {"n": n}, sign_with=PAGER_SECRET)
                with lock:
                    statuses.append(status)

        started = time.monotonic()
        threads = [threading.Thread(target=send, args=(i,)) for i in range(senders)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        taken = time.monotonic() - started
        said = alice.replies_from(self.herald, within=60, count=count)
        delivered = time.monotonic() - started
        self.assertEqual(statuses.count(202), count, f"statuses: {set(statuses)}")
        self.assertEqual(sorted(said, key=lambda s: int(s[1:])), [f"#{n}" for n in range(count)],
                         self.diagnosis() if len(said) != count else "")
        print(f"\n[webhooks] {self.server.name}: {count} deliveries from {senders} senders taken "
              f"in {taken:.2f} s ({count / taken:.0f}/s), all said to alice after "
              f"{delivered:.2f} s ({count / delivered:.0f}/s)")


class ProsodyWebhookTest(_WebhookTests, unittest.TestCase):
    server_class = Prosody


class EjabberdWebhookTest(_WebhookTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
