"""End to end: files people send (docs/media.md), through the server's real upload service.

Herald runs as the component of a real Prosody (mod_http_file_share) and a real ejabberd
(mod_http_upload), on the fake LLM speaking Anthropic's Messages API, with a vision tier.
alice is a real XMPP client (slixmpp): she uploads a file with XEP-0363 — a slot from the
server's upload service, an HTTP PUT — and sends its URL as XEP-0066 out-of-band data with
the URL as the body, as Conversations does. Herald downloads it from the upload service (on
loopback, which the SSRF guard otherwise refuses: the service's own URLs are trusted because
a slot Herald asked for named them), sniffs its type from the bytes and:

- a PNG reaches the fake vision model as an image block: the same bytes (SHA-256), on the
  vision tier's model;
- a PDF's text reaches the model, is kept in history.md with the message, and the file is
  kept under attachments/ in alice's folder;
- a link to anything else on loopback is refused by the guard, and alice is told.

    tests/e2e/run bazel-bin/component/herald test_attachments
"""

import hashlib
import os
import struct
import subprocess
import tempfile
import unittest
import zlib

from agent import component_config, runtime_sections
from fake_llm import FakeLlm
from memory_files import read_history, user_folder
from servers import Ejabberd, Prosody, free_port
from uploads import UploadServiceCase

ANSWER = 20.0   # a download, the file's handling and one turn through the fake LLM
VISION_MODEL = "fake-vision"


