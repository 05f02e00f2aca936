"""End to end: two Heralds on one domain share their rooms: one of them is in each (D1).

Two instances connect to ejabberd as the same XEP-0114 component, with no domain_balancing
(ejabberd hands each stanza to either at random), on one private PostgreSQL (postgres.py),
both configured with the same [[rooms]]. Each room's lease (herald_room_leases) names the
instance that is in it; a room stanza that reaches the other is handed over to it through the
database (component/storage/shared_rooms.h). What the tests check:

- the room has one Herald in it, and every message said there is answered exactly once,
  although about half of them reach the instance that is not in the room (four people speak,
  since Herald answers one occupant at most three times a minute);
- when that instance is killed with SIGKILL, the other takes the room's lease when it runs out
  and answers there, as the same occupant (the room sees no one leave or arrive), within the
  lease time and a bit;
- `heraldctl status` on either instance says which one holds the room;
- a room joined at run time through one instance (`heraldctl rooms join`) is joined by one of
  them and answered in once, and left through the other (`heraldctl rooms leave`).

    tests/e2e/run bazel-bin/component/herald test_shared_rooms
"""

import json
import os
import signal
import time
import unittest

from agent import component_config, runtime_sections
from client import Client, ClientError
from servers import tail, wait_until
from test_control import control_section, run_heraldctl
from test_scale_out import SharedDatabaseTest, start_instance, storage_section

LOBBY = "lobby@conference.localhost"
DEV = "dev@conference.localhost"
LEASE = 10        # RoomLeases::kLeaseTime ([storage] lease_seconds)
BEAT = 2          # SharedRooms' beat
ROOM_READY = 30.0
ANSWER = 15.0
# Who speaks in the rooms: Herald answers one occupant at most 3 times a minute (its loop
# breaker, RoomOptions::loop_replies), so each says at most 3 things.
SPEAKERS = ["speaker0", "speaker1", "speaker2", "speaker3"]


def heralds(occupants):
    """The occupants that are a Herald (a second one would be "herald_")."""
    return {nick for nick in occupants if nick.startswith("herald")}


