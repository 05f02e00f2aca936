"""End to end: files Herald sends, and voice both ways (docs/media.md).

Herald runs as the component of a real Prosody (mod_http_file_share) and a real ejabberd
(mod_http_upload), on the fake LLM speaking OpenAI's wire format, whose media endpoints
(/v1/images/generations, /v1/audio/transcriptions, /v1/audio/speech) answer like OpenAI's.
alice is a real XMPP client (slixmpp). What Herald sends goes through the server's own upload
service: a slot asked for with XEP-0363, an HTTP PUT, then a message whose body is the link
and which carries it as XEP-0066 out-of-band data; alice downloads it from the server and gets
the very bytes the fake made.

- `image_generate`: "draw: ..." makes the fake model call the skill; the picture the fake image
  endpoint made reaches alice as a file, and the call is counted in her usage;
- `/voice on`: the answer comes as an Ogg Opus voice message too, spoken on this machine;
- a voice note transcribed by the provider (the exact bytes alice sent reach its endpoint),
  answered in text and, with [voice] answer_voice_notes, spoken by the provider.

    tests/e2e/run bazel-bin/component/herald test_media_out
"""

import hashlib
import os
import subprocess
import tempfile
import unittest

from agent import component_config, runtime_sections
from fake_llm import FakeLlm
from servers import Ejabberd, Prosody
from uploads import UploadServiceCase

ANSWER = 30.0   # a turn with a tool call, then an upload (or a synthesis) and the link


def media_requests(llm, endpoint):
    return [r for r in llm.requests() if r.get("kind") == "media" and r["endpoint"] == endpoint]


class MediaOutTest(UploadServiceCase):
    """The tests, for a class whose `server_class` is a server of servers.py."""

    def start_herald(self, extra="", skills=("current_time",)):
        llm = FakeLlm("openai")
        llm_keys = {"default": "openai:fake", "max_retries": 0,
                    "connect_timeout_seconds": 2, "request_timeout_seconds": 20,
                    "openai": {"base_url": llm.base_url, "api_key": "e2e-not-a-secret"}}
        config = (component_config(self.server)
                  + runtime_sections(llm=llm_keys, skills=skills) + extra)
        super().start_herald(config, llm)

    def file_from_herald(self):
        """The messages up to the first one carrying a link, and that link's bytes."""
        got = self.alice.chats_with_links(self.herald, within=ANSWER)
        links = [(body, url, desc) for body, url, desc in got if url is not None]
        self.assertEqual(len(links), 1, f"{got}\n{self.diagnosis()}")
        body, url, desc = links[0]
        # The body is the bare link, as clients want it to show the file inline; it is the
        # server's upload service's.
        self.assertEqual(body, url)
        self.assertTrue(url.startswith(f"http://localhost:{self.server.upload_port}/"), url)
        return [b for b, u, _ in got if u is None], desc, self.alice.download(url)

    def test_a_picture_the_model_asked_for_reaches_alice_as_a_file(self):
        self.start_herald('\n[skills.image_generate]\nmodel = "openai:fake-image"\n',
                          skills=("current_time", "image_generate"))
        self.alice.send(self.herald, "draw: a red fox in the snow")
        texts, desc, data = self.file_from_herald()
        self.assertIn("Here is your picture.", texts, self.diagnosis())
        self.assertIn(" a red fox in the snow", texts)  # the caption, before the link
        self.assertEqual(desc, " a red fox in the snow")
        images = media_requests(self.llm, "images")
        self.assertEqual(len(images), 1, self.diagnosis())
        self.assertEqual(images[0]["model"], "fake-image")
        self.assertEqual(images[0]["prompt"], " a red fox in the snow")
        self.assertEqual(hashlib.sha256(data).hexdigest(), images[0]["image_sha256"])
        self.assertTrue(data.startswith(b"\x89PNG\r\n\x1a\n"))
        # Counted like any call: two chat calls and the picture.
        usage = self.alice.ask(self.herald, "/usage", timeout=ANSWER)
        self.assertIsNotNone(usage, self.diagnosis())
        self.assertIn("today: ", usage)
        self.assertIn(" in 3 calls", usage.split("\n")[1], usage)

    def test_with_voice_on_the_answer_comes_as_a_voice_message_spoken_here(self):
        self.start_herald()
        self.assertEqual(self.alice.ask(self.herald, "/voice on", timeout=ANSWER),
                         "Spoken answers on: each answer comes as a voice message too.")
        self.alice.send(self.herald, "hello there")
        texts, _, data = self.file_from_herald()
        self.assertIn("you said: hello there", texts, self.diagnosis())
        self.assertEqual(data[:4], b"OggS")
        self.assertEqual(data[28:36], b"OpusHead")
        self.assertEqual(media_requests(self.llm, "speech"), [])  # spoken on this machine
        # And off again: a plain answer, no file.
        self.assertEqual(self.alice.ask(self.herald, "/voice off", timeout=ANSWER),
                         "Spoken answers off.")
        self.alice.send(self.herald, "and now?")
        got = self.alice.chats_with_links(self.herald, within=3.0, until_link=False)
        self.assertEqual([url for _, url, _ in got], [None], got)

    def test_a_voice_note_is_transcribed_and_answered_by_the_provider_in_both_directions(self):
        self.start_herald('\n[voice]\ntranscription = "openai:fake-whisper"\n'
                          'speech = "openai:fake-tts"\nvoice = "nova"\n'
                          'answer_voice_notes = true\n')
        with tempfile.TemporaryDirectory() as folder:
            wav = os.path.join(folder, "note.wav")
            ogg = os.path.join(folder, "note.ogg")
            subprocess.run(["espeak-ng", "-w", wav, "something to transcribe"], check=True,
                           capture_output=True, timeout=30)
            subprocess.run(["opusenc", "--quiet", wav, ogg], check=True, capture_output=True,
                           timeout=30)
            with open(ogg, "rb") as f:
                note = f.read()
        url = self.alice.upload(self.server.upload_domain, note, "voice-message.ogg",
                                "audio/ogg")
        self.alice.discard_pending()
        self.alice.send_file(self.herald, url)
        texts, _, data = self.file_from_herald()
        self.assertIn("I heard: \u201cwhat is the weather in paris\u201d", texts,
                      self.diagnosis())
        self.assertIn("you said: [The user sent a voice message", " ".join(texts))
        heard = media_requests(self.llm, "transcriptions")
        self.assertEqual(len(heard), 1, self.diagnosis())
        self.assertEqual(heard[0]["model"], "fake-whisper")
        self.assertEqual(heard[0]["file_sha256"], hashlib.sha256(note).hexdigest())
        self.assertEqual(heard[0]["filename"], "voice.ogg")
        spoken = media_requests(self.llm, "speech")
        self.assertEqual(len(spoken), 1, self.diagnosis())
        self.assertEqual(spoken[0]["model"], "fake-tts")
        self.assertEqual(spoken[0]["voice"], "nova")
        self.assertIn("what is the weather in paris", spoken[0]["input"])
        self.assertEqual(hashlib.sha256(data).hexdigest(), spoken[0]["audio_sha256"])


class ProsodyMediaOutTest(MediaOutTest, unittest.TestCase):
    server_class = Prosody


class EjabberdMediaOutTest(MediaOutTest, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
