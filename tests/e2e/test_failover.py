"""End to end: three Heralds on one domain, one killed with SIGKILL in the middle of the work (D1).

Three instances connect to ejabberd as the same XEP-0114 component, with no domain_balancing
(ejabberd sends each stanza to one of them at random), all on one private PostgreSQL
(postgres.py). 50 people write to Herald, whose model (the fake) answers "slow" messages after
5 s. Every message is stored in the shared inbox by the instance that got it, and answered by
the instance that holds its conversation's lease (component/storage/shared_conversations.h).

In the middle of the first round, when all 50 model calls are waiting for their answers, the
instance that holds the most conversations is killed with SIGKILL; the people send a second
round at once. What the test checks:

- every message the instances accepted (a row of herald_inbox) is answered, and each person
  gets exactly one answer to each message (counted by its text, which names the message);
- no conversation is answered by two instances: in each, the answering instance changes at
  most once, from the killed one to the one that took its lease;
- the killed instance's people are answered by the others within the lease time (10 s) and
  the model's delay (5 s), and a bit;
- the usage totals are the answered calls, and the fake model's count is those plus the calls
  the killed instance had in flight (it died before their answers, so it recorded none), and
  the tokens those calls held under the daily limit are released 20 s after the kill;
- `heraldctl audit verify` passes on the instances that live, and both list each other;
  `heraldctl sessions list` on either lists all 50 conversations, each with the survivor
  that answers it;
- memory is shared: `heraldctl memory export` through either survivor gives each person's
  whole history, the same bytes, with each message recorded once (the killed instance's
  people's first message too, which it had recorded before it died).

Five more: a database restart while 50 answers are written loses nothing; a person allowed
through one instance (`heraldctl allowlist add`) is let through by all three, and removed
through another, by none; a credential stored through one instance and replaced through
another is one row of the shared table, sealed (no instance writes a credentials file); and an
operator's schedule on three instances is one shared schedule whose every run reaches its
person once; and a run waiting for an approval on one instance is answered through another.

    tests/e2e/run bazel-bin/component/herald test_failover
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from agent import component_config, runtime_sections
from client import Client
from servers import tail, wait_until
from test_control import SOCKET, TOKEN, control_section, heraldctl_program, run_heraldctl
from test_scale_out import SharedDatabaseTest, start_instance, storage_section

PEOPLE = [f"user{i:02d}" for i in range(50)]
INSTANCES = 3
ONLINE = 30.0
SLOW = 5          # seconds the fake model takes for a "slow" message
LEASE = 10        # ConversationInbox::kLeaseTime
BEAT = 2          # SharedConversations' beat
ANSWERED = 60.0   # the whole run's answers, generously


class FailoverTest(SharedDatabaseTest):
    ejabberd = {"extra_users": PEOPLE}
    fake_llm = {"slow_seconds": SLOW}

    def setUp(self):
        super().setUp()
        self.lease_seconds = LEASE
        self.credentials_key = None  # a key file for [skills] credentials_key_file
        self.rules = None  # a rules file: the scripted provider instead of the fake model
        self.extra = ""  # more sections for the config

    def config(self):
        llm = {"default": "anthropic:fake", "max_retries": 0, "connect_timeout_seconds": 2,
               "request_timeout_seconds": 30,
               "anthropic": {"base_url": self.llm.base_url, "api_key": "e2e-not-a-secret"}}
        if self.rules:
            llm = {"default": "scripted:e2e", "scripted": {"rules_file": self.rules}}
        text = (component_config(self.server, allowed_jids=[f"{p}@localhost" for p in PEOPLE])
                + runtime_sections(llm=llm) + control_section()
                + storage_section(self.db.conninfo(self.database))
                + f"lease_seconds = {self.lease_seconds}\n")
        if self.credentials_key:  # into the [skills] table runtime_sections wrote
            text = text.replace("[skills]\n",
                                f'[skills]\ncredentials_key_file = "{self.credentials_key}"\n', 1)
        return text + self.extra


    def diagnosis(self):
        parts = [f"--- agent {i} (tail) ---\n{a.log()[-4000:]}" for i, a in enumerate(self.agents)]
        parts.append(f"--- the fake LLM got {len(self.llm.requests())} requests ---")
        parts += [f"{r.get('received_at')} {r.get('last_user_text')}" for r in self.llm.requests()]
        parts.append(f"--- inbox ---\n{self.sql('SELECT id, conversation, received_by, answered_by, answered_token, received_at, answered_at, message FROM herald_inbox ORDER BY id')}")
        parts.append(f"--- tail of ejabberd's log ---\n{tail(self.server.log_file, 15)}")
        return "\n".join(parts)

    def instance_ids(self):
        """herald_instances' id of each agent, by its process id."""
        rows = self.sql("SELECT id, pid FROM herald_instances")
        by_pid = {int(pid): iid for iid, pid in (line.split("|") for line in rows.splitlines())}
        return {agent: by_pid.get(agent.proc.pid) for agent in self.agents}

    def leases(self):
        """conversation → owner, of the leases that have not run out."""
        rows = self.sql("SELECT conversation, owner FROM herald_leases WHERE expires_at > now()")
        return dict(line.split("|") for line in rows.splitlines() if line)

    def start_everyone(self):
        """The instances and a connected client per person, once Herald answers; then each
        person sends "slow one ...", and this returns once all those model calls are waiting
        for the fake's answer together."""
        for _ in range(INSTANCES):
            start_instance(self)
        domain = self.server.component_domain
        clients = {}
        for person in PEOPLE:
            client = Client(self.server, person)
            client.connect()
            self.addCleanup(client.close)
            clients[person] = client
        # Every instance is connected once one of them answers, since they started one by one
        # and each was online (its control socket answered) before the next.
        self.assertTrue(wait_until(lambda: clients[PEOPLE[0]].ask(domain, "/ping", timeout=1.0)
                                   is not None, ONLINE), self.diagnosis())
        for client in clients.values():
            client.discard_pending()
        for person, client in clients.items():
            client.send(domain, f"slow one {person}")
        self.assertTrue(wait_until(lambda: len(self.llm.requests()) >= len(PEOPLE), ONLINE,
                                   interval=0.05),
                        f"{len(self.llm.requests())} model calls\n{self.diagnosis()}")
        return clients

    def test_a_killed_instance_loses_nothing_and_nothing_is_answered_twice(self):
        domain = self.server.component_domain
        # Round one: 50 model calls, all waiting for the fake's answer together.
        clients = self.start_everyone()
        ids = self.instance_ids()
        held = self.leases()
        counts = {agent: sum(1 for owner in held.values() if owner == iid)
                  for agent, iid in ids.items()}
        victim = max(counts, key=counts.get)
        victim_id = ids[victim]
        victims_people = sorted(c.split("@")[0] for c, owner in held.items()
                                if owner == victim_id and c.split("@")[0] in clients)
        self.assertGreater(len(victims_people), 0, f"leases: {held}")
        # Still inside the model's delay: none of round one has been answered yet.
        self.assertEqual(self.sql("SELECT count(*) FROM herald_inbox WHERE answered_at IS NOT "
                                  "NULL AND message LIKE '%slow one%'"), "0", self.diagnosis())
        def reserved_by(instance):
            return int(self.sql("SELECT count(*) FROM ledger_reservations "
                                f"WHERE instance = '{instance}'"))

        # Its calls in flight hold their tokens under the daily limit ([quota] daily_tokens).
        self.assertGreater(reserved_by(victim_id), 0, self.diagnosis())
        os.killpg(victim.proc.pid, signal.SIGKILL)
        killed_at = time.time()  # the database's clock is this host's
        victim.exit_code(timeout=10)

        # Round two, at once: ejabberd sends it to the two that live.
        for person, client in clients.items():
            client.send(domain, f"slow two {person}")

        # Every person gets both answers; the killed instance's people within the lease time
        # and the model's delay (plus a beat and ejabberd's and the fake's own time).
        answers = {}
        deadline = time.monotonic() + ANSWERED
        for person, client in clients.items():
            got = []
            while len(got) < 2 and time.monotonic() < deadline:
                got += client.replies_from(domain, within=max(0.1, deadline - time.monotonic()),
                                           count=2 - len(got))
            answers[person] = got
        # A second answer to one message would come from a second instance running its turn
        # too, which would have started at most a beat (and a poll) after the first and taken
        # the model's delay: watch that long (the first person's wait; the others' sockets
        # keep what arrives meanwhile), in which nothing more may arrive.
        extra = {}
        for i, (person, client) in enumerate(clients.items()):
            late = client.replies_from(domain, within=SLOW + BEAT + 1 if i == 0 else 0.5)
            if late:
                extra[person] = late
        self.assertEqual(extra, {}, f"answers beyond one per message\n{self.diagnosis()}")
        for person in PEOPLE:
            self.assertEqual(sorted(answers[person]),
                             [f"you said: slow one {person}", f"you said: slow two {person}"],
                             f"{person}\n{self.diagnosis()}")

        # The killed instance's people were answered by the others within the lease time, the
        # model's delay, a beat and a poll: when their first answer (to the message in flight
        # at the kill) was marked, which is just after it was sent.
        marked = dict(line.split("|") for line in self.sql(
            "SELECT conversation, extract(epoch FROM answered_at) FROM herald_inbox "
            "WHERE message LIKE '%slow one%'").splitlines())
        slowest = max(float(marked[f"{p}@localhost"]) - killed_at for p in victims_people)
        print(f"\nfailover: {len(victims_people)} of {len(PEOPLE)} conversations were on the "
              f"killed instance; their first answer came {slowest:.1f} s after SIGKILL "
              f"(lease {LEASE} s, model {SLOW} s)")
        self.assertLess(slowest, LEASE + SLOW + BEAT + 3, self.diagnosis())

        # The inbox: everything accepted was answered, once, by one instance per turn of
        # ownership.
        self.assertEqual(self.sql("SELECT count(*) FROM herald_inbox WHERE answered_at IS NULL"),
                         "0", self.diagnosis())
        rows = self.sql("SELECT conversation, answered_by FROM herald_inbox "
                        "WHERE message LIKE '%slow %' ORDER BY id")
        by_conversation = {}
        for line in rows.splitlines():
            conversation, answered_by = line.split("|")
            by_conversation.setdefault(conversation, []).append(answered_by)
        self.assertEqual(len(by_conversation), len(PEOPLE))
        for conversation, answerers in by_conversation.items():
            changes = sum(1 for a, b in zip(answerers, answerers[1:]) if a != b)
            self.assertLessEqual(changes, 1, f"{conversation}: {answerers}")
            self.assertNotIn(victim_id, answerers[1:] if changes else [],
                             f"{conversation}: {answerers}")
        # The killed instance answered nothing after its death; its conversations moved.
        for person in victims_people:
            self.assertNotIn(victim_id, by_conversation[f"{person}@localhost"])

        # Usage: one call per answer (the killed instance recorded none of its calls in
        # flight), and the fake's count is those plus the killed instance's calls in flight.
        answered_calls = 2 * len(PEOPLE)
        survivors = [a for a in self.agents if a is not victim]
        self.assertTrue(wait_until(
            lambda: self.sql("SELECT coalesce(sum(calls), 0) FROM ledger_usage "
                             "WHERE time_window = 'day'") == str(answered_calls),
            10, interval=0.2),
            self.sql("SELECT jid, calls FROM ledger_usage WHERE time_window = 'day'"))
        model_calls = [r for r in self.llm.requests()
                       if "slow " in (r.get("last_user_text") or "")]
        self.assertEqual(len(model_calls), answered_calls + len(victims_people))
        # The killed instance's reservations are released once it has been gone for 20 s
        # (InstanceRegistry::kGoneFor), at the next beat of one that lives: well inside this
        # test, where by themselves they would hold for 10 minutes (kReservationHold).
        self.assertTrue(wait_until(lambda: reserved_by(victim_id) == 0, 30, interval=0.5),
                        f"{reserved_by(victim_id)} left, "
                        f"{time.time() - killed_at:.1f} s after SIGKILL")
        for agent in survivors:
            result = run_heraldctl(agent.dir, "audit", "verify")
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            status = json.loads(run_heraldctl(agent.dir, "--json", "status").stdout)
            listed = {i.get("id") for i in status.get("instances", [])}
            self.assertEqual(listed, {ids[a] for a in survivors}, status.get("instances"))
            # Either lists every person's conversation, each answered by one of the two.
            listed = json.loads(run_heraldctl(agent.dir, "--json", "sessions", "list",
                                              "--kind", "direct").stdout)
            answerers = {c["key"]["address"]: c.get("instance")
                         for c in listed.get("conversations", [])}
            self.assertEqual(set(answerers), {f"{p}@localhost" for p in PEOPLE})
            self.assertLessEqual(set(answerers.values()), {ids[a] for a in survivors}, answerers)
            # Between them they hold every conversation (the last beat's count).
            self.assertTrue(wait_until(lambda: sum(
                int(i.get("conversations", 0)) for i in json.loads(run_heraldctl(
                    agent.dir, "--json", "status").stdout).get("instances", [])) == len(PEOPLE),
                10, interval=0.2), status.get("instances"))

        # Memory is shared: either instance exports each person's history whole, the same
        # bytes, whichever instances answered them; the message the killed instance had
        # recorded when it died is recorded once.
        for person in PEOPLE:
            exported = []
            for agent in survivors:
                target = tempfile.mkdtemp(prefix="herald-e2e-export-")
                self.addCleanup(shutil.rmtree, target, True)
                result = run_heraldctl(agent.dir, "memory", "export", f"{person}@localhost",
                                       os.path.join(target, "out"))
                self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
                with open(os.path.join(target, "out", "history.md"), encoding="utf-8") as f:
                    exported.append(f.read())
            self.assertEqual(exported[0], exported[1], person)
            history = exported[0]
            for said in (f"slow one {person}", f"slow two {person}"):
                self.assertEqual(history.count(said), 2,  # the message and its echo
                                 f"{person} ({'killed' if person in victims_people else 'kept'}"
                                 f" instance):\n{history}")
            self.assertLess(history.index(f"you said: slow one {person}"),
                            history.index(f"slow two {person}"), history)

    def test_a_database_restart_under_load_loses_nothing(self):
        self.lease_seconds = 30  # rides out the outage: no conversation changes hands
        domain = self.server.component_domain
        clients = self.start_everyone()
        # The database goes away while the 50 answers are being written: they go out, and
        # their marks wait for the database. The stop and start are the outage itself.
        self.db.stop()
        self.assertEqual(
            sorted(clients[PEOPLE[0]].replies_from(domain, within=SLOW + 5, count=1)),
            [f"you said: slow one {PEOPLE[0]}"])
        self.db.start()
        for person, client in clients.items():
            client.send(domain, f"slow two {person}")
        deadline = time.monotonic() + ANSWERED
        for i, (person, client) in enumerate(clients.items()):
            want = 1 if i == 0 else 2
            got = []
            while len(got) < want and time.monotonic() < deadline:
                got += client.replies_from(domain, within=max(0.1, deadline - time.monotonic()),
                                           count=want - len(got))
            expected = [f"you said: slow two {person}"]
            if i:
                expected.insert(0, f"you said: slow one {person}")
            self.assertEqual(sorted(got), expected, f"{person}\n{self.diagnosis()}")
        # Nothing accepted is left unanswered once the marks are written (the next beats), and
        # nothing was asked twice: 100 model calls, 100 calls in the ledger.
        self.assertTrue(wait_until(lambda: self.sql(
            "SELECT count(*) FROM herald_inbox WHERE answered_at IS NULL") == "0", 10,
            interval=0.2), self.diagnosis())
        self.assertEqual(len([r for r in self.llm.requests()
                              if "slow " in (r.get("last_user_text") or "")]), 2 * len(PEOPLE))
        self.assertTrue(wait_until(
            lambda: self.sql("SELECT coalesce(sum(calls), 0) FROM ledger_usage "
                             "WHERE time_window = 'day'") == str(2 * len(PEOPLE)), 10,
            interval=0.2), self.diagnosis())
        for agent in self.agents:
            self.assertIsNone(agent.exit_code(), agent.log()[-3000:])

    def test_an_allowlist_change_through_one_instance_holds_on_all_of_them(self):
        """carol, whom the configuration does not allow, is added through one instance: ejabberd
        hands her messages to any instance, and every one of them lets her through. Removed
        through another instance, none does."""
        domain = self.server.component_domain
        for _ in range(INSTANCES):
            start_instance(self)
        carol = Client(self.server, "carol")
        carol.connect()
        self.addCleanup(carol.close)

        def shown_everywhere(present):
            return all(("carol@localhost" in run_heraldctl(a.dir, "allowlist", "show").stdout)
                       == present for a in self.agents)

        added = run_heraldctl(self.agents[0].dir, "allowlist", "add", "carol@localhost")
        self.assertEqual(added.returncode, 0, added.stdout + added.stderr)
        self.assertTrue(wait_until(lambda: shown_everywhere(True), 10, interval=0.2),
                        self.diagnosis())
        # Twelve messages, one after the other's answer (a conversation queues only a few),
        # each handed by ejabberd to one of the three at random: one instance that did not let
        # her through would drop about a third of them.
        for i in range(12):
            carol.send(domain, f"hello {i}")
            self.assertEqual(carol.replies_from(domain, within=10, count=1),
                             [f"you said: hello {i}"], self.diagnosis())

        removed = run_heraldctl(self.agents[1].dir, "allowlist", "remove", "carol@localhost")
        self.assertEqual(removed.returncode, 0, removed.stdout + removed.stderr)
        self.assertTrue(wait_until(lambda: shown_everywhere(False), 10, interval=0.2),
                        self.diagnosis())
        for i in range(6):
            carol.send(domain, f"still there {i}")
        # Answers above came in well under a second each; watching 3 s for one that should not
        # come is ample, and nothing of hers may reach the inbox.
        self.assertEqual(carol.replies_from(domain, within=3), [], self.diagnosis())
        self.assertEqual(self.sql("SELECT count(*) FROM herald_inbox "
                                  "WHERE message LIKE '%still there%'"), "0")

    def test_a_credential_stored_through_one_instance_is_sealed_in_the_shared_table(self):
        """Two instances with the same key file: a credential stored through one and replaced
        through the other is one row of the shared table, its value sealed (never in clear in
        the database), and neither instance keeps a credentials file of its own."""
        folder = tempfile.mkdtemp(prefix="herald-e2e-key-")
        self.addCleanup(shutil.rmtree, folder, True)
        self.credentials_key = os.path.join(folder, "credentials.key")
        with open(self.credentials_key, "wb") as f:
            f.write(os.urandom(32))
        os.chmod(self.credentials_key, 0o600)
        for _ in range(2):
            start_instance(self)

        def store(agent, value):
            done = subprocess.run(
                [heraldctl_program(), "--target", f"unix:{os.path.join(agent.dir, SOCKET)}",
                 "--token", TOKEN, "skills", "credentials", "--owner", "api:billing",
                 "STRIPE_KEY"], input=value + "\n", capture_output=True, text=True, timeout=30)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertNotIn(value, done.stdout + done.stderr)

        first = "sk-e2e-first-" + os.urandom(8).hex()
        store(self.agents[0], first)
        second = "sk-e2e-second-" + os.urandom(8).hex()
        store(self.agents[1], second)
        rows = self.sql("SELECT owner, name, length(key_id), length(ciphertext) FROM credentials")
        self.assertEqual(rows, f"api:billing|STRIPE_KEY|16|{len(second)}", self.diagnosis())
        dump = self.sql("SELECT c::text FROM credentials c")
        for value in (first, second):
            self.assertNotIn(value, dump)
            self.assertNotIn(value.encode().hex(), dump)
        for agent in self.agents:
            self.assertFalse(os.path.exists(os.path.join(agent.dir, "data", "credentials.db")))
            self.assertNotIn(second, agent.log())

    def test_an_operators_schedule_is_shared_and_each_run_reaches_its_person_once(self):
        """Three instances with the same [[schedules.task]]: one row in the shared table, one
        schedule in every instance's list, and each of its runs (every 4 s) is claimed by one
        instance, so user00 gets one message per run counted in the database, and no more runs
        are counted than the time allows."""
        self.extra = ('\n[schedules]\n[[schedules.task]]\nname = "tick"\n'
                      'to = "user00@localhost"\nprompt = "say tick"\nwhen = "every 4s"\n')
        domain = self.server.component_domain
        person = Client(self.server, "user00")
        person.connect()
        self.addCleanup(person.close)
        started = time.monotonic()  # the schedule is made after this, by the first instance
        for _ in range(INSTANCES):
            start_instance(self)
        self.assertEqual(self.sql("SELECT count(*) FROM schedules WHERE name = 'tick'"), "1")

        def runs():
            return int(self.sql("SELECT runs FROM schedules WHERE name = 'tick'") or 0)

        arrivals = []  # when each message came, to the half second it was read in
        most_ahead = 0  # messages beyond the runs the database counts

        def caught_up():
            nonlocal most_ahead
            arrivals.extend(time.monotonic() for _ in person.replies_from(domain, within=0.5))
            made = runs()
            most_ahead = max(most_ahead, len(arrivals) - made)
            return made >= 3 and len(arrivals) == made

        self.assertTrue(wait_until(caught_up, 40, interval=0.1),
                        f"{len(arrivals)} messages, {runs()} runs\n{self.diagnosis()}")
        self.assertEqual(most_ahead, 0)
        # Runs fall 4 s apart from the schedule's making, which came after `started`: more
        # runs than that time holds is a run made by several instances (each counting it in
        # the database too, so the counts above stay equal). A slow run only lowers the count.
        made, elapsed = runs(), time.monotonic() - started
        self.assertLessEqual(made, int(elapsed / 4) + 1, f"{made} runs in {elapsed:.1f} s")
        for agent in self.agents:
            listed = json.loads(run_heraldctl(agent.dir, "schedules", "list", "--json").stdout)
            self.assertEqual([s["prompt"] for s in listed.get("schedules", [])], ["say tick"])

    def test_a_run_waiting_on_one_instance_is_answered_through_another(self):
        """A run on the first instance waits for an operator's approval of current_time: the
        second lists it (with the instance it waits on) and answers it, and the run goes on
        with the answer; a denial's reason reaches the model the same way; an action that is
        nowhere is NOT_FOUND through either."""
        folder = tempfile.mkdtemp(prefix="herald-e2e-rules-")
        self.addCleanup(shutil.rmtree, folder, True)
        self.rules = os.path.join(folder, "rules.toml")
        with open(self.rules, "w") as f:
            f.write('[[rule]]\nname = "after"\nafter_tool = "*"\n'
                    'reply = "The {tool} tool says: {tool_result}"\n'
                    '[[rule]]\nname = "time"\nstarts_with = "what time"\ntool = "current_time"\n'
                    '[[rule]]\nname = "fallback"\nreply = "ok"\n')
        self.extra = '\n[skills.approvals]\nskills = ["current_time"]\ntimeout_seconds = 60\n'
        first, second = start_instance(self), start_instance(self)
        first_id = self.instance_ids()[first]

        def converse_on_first(name):
            return subprocess.Popen(
                [heraldctl_program(), "--target", f"unix:{os.path.join(first.dir, SOCKET)}",
                 "--token", TOKEN, "--json", "converse", "--conversation", name,
                 "what time is it?"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def waiting_elsewhere():
            listed = json.loads(run_heraldctl(second.dir, "--json", "skills", "pending").stdout)
            return [a for a in listed.get("actions", []) if a.get("instance") == first_id]

        for name, answer, expected in (
                ("ops-yes", ["approve"], "The current_time tool says: "),
                ("ops-no", ["deny", "--reason", "not during the freeze"], "not during the freeze")):
            run = converse_on_first(name)
            self.addCleanup(run.kill)
            actions = []
            self.assertTrue(wait_until(lambda: actions.extend(waiting_elsewhere()) or actions, 20,
                                       interval=0.2), self.diagnosis())
            action = actions[0]
            self.assertEqual(action.get("skill"), "current_time")
            self.assertEqual(action.get("conversation"), f"api:{name}")
            # The first lists it as its own, without an instance.
            own = json.loads(run_heraldctl(first.dir, "--json", "skills", "pending").stdout)
            self.assertEqual([a.get("instance", "") for a in own.get("actions", [])], [""])
            done = run_heraldctl(second.dir, "skills", *answer[:1], action["actionId"],
                                 *answer[1:])
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            out, err = run.communicate(timeout=30)
            self.assertEqual(run.returncode, 0, out + err)
            self.assertIn(expected, out)
            if answer[0] == "approve":
                self.assertNotIn("did not approve", out)
            self.assertTrue(wait_until(lambda: not waiting_elsewhere(), 5, interval=0.2))
            # Answered: nowhere any more, through either instance.
            for agent in (first, second):
                again = run_heraldctl(agent.dir, "skills", "approve", action["actionId"])
                self.assertEqual(again.returncode, 5, again.stdout + again.stderr)
        self.assertEqual(self.sql("SELECT count(*) FROM pending_answers"), "0")


if __name__ == "__main__":
    unittest.main()
