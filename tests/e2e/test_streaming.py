"""End to end: streamed answers (XEP-0308) through real Prosody and ejabberd.

A client that announces corrections in disco#info (slixmpp with its xep_0308 plugin, as
Conversations, Gajim, Dino and Monal do) sees the first sentence of an answer arrive as a
message, then that message corrected as the model writes, ending with the whole answer. The
corrections in between carry <no-store/> (XEP-0334), so the user's archive (XEP-0313, which
both servers keep here) holds the first message and the last correction only. A client that
does not announce corrections gets the whole answer once.

    tests/e2e/run bazel-bin/component/herald test_streaming
"""

import unittest

from servers import Ejabberd, Prosody
from test_conversation import ANSWER, SILENCE, _ConversationBase

# What the fake LLM answers to a message that mentions "stream", one word every 120 ms
# (tests/fakes/fake_llm_main.cc).
STREAM_TAIL = ("This answer is written word by word, slowly, so that it streams. It has a few "
               "sentences in it. This is the last one.")


def streamed_answer(text):
    return f"you said: {text}. {STREAM_TAIL}"


def archived(client, herald, prefix):
    """The messages from Herald in client's archive whose body starts with prefix:
    [(id, body, the id it corrects or None)]. The server lives for the whole class, so the
    archive also holds what earlier tests were sent."""
    return [entry for entry in client.archive_from(herald) if entry[1].startswith(prefix)]


class _StreamingTests(_ConversationBase):

    def test_herald_announces_corrections(self):
        agent = self.start_agent()
        alice = self.client("alice")
        self.wait_online(alice, agent)
        self.assertIn("urn:xmpp:message-correct:0", alice.features_of(self.herald))

    def test_a_client_that_shows_corrections_sees_the_answer_grow_and_the_archive_keeps_it_once(
            self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm))
        alice = self.client("alice", plugins=("xep_0308",))
        self.wait_online(alice, agent)

        alice.send(self.herald, "stream it")
        final = streamed_answer("stream it")
        got = alice.corrections_from(self.herald, within=ANSWER + 10, until=final)

        self.assertGreaterEqual(len(got), 3, f"{got}\n{self.diagnosis()}")
        first_id, first_body, corrects, no_store = got[0]
        self.assertIsNone(corrects, got)
        self.assertFalse(no_store, got)  # the first message is kept
        self.assertTrue(final.startswith(first_body) and len(first_body) < len(final), got)
        for _, _, corrects, _ in got[1:]:
            self.assertEqual(corrects, first_id, got)  # every correction names the first message
        # Only the last correction, with the whole answer, is for keeping.
        self.assertEqual([no_store for _, _, _, no_store in got[1:]],
                         [True] * (len(got) - 2) + [False], got)
        self.assertEqual(got[-1][1], final)
        self.assertEqual(len({message_id for message_id, _, _, _ in got}), len(got), got)

        # The archive holds the first message and the whole answer, not the partial copies.
        self.assertEqual(archived(alice, self.herald, "you said: stream it."),
                         [(first_id, first_body, None), (got[-1][0], final, first_id)],
                         self.diagnosis())

    def test_a_streamed_answer_says_which_tool_runs_until_the_text_replaces_it(self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm))
        alice = self.client("alice", plugins=("xep_0308",))
        self.wait_online(alice, agent)

        # Herald asks a client what it shows when it first writes, while the model thinks; a
        # tool call can come sooner than the answer, so the first message settles that.
        alice.send(self.herald, "hello")
        alice.corrections_from(self.herald, within=ANSWER, until="you said: hello")
        # The fake model calls current_time for a question about the time, then answers.
        alice.send(self.herald, "what time is it?")
        got = alice.corrections_from(self.herald, within=ANSWER, until="The time is ",
                                     prefix=True)
        self.assertGreaterEqual(len(got), 2, f"{got}\n{self.diagnosis()}")
        first_id, first_body, corrects, _ = got[0]
        self.assertEqual((first_body, corrects), ("(running current_time\u2026)", None), got)
        self.assertTrue(got[-1][1].startswith("The time is "), got)
        self.assertEqual(got[-1][2], first_id, got)  # the answer replaces the progress line
        self.assertNotIn("running", got[-1][1], got)

    def test_an_answer_streams_over_http2_from_a_provider_behind_a_private_ca(self):
        llm = self.fake_llm(tls=True)  # TLS on a self-signed certificate, HTTP/2 by ALPN
        keys = self.llm_keys(llm)
        keys[llm.format]["tls_ca_file"] = llm.certificate
        agent = self.start_agent(keys)
        alice = self.client("alice", plugins=("xep_0308",))
        self.wait_online(alice, agent)

        alice.send(self.herald, "stream over h2")
        final = streamed_answer("stream over h2")
        got = alice.corrections_from(self.herald, within=ANSWER + 10, until=final)
        self.assertGreaterEqual(len(got), 3, f"{got}\n{self.diagnosis()}")
        self.assertEqual(got[-1][1], final, got)
        versions = {r["http_version"] for r in llm.requests() if r.get("kind") != "media"}
        self.assertEqual(versions, {"HTTP/2"}, llm.requests())

    def test_a_client_that_does_not_show_corrections_gets_the_whole_answer_once(self):
        llm = self.fake_llm()
        agent = self.start_agent(self.llm_keys(llm))
        alice = self.client("alice")  # no xep_0308: it does not announce corrections
        self.wait_online(alice, agent)

        alice.send(self.herald, "stream it whole")
        final = streamed_answer("stream it whole")
        got = alice.corrections_from(self.herald, within=ANSWER + 10, until=final)
        self.assertEqual([(body, corrects, no_store) for _, body, corrects, no_store in got],
                         [(final, None, False)], self.diagnosis())
        self.assertEqual(alice.replies_from(self.herald, within=SILENCE), [])
        self.assertEqual(archived(alice, self.herald, "you said: stream it whole."),
                         [(got[0][0], final, None)])

    def test_a_room_sees_the_answer_grow_more_slowly(self):
        alice = self.alice_in_room_with_herald()

        alice.say_in_room_with_id(self.room, "herald: stream it", "e2e-room-stream-1")
        final = streamed_answer("alice: herald: stream it")
        traffic = alice.room_traffic(self.room, within=ANSWER + 10, until_nick="herald",
                                     until_body=final)
        answer = [m for m in traffic if m["nick"] == "herald"]
        self.assertGreaterEqual(len(answer), 2, f"{traffic}\n{self.diagnosis()}")
        first = answer[0]
        self.assertIsNone(first["corrects"], answer)
        self.assertTrue(final.startswith(first["body"]), answer)
        self.assertEqual([m["corrects"] for m in answer[1:]], [first["id"]] * (len(answer) - 1))
        self.assertEqual(answer[-1]["body"], final)
        # The answer takes about 3.6 s to write; at most one correction every 2 s in a room
        # leaves room for two in between at most.
        self.assertLessEqual(len(answer), 4, answer)
        # Each message of the answer still says which question it answers (XEP-0461).
        self.assertTrue(all(m["reply"] is not None for m in answer), answer)


class ProsodyStreamingTest(_StreamingTests, unittest.TestCase):
    server_class = Prosody


class EjabberdStreamingTest(_StreamingTests, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
