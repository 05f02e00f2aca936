"""End to end: schedules, through real Prosody and ejabberd.

Herald runs on the scripted provider with rules that turn "remind me ..." into a call of the
`schedule` skill and answer a due schedule's turn. alice asks for a reminder in a few
seconds and gets it while she is online, on time; she asks for another, shares her presence
with Herald and goes offline before it is due: the reminder waits and reaches her live (not
from the server's offline storage) once she is back. An operator's schedule posts in a room.

    tests/e2e/run bazel-bin/component/herald test_schedules
"""

import json
import os
import shutil
import tempfile
import time
import unittest

from agent import Agent, component_config, runtime_sections
from servers import Ejabberd, Prosody
from test_control import control_section, heraldctl_program, run_heraldctl
from test_conversation import ANSWER, _ConversationBase

RULES = """
[[rule]]
name = "a schedule's turn: stretching"
starts_with = "[schedule #"
contains = "remind me to stretch"
reply = "Time to stretch!"

[[rule]]
name = "a schedule's turn: water"
starts_with = "[schedule #"
contains = "remind me to drink water"
reply = "Time to drink some water!"

[[rule]]
name = "a schedule's turn: the operator's digest (a room turn names its speaker first)"
contains = "is due now. carry out its instruction; your answer is sent to the room"
reply = "Digest: nothing new."

[[rule]]
name = "after the schedule skill"
after_tool = "schedule"
reply = "Done. {tool_result}"

[[rule]]
name = "remind me to stretch"
starts_with = "remind me to stretch"
tool = "schedule"
arguments = { action = "create", when = "in 3s", prompt = "Remind me to stretch" }

[[rule]]
name = "remind me to drink"
starts_with = "remind me to drink"
tool = "schedule"
arguments = { action = "create", when = "in 6s", prompt = "Remind me to drink water" }

[[rule]]
name = "every morning"
starts_with = "every morning"
tool = "schedule"
arguments = { action = "create", when = "cron 0 9 * * *", prompt = "Say good morning" }

[[rule]]
name = "fallback"
reply = "Ask me to remind you of something."
"""


class _ScheduleTests(_ConversationBase):

    def start_with_schedules(self, tasks=""):
        folder = tempfile.mkdtemp(prefix="herald-e2e-schedules-")
        self.addCleanup(shutil.rmtree, folder, True)
        rules = os.path.join(folder, "rules.toml")
        with open(rules, "w") as f:
            f.write(RULES)
        config = (component_config(self.server)
                  + runtime_sections(llm={"default": "scripted:e2e",
                                          "scripted": {"rules_file": rules}},
                                     skills=("schedule",),
                                     rooms=[{"jid": self.room, "nick": "herald",
                                             "activation": "mention"}]))
        config += control_section()
        config += "\n[schedules]\nmissed = \"run_once\"\n" + tasks
        agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(agent.stop)
        self.agent = agent
        return agent

    def test_a_reminder_set_in_chat_fires_on_time_while_online(self):
        agent = self.start_with_schedules()
        alice = self.client("alice")
        self.wait_online(alice, agent)
        asked = time.monotonic()
        answer = self.ask(alice, "remind me to stretch in a moment")
        self.assertRegex(answer, r"^Done\. Scheduled: #\d+ once at ", self.diagnosis())
        got = alice.chats_with_delay(self.herald, within=ANSWER, count=1)
        arrived = time.monotonic()
        self.assertEqual(got, [("Time to stretch!", False)], self.diagnosis())
        # Due 3 s after the skill ran, which was after `asked`; it cannot come sooner.
        late = arrived - asked - 3.0
        self.assertGreaterEqual(late, -0.05, f"the reminder came {-late:.2f}s early")
        print(f"\n[schedules] {self.server.name}: a 3 s reminder arrived {late * 1000:.0f} ms "
              f"after it was due (upper bound: measured from before the request)")
        self.assertEqual(self.ask(alice, "/schedules"),
                         "No schedules here. Ask me to remind you of something, or to do it "
                         "regularly.")

    def test_a_reminder_for_someone_offline_waits_until_they_are_back(self):
        agent = self.start_with_schedules()
        alice = self.client("alice")
        self.wait_online(alice, agent)
        self.assertTrue(alice.share_presence_with(self.herald), self.diagnosis())
        answer = self.ask(alice, "remind me to drink some water")
        self.assertIn("Scheduled:", answer, self.diagnosis())
        alice.close()
        # Past the time it was due (6 s after it was made), with a margin.
        deadline = time.monotonic() + 20
        while "waits until alice@localhost is online" not in agent.log():
            self.assertLess(time.monotonic(), deadline,
                            f"the reminder did not wait for alice\n{self.diagnosis()}")
            time.sleep(0.2)
        time.sleep(1.0)
        back = self.client("alice")
        got = back.chats_with_delay(self.herald, within=ANSWER, count=1)
        self.assertEqual(got, [("Time to drink some water!", False)],
                         f"the reminder should come live once she is back\n{self.diagnosis()}")

    def test_an_operators_schedule_posts_in_the_room(self):
        agent = self.start_with_schedules(tasks=f"""
[[schedules.task]]
name = "digest"
to = "{self.room}"
prompt = "Post the digest of the day"
when = "every 2s"
""")
        alice = self.client("alice")
        self.wait_online(alice, agent)
        self.wait_for_herald_room(alice)
        self.join_room(alice)
        traffic = alice.room_traffic(self.room, within=ANSWER, until_nick="herald",
                                     until_body="Digest: nothing new.")
        said = [m["body"] for m in traffic if m["nick"] == "herald"]
        self.assertIn("Digest: nothing new.", said, f"{traffic}\n{self.diagnosis()}")


    def heraldctl(self, *args):
        result = run_heraldctl(self.agent.dir, *args)
        self.assertEqual(result.returncode, 0, f"{result.stdout}{result.stderr}")
        return result.stdout

    def test_a_schedule_outlives_a_restart_and_an_operator_cancels_it(self):
        agent = self.start_with_schedules()
        heraldctl_program()
        alice = self.client("alice")
        self.wait_online(alice, agent)
        self.assertEqual(self.ask(alice, "/timezone Europe/Paris"),
                         "Times here are now read in Europe/Paris. Schedules made before keep "
                         "the zone they were made in.")
        self.assertIn("Scheduled: #1 cron 0 9 * * * (Europe/Paris)",
                      self.ask(alice, "every morning, greet me"))
        agent.restart()
        self.wait_online(alice, agent)
        listed = json.loads(self.heraldctl("schedules", "list", "--json"))
        schedules = listed.get("schedules", [])
        self.assertEqual([(s["id"], s["conversation"], s["timezone"], s["prompt"])
                          for s in schedules],
                         [("1", "direct:alice@localhost", "Europe/Paris", "Say good morning")],
                         listed)
        # 09:00 in Paris is 07:00 or 08:00 UTC, depending on the season.
        self.assertRegex(schedules[0]["nextRun"], r"T0[78]:00:00Z$")
        self.assertIn("#1 cron 0 9 * * * (Europe/Paris)", self.ask(alice, "/schedules"))
        self.assertIn("cancelled schedule 1", self.heraldctl("schedules", "cancel", "1"))
        self.assertEqual(self.ask(alice, "/schedules"),
                         "No schedules here. Ask me to remind you of something, or to do it "
                         "regularly.")


class ProsodyScheduleTest(_ScheduleTests, unittest.TestCase):
    server_class = Prosody


class EjabberdScheduleTest(_ScheduleTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
