"""End to end: several Heralds on one component domain, sharing PostgreSQL (D1).

Heralds connect to ejabberd as the same XEP-0114 component, each with its own folder and
control socket, and all with [storage] backend = "postgresql" on one private server
(postgres.py). ejabberd's domain_balancing (tools/servers/ejabberd-scale-out.yml: bare_source,
two slots) sends all of one person's stanzas to one instance. What the tests check:

- usage is counted in one ledger: a person served by one instance and then, once it has
  stopped, by the replacement that took its slot, has both calls in the totals that every
  instance reports, and those equal the fake model's count;
- a limit set through one instance stops the person another instance serves (each re-reads
  the shared ledger every 2 s);
- a database outage is survived: people are answered while it lasts, and the usage of those
  answers is recorded when the database is back, without restarting Herald;
- Herald refuses to start without its database, saying which, and Prosody refuses a second
  instance on one domain with <conflict/> (exit status 5).

    tests/e2e/run bazel-bin/component/herald test_scale_out
"""

import json
import os
import unittest

from agent import Agent, agent_program, component_config, runtime_sections
from client import Client
from fake_llm import FakeLlm, fake_llm_program
from postgres import Postgres
from servers import Ejabberd, Prosody, tail, wait_until
from test_control import SOCKET, TOKEN, control_section, heraldctl_program, run_heraldctl

ONLINE = 30.0
ANSWER = 15.0


def storage_section(conninfo):
    return f"""
[storage]
backend = "postgresql"
postgresql = "{conninfo}"
pool_size = 2
"""


def start_instance(test):
    """Starts one instance with test.config(), adds it to test.agents, and waits until its
    control plane answers (test.diagnosis() explains a failure)."""
    agent = Agent.start(test.config(), secret=test.server.component_secret)
    test.addCleanup(agent.stop)
    test.agents.append(agent)
    path = os.path.join(agent.dir, SOCKET)
    ready = wait_until(lambda: agent.exit_code() is not None or (
        os.path.exists(path) and run_heraldctl(agent.dir, "status").returncode == 0),
        ONLINE, interval=0.1)
    if not ready or agent.exit_code() is not None:
        test.fail(f"herald did not start (exit {agent.exit_code()})\n{test.diagnosis()}")
    return agent


class SharedDatabaseTest(unittest.TestCase):
    """Heralds behind one ejabberd, on one private PostgreSQL with a database per test: the
    class starts ejabberd (Ejabberd(**ejabberd)) and PostgreSQL (self.db), each test the fake
    model (self.llm: FakeLlm("anthropic", **fake_llm)) and its database (self.database);
    self.agents are the instances start_instance started."""
    ejabberd = {}
    fake_llm = {}

    @classmethod
    def setUpClass(cls):
        if os.environ.get("HERALD_E2E_AGENT") == "echo":
            raise unittest.SkipTest("the echo stand-in keeps no state")
        agent_program()
        fake_llm_program()
        heraldctl_program()
        cls.db = Postgres()
        cls.server = Ejabberd(**cls.ejabberd)
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.db.close()

    def setUp(self):
        self.llm = FakeLlm("anthropic", **self.fake_llm)
        self.addCleanup(self.llm.stop)
        self.database = f"herald_{self.id().rsplit('.', 1)[-1][:40]}"
        self.db.sql("postgres", f"CREATE DATABASE {self.database}")
        self.agents = []

    def sql(self, statement):
        return self.db.sql(self.database, statement)