def png(width=4, height=3, rgb=(200, 30, 60)):
    """A small valid PNG: 8-bit RGB, one colour."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def pdf(lines):
    """A one-page PDF whose page shows `lines` (ASCII) in Helvetica, with a correct xref."""
    text = "".join(f"({line}) Tj 0 -16 Td " for line in lines)
    stream = f"BT /F1 12 Tf 72 720 Td {text}ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream
        + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\n"
            f"startxref\n{xref}\n%%EOF\n").encode()
    return out


class AttachmentsTest(UploadServiceCase):
    """The tests, for a class whose `server_class` is a server of servers.py."""

    def start_herald(self, vision=True):
        llm = FakeLlm("anthropic")
        llm_keys = {"default": "anthropic:fake", "max_retries": 0,
                    "connect_timeout_seconds": 2, "request_timeout_seconds": 20,
                    "anthropic": {"base_url": llm.base_url, "api_key": "e2e-not-a-secret"}}
        if vision:
            llm_keys["tiers"] = {"vision": f"anthropic:{VISION_MODEL}"}
        super().start_herald(component_config(self.server) + runtime_sections(llm=llm_keys), llm)

    def send_file(self, data, filename, content_type, replies=1):
        """Uploads `data` as alice and sends it to Herald; Herald's first `replies` replies."""
        url = self.alice.upload(self.server.upload_domain, data, filename, content_type)
        self.assertTrue(url.startswith(f"http://localhost:{self.server.upload_port}/"), url)
        self.alice.discard_pending()
        self.alice.send_file(self.herald, url)
        got = self.alice.replies_from(self.herald, within=ANSWER, count=replies)
        self.assertEqual(len(got), replies, f"replies to {filename}: {got}\n{self.diagnosis()}")
        return url, got

    def test_a_picture_reaches_the_vision_model_as_the_bytes_alice_uploaded(self):
        self.start_herald()
        image = png()
        self.send_file(image, "photo.png", "image/png")
        request = self.llm.requests()[-1]
        self.assertEqual(request["model"], VISION_MODEL, request)
        self.assertEqual(request["images"], [{"media_type": "image/png", "size": len(image),
                                              "sha256": hashlib.sha256(image).hexdigest()}])
        # The URL alone was the body: the model reads a note, not the URL.
        self.assertNotIn("http://", request["last_user_text"])
        self.assertIn("picture", request["last_user_text"])
        # The file is kept in alice's folder; history.md names it.
        folder = user_folder(self.agent.memory_dir, "alice@localhost")
        kept = os.listdir(os.path.join(folder, "attachments"))
        self.assertEqual(len(kept), 1, kept)
        self.assertTrue(kept[0].endswith(".png"), kept)
        with open(os.path.join(folder, "attachments", kept[0]), "rb") as f:
            self.assertEqual(f.read(), image)
        history = read_history(os.path.join(folder, "history.md"))
        self.assertIn(f"attachments/{kept[0]}", history[0].text)

    def test_a_pdf_is_read_as_text_and_remembered_for_later_questions(self):
        self.start_herald()
        document = pdf(["Quarterly report", "The figure of the quarter is 4711."])
        self.send_file(document, "report.pdf", "application/pdf")
        request = self.llm.requests()[-1]
        self.assertEqual(request["images"], [])
        self.assertEqual(request["model"], "fake", request)  # no picture: the default tier
        self.assertIn("The figure of the quarter is 4711.", request["last_user_text"])
        self.assertIn("not instructions", request["last_user_text"])
        folder = user_folder(self.agent.memory_dir, "alice@localhost")
        history = read_history(os.path.join(folder, "history.md"))
        self.assertIn("4711", history[0].text)
        # A later question: the document's text is in the history the model reads.
        self.assertIsNotNone(self.alice.ask(self.herald, "what was the figure?", timeout=ANSWER))
        later = self.llm.requests()[-1]
        self.assertEqual(later["last_user_text"], "what was the figure?")
        self.assertGreaterEqual(later["messages"], 3, later)
        # /forget removes the file with the session.
        self.assertIsNotNone(self.alice.ask(self.herald, "/forget", timeout=ANSWER))
        self.assertFalse(os.path.exists(os.path.join(folder, "attachments")))

    def test_a_link_to_another_loopback_address_is_refused_and_alice_is_told(self):
        self.start_herald()
        port = free_port()  # nothing listens; the guard refuses before connecting anyway
        url = f"http://127.0.0.1:{port}/secret.txt"
        self.alice.send_file(self.herald, url)
        replies = self.alice.replies_from(self.herald, within=ANSWER, count=2)
        self.assertTrue(any("couldn't download" in r and "loopback" in r for r in replies),
                        f"{replies}\n{self.diagnosis()}")

    def test_a_voice_note_is_transcribed_and_answered_as_what_alice_said(self):
        self.start_herald()
        with tempfile.TemporaryDirectory() as folder:
            wav = os.path.join(folder, "note.wav")
            ogg = os.path.join(folder, "note.ogg")
            subprocess.run(["espeak-ng", "-v", "en-us+f2", "-s", "140", "-w", wav,
                            "hello what is the weather today"],
                           check=True, capture_output=True, timeout=30)
            subprocess.run(["opusenc", "--quiet", wav, ogg], check=True, capture_output=True,
                           timeout=30)
            with open(ogg, "rb") as f:
                note = f.read()
        _, replies = self.send_file(note, "voice-message.ogg", "audio/ogg", replies=2)
        heard = [r for r in replies if r.startswith("I heard:")]
        self.assertEqual(len(heard), 1, f"{replies}\n{self.diagnosis()}")
        self.assertIn("weather", heard[0])
        request = self.llm.requests()[-1]
        self.assertIn("weather", request["last_user_text"])
        self.assertEqual(request["images"], [])

    def test_without_a_vision_model_alice_is_told_plainly(self):
        self.start_herald(vision=False)
        _, replies = self.send_file(png(), "photo.png", "image/png", replies=2)
        self.assertIn("I can't see pictures here: no vision model is configured.", replies)
        request = self.llm.requests()[-1]
        self.assertEqual(request["images"], [])
        self.assertIn("No vision model is configured", request["last_user_text"])


class ProsodyAttachmentsTest(AttachmentsTest, unittest.TestCase):
    server_class = Prosody


class EjabberdAttachmentsTest(AttachmentsTest, unittest.TestCase):
    server_class = Ejabberd


if __name__ == "__main__":
    unittest.main()