class SharedRoomsTest(SharedDatabaseTest):
    ejabberd = {"extra_users": SPEAKERS}

    def config(self):
        llm = {"default": "anthropic:fake", "max_retries": 0, "connect_timeout_seconds": 2,
               "request_timeout_seconds": 20,
               "anthropic": {"base_url": self.llm.base_url, "api_key": "e2e-not-a-secret"}}
        return (component_config(self.server, allowed_jids=[f"{s}@localhost" for s in SPEAKERS])
                + runtime_sections(llm=llm, rooms=[
                    {"jid": LOBBY, "nick": "herald", "activation": "all"}])
                + control_section() + storage_section(self.db.conninfo(self.database))
                + f"lease_seconds = {LEASE}\n")

    def diagnosis(self):
        parts = [f"--- agent {i} (tail) ---\n{a.log()[-5000:]}" for i, a in enumerate(self.agents)]
        parts.append(f"--- room leases ---\n{self.sql('SELECT room, owner, expires_at > now() FROM herald_room_leases')}")
        parts.append(f"--- the fake LLM got {len(self.llm.requests())} requests ---")
        parts.append(f"--- tail of ejabberd's log ---\n{tail(self.server.log_file, 15)}")
        return "\n".join(parts)

    def holders(self, room):
        """The instance ids with a live lease of room."""
        rows = self.sql(f"SELECT owner FROM herald_room_leases WHERE room = '{room}' "
                        "AND expires_at > now()")
        return [line for line in rows.splitlines() if line]

    def agent_with_id(self, instance):
        rows = self.sql(f"SELECT pid FROM herald_instances WHERE id = '{instance}'")
        pid = int(rows.strip())
        return next(a for a in self.agents if a.proc.pid == pid)

    def speakers_in(self, room):
        """The speakers, connected and in room once Herald has made it (retrying while it is
        locked), and the occupants the first found there."""
        speakers, occupants = [], None
        for name in SPEAKERS:
            client = Client(self.server, name)
            client.connect()
            self.addCleanup(client.close)
            deadline = time.monotonic() + ROOM_READY
            while True:
                if client.exists(room, timeout=2):
                    try:
                        found, _ = client.join_room(room, name)
                        break
                    except ClientError:
                        pass
                if time.monotonic() > deadline:
                    self.fail(f"Herald did not make {room}\n{self.diagnosis()}")
                time.sleep(0.3)
            occupants = found if occupants is None else occupants
            speakers.append(client)
        for client in speakers[:-1]:
            client.discard_pending()  # the others' arrivals
        return speakers, occupants

    @staticmethod
    def from_heralds(listener, room, within, count=None):
        """What a Herald said in room (nick, body) as listener hears it, within `within`
        seconds or until `count` of them; what the speakers say is left out."""
        heard = []
        deadline = time.monotonic() + within
        while count is None or len(heard) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            got = listener.room_messages(room, within=left, count=1)
            if not got:
                break
            heard += [(nick, body) for nick, body in got if nick.startswith("herald")]
        return heard

    def say_and_count(self, speakers, room, texts):
        """Says each text in room, one at a time and each by the next speaker; returns what
        Herald said (nick, body) as the first speaker heard it."""
        heard = []
        for i, text in enumerate(texts):
            speakers[i % len(speakers)].say_in_room(room, text)
            heard += self.from_heralds(speakers[0], room, within=ANSWER, count=1)
        return heard

    def assert_answered_once(self, heard, texts):
        bodies = [body for _, body in heard]
        for text in texts:
            self.assertEqual(sum(1 for b in bodies if b.endswith(text)), 1,
                             f"answers to {text!r}: {bodies}\n{self.diagnosis()}")
        self.assertEqual({nick for nick, _ in heard}, {"herald"}, self.diagnosis())

    def test_one_instance_is_in_the_room_and_the_other_takes_it_when_it_dies(self):
        for _ in range(2):
            start_instance(self)
        speakers, occupants = self.speakers_in(LOBBY)
        listener = speakers[0]
        self.assertEqual(heralds(occupants), {"herald"}, self.diagnosis())
        holders = self.holders(LOBBY)
        self.assertEqual(len(holders), 1, self.diagnosis())
        # `heraldctl status` on either instance says which one is in the room.
        ids = self.sql("SELECT id FROM herald_instances").split()
        expected = {iid: (1 if iid == holders[0] else 0) for iid in ids}
        for agent in self.agents:
            self.assertTrue(wait_until(lambda: self.rooms_held(agent) == expected, 3 * BEAT + 5),
                            f"{self.rooms_held(agent)} != {expected}\n{self.diagnosis()}")

        # Each reaches the instance outside the room with odds 1/2.
        texts = [f"lobby message {i}" for i in range(2 * len(SPEAKERS))]
        heard = self.say_and_count(speakers, LOBBY, texts)
        # What reached the other instance was handed over: every message answered, once.
        heard += self.from_heralds(listener, LOBBY, within=2.0)
        self.assert_answered_once(heard, texts)

        holder = self.agent_with_id(holders[0])
        os.killpg(holder.proc.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        holder.exit_code(timeout=10)
        # Said at once: it waits in the database for whoever holds the room next.
        speakers[1].say_in_room(LOBBY, "said while nobody answered")
        first = self.from_heralds(listener, LOBBY, within=LEASE + 3 * BEAT + ANSWER, count=1)
        taken_after = time.monotonic() - killed_at
        self.assertEqual([b for _, b in first], ["you said: speaker1: said while nobody answered"],
                         self.diagnosis())
        self.assertLess(taken_after, LEASE + 3 * BEAT + 5, self.diagnosis())
        survivor = next(a for a in self.agents if a is not holder)
        self.assertEqual(self.holders(LOBBY), [self.instance_of(survivor)], self.diagnosis())

        after = [f"after the kill {i}" for i in range(len(SPEAKERS))]
        heard = self.say_and_count(speakers[2:] + speakers[:1], LOBBY, after[:3])
        heard += self.from_heralds(listener, LOBBY, within=2.0)
        self.assert_answered_once(heard, after[:3])
        # The same occupant all along: no second Herald came in.
        self.assertFalse(listener.occupant_arrives(LOBBY, "herald_", within=0.5))
        print(f"\nshared rooms: the room answered again {taken_after:.1f} s after SIGKILL "
              f"(lease {LEASE} s)")

    def rooms_held(self, agent):
        """Instance id → the rooms it holds, as `heraldctl --json status` on agent says."""
        result = run_heraldctl(agent.dir, "--json", "status")
        self.assertEqual(result.returncode, 0, result.stderr)
        return {i["id"]: int(i.get("rooms", 0))
                for i in json.loads(result.stdout).get("instances", [])}

    def instance_of(self, agent):
        return self.sql(f"SELECT id FROM herald_instances WHERE pid = {agent.proc.pid}").strip()

    def test_a_room_joined_through_one_instance_is_joined_by_one_and_left_through_the_other(self):
        first, second = start_instance(self), start_instance(self)
        result = run_heraldctl(first.dir, "rooms", "join", DEV, "--activation", "all")
        self.assertEqual(result.returncode, 0, result.stderr + self.diagnosis())
        speakers, occupants = self.speakers_in(DEV)
        self.assertEqual(heralds(occupants), {"herald"}, self.diagnosis())
        self.assertEqual(len(self.holders(DEV)), 1, self.diagnosis())
        # Both list it: it is every instance's room.
        for agent in (first, second):
            self.assertTrue(wait_until(
                lambda: DEV in run_heraldctl(agent.dir, "rooms", "list").stdout, 10),
                self.diagnosis())

        texts = [f"dev message {i}" for i in range(len(SPEAKERS))]
        heard = self.say_and_count(speakers, DEV, texts)
        heard += self.from_heralds(speakers[0], DEV, within=2.0)
        self.assert_answered_once(heard, texts)

        result = run_heraldctl(second.dir, "rooms", "leave", DEV)
        self.assertEqual(result.returncode, 0, result.stderr + self.diagnosis())
        self.assertTrue(wait_until(lambda: not self.holders(DEV), 3 * BEAT + 5),
                        self.diagnosis())
        speakers[1].say_in_room(DEV, "anyone here?")
        self.assertEqual(self.from_heralds(speakers[0], DEV, within=4.0), [], self.diagnosis())


if __name__ == "__main__":
    unittest.main()