class ScaleOutTest(SharedDatabaseTest):
    ejabberd = {"scale_out": True}

    def config(self):
        llm = {"default": "anthropic:fake", "max_retries": 0, "connect_timeout_seconds": 2,
               "request_timeout_seconds": 20,
               "anthropic": {"base_url": self.llm.base_url, "api_key": "e2e-not-a-secret"}}
        return (component_config(self.server, allowed_jids=("alice@localhost", "bob@localhost"))
                + runtime_sections(llm=llm) + control_section()
                + storage_section(self.db.conninfo(self.database)))

    def start_agent(self):
        return start_instance(self)

    def diagnosis(self):
        parts = [f"--- agent {i} ---\n{a.log()}" for i, a in enumerate(self.agents)]
        parts.append(f"--- the fake LLM's requests ---\n{self.llm.requests()}")
        parts.append(f"--- tail of ejabberd's log ---\n{tail(self.server.log_file, 15)}")
        parts.append(f"--- tail of PostgreSQL's log ---\n{tail(self.db.log_path, 15)}")
        return "\n".join(parts)

    def client(self, user):
        c = Client(self.server, user)
        c.connect()
        self.addCleanup(c.close)
        return c

    def ask(self, client, body):
        reply = client.ask(self.server.component_domain, body, timeout=ANSWER)
        self.assertIsNotNone(reply, f"no answer to {body!r}\n{self.diagnosis()}")
        return reply

    def wait_online(self, client):
        ok = wait_until(lambda: client.ask(self.server.component_domain, "/ping",
                                           timeout=1.0) is not None, ONLINE)
        self.assertTrue(ok, f"herald did not answer /ping\n{self.diagnosis()}")
        client.discard_pending()

    def usage(self, agent, jid):
        """(calls, input tokens) for jid today, as `heraldctl usage` on `agent` reports them."""
        result = run_heraldctl(agent.dir, "--json", "usage", "--jid", jid, "--window", "day")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn(TOKEN, result.stdout + result.stderr)
        rows = [r for r in json.loads(result.stdout).get("rows", []) if r.get("jid") == jid]
        return (sum(int(r.get("calls", 0)) for r in rows),
                sum(int(r.get("input_tokens", 0)) for r in rows))

    def instances(self, agent):
        """The instances `heraldctl --json status` on `agent` lists."""
        result = run_heraldctl(agent.dir, "--json", "status")
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout).get("instances", [])

    def serving(self, jid):
        """The running agents that answer jid (the one ejabberd routes it to): those that
        `heraldctl sessions list` names as its conversation's instance (every instance lists
        every conversation, with the one that holds it)."""
        holders = []
        for agent in self.agents:
            if agent.exit_code() is not None:
                continue
            mine = [i.get("id") for i in self.instances(agent) if i.get("thisInstance")]
            result = run_heraldctl(agent.dir, "--json", "sessions", "list")
            if result.returncode != 0 or not mine:
                continue
            for conversation in json.loads(result.stdout).get("conversations", []):
                if (conversation.get("key", {}).get("address") == jid
                        and conversation.get("instance") == mine[0]):
                    holders.append(agent)
        return holders

    # --- the tests ------------------------------------------------------------------------

    def test_instances_count_usage_in_one_ledger(self):
        self.start_agent()
        self.start_agent()  # two instances: ejabberd's two slots are taken
        people = {user: self.client(user) for user in ("alice", "bob")}
        for client in people.values():
            self.wait_online(client)
        for user, client in people.items():
            self.assertTrue(self.ask(client, f"hello from {user}").startswith("you said:"))
        holders = self.serving("alice@localhost")
        self.assertEqual(len(holders), 1, f"alice's session is on {len(holders)} instances\n"
                                          f"{self.diagnosis()}")
        # Each instance lists both, and itself as the one that answered.
        for agent in self.agents:
            self.assertTrue(wait_until(lambda: len(self.instances(agent)) == 2, ANSWER,
                                       interval=0.2), self.diagnosis())
            mine = [i for i in self.instances(agent) if i.get("thisInstance")]
            self.assertEqual(len(mine), 1, self.instances(agent))

        # The instance that served alice stops; a replacement takes its slot, and with it
        # alice's next message.
        holders[0].stop()
        replacement = self.start_agent()
        self.wait_online(people["alice"])
        self.assertTrue(self.ask(people["alice"], "hello again").startswith("you said:"))
        self.assertEqual(self.serving("alice@localhost"), [replacement])

        # Both of alice's calls are in the one ledger, though two instances made them; every
        # running instance reports the same totals, and they are the fake model's count.
        counted = wait_until(lambda: self.usage(replacement, "alice@localhost")[0] == 2,
                             ANSWER, interval=0.2)
        self.assertTrue(counted, f"usage: {self.usage(replacement, 'alice@localhost')}\n"
                                 f"{self.diagnosis()}")
        for agent in self.agents:
            if agent.exit_code() is None:
                self.assertEqual(self.usage(agent, "alice@localhost")[0], 2)
                self.assertEqual(self.usage(agent, "bob@localhost")[0], 1)
        self.assertEqual(len(self.llm.requests()), 3)
        self.assertEqual(
            self.db.sql(self.database,
                        "SELECT sum(calls) FROM ledger_usage WHERE time_window = 'day'"), "3")

    def test_a_limit_set_through_one_instance_holds_on_the_other(self):
        first, second = self.start_agent(), self.start_agent()
        alice = self.client("alice")
        self.wait_online(alice)
        self.assertEqual(self.ask(alice, "first"), "you said: first")
        holders = self.serving("alice@localhost")
        self.assertEqual(len(holders), 1, self.diagnosis())
        serving = holders[0]
        other = second if serving is first else first

        # The operator sets the limit through the instance that does not serve alice.
        result = run_heraldctl(other.dir, "limits", "set", "--jid", "alice@localhost",
                               "--window", "day", "--max-tokens", "1", "--mode", "block")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

        def reached_on_serving():
            out = run_heraldctl(serving.dir, "--json", "limits", "list", "--jid",
                                "alice@localhost").stdout
            # The default daily limit (100000) is far off: only the new one can be reached.
            return any(state.get("reached") for state in json.loads(out or "{}").get("limits", []))

        # The serving instance re-reads the shared ledger every 2 s.
        self.assertTrue(wait_until(reached_on_serving, ANSWER, interval=0.2), self.diagnosis())
        before = len(self.llm.requests())
        self.assertIn("daily limit of 1 tokens", self.ask(alice, "second"))
        self.assertEqual(len(self.llm.requests()), before, "the blocked message reached the LLM")

    def test_a_database_restart_is_survived(self):
        agent = self.start_agent()
        self.start_agent()  # both slots taken, so bob has an instance whichever his is
        bob = self.client("bob")
        self.wait_online(bob)
        self.ask(bob, "before the outage")
        self.assertTrue(wait_until(lambda: self.usage(agent, "bob@localhost")[0] == 1, ANSWER,
                                   interval=0.2), self.diagnosis())

        # While the database is away bob is still answered; the call's usage is counted in
        # memory and recorded once the database is back (at the next beat, within 2 s).
        self.db.stop()
        self.assertEqual(self.ask(bob, "during the outage"), "you said: during the outage")
        self.db.start()
        # Herald's pooled connections were cut; the next use reconnects by itself.
        self.ask(bob, "after the outage")
        self.assertTrue(wait_until(lambda: self.usage(agent, "bob@localhost")[0] == 3, ANSWER,
                                   interval=0.2),
                        f"usage: {self.usage(agent, 'bob@localhost')}\n{self.diagnosis()}")
        self.assertEqual(len(self.llm.requests()), 3)
        for running in self.agents:
            self.assertIsNone(running.exit_code())

    def test_an_unreachable_database_stops_herald_at_start_and_names_it(self):
        config = self.config().replace(self.db.conninfo(self.database),
                                       "host=/nonexistent/herald user=herald "
                                       "password=e2e-db-password dbname=herald")
        agent = Agent.start(config, secret=self.server.component_secret)
        self.addCleanup(agent.stop)
        self.assertEqual(agent.exit_code(timeout=ONLINE), 1, agent.log())
        self.assertIn("herald: [storage] postgresql: PostgreSQL (storage): cannot connect",
                      agent.log())
        self.assertNotIn("e2e-db-password", agent.log())


class ProsodyRefusesASecondInstanceTest(unittest.TestCase):
    """Prosody allows one connection per component domain: the second Herald is refused."""

    def test_the_second_instance_gets_conflict(self):
        if os.environ.get("HERALD_E2E_AGENT") == "echo":
            self.skipTest("the echo stand-in has its own exit statuses")
        with Prosody() as server:
            config = component_config(server) + runtime_sections()
            first = Agent.start(config, secret=server.component_secret)
            self.addCleanup(first.stop)
            alice = Client(server, "alice")
            alice.connect()
            self.addCleanup(alice.close)
            online = wait_until(lambda: alice.ask(server.component_domain, "/ping",
                                                  timeout=1.0) is not None, ONLINE)
            self.assertTrue(online, first.log())
            second = Agent.start(config, secret=server.component_secret)
            self.addCleanup(second.stop)
            self.assertEqual(second.exit_code(timeout=ONLINE), 5, second.log())
            self.assertIn("conflict", second.log())
            self.assertIsNone(first.exit_code())


if __name__ == "__main__":
    unittest.main()
