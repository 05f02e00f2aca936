"""A fake LLM API on 127.0.0.1 for the end-to-end tests: tests/fakes/fake_llm_main.

    with FakeLlm("anthropic") as llm:          # or "openai", "ollama"; api_key="k": 401
                                                # to requests without that key
        llm.base_url                            # what Herald's [llm.<provider>] points at
        llm.wait_for_requests(2, timeout=10)    # the requests it got, summarised (dicts)

Its answers are chosen by the message, so a test can predict them (see fake_llm_main.cc):
a tool result → "The time is <result>."; "time" with tools offered → a current_time call;
"slow" → "you said: <text>" after 5 s; anything else → "you said: <text>". Each request is
one JSON line of its log: path, model, stream, messages, last_user_text, system, tool_result,
tools, images. images lists every image the request's messages carried, in order, decoded:
{"media_type": "image/png", "size": <bytes>, "sha256": "<64 lower-case hex digits>"}, the
media type "" in the Ollama format (which does not carry one). A request with a malformed
image (bad base64, no media type) is refused with 400, as a real provider would, and is not
logged.

The binary is HERALD_E2E_FAKE_LLM, or tests/fakes/fake_llm_main beside the herald binary
in the same bazel-bin (tests/e2e/run sets it). It runs in its own process group, stopped by
stop() or when the Python process exits.
"""

import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

_LIVE = set()


@atexit.register
def _stop_all():
    for llm in list(_LIVE):
        with contextlib.suppress(Exception):
            llm.stop()


class FakeLlmError(RuntimeError):
    pass


def fake_llm_program():
    """The path of fake_llm_main, or raises FakeLlmError saying how to provide it."""
    path = os.environ.get("HERALD_E2E_FAKE_LLM", "")
    if not path:
        agent = os.environ.get("HERALD_E2E_AGENT", "")
        if agent and agent != "echo":
            # bazel-bin/component/herald → bazel-bin/tests/fakes/fake_llm_main
            bazel_bin = os.path.dirname(os.path.dirname(os.path.abspath(agent)))
            path = os.path.join(bazel_bin, "tests", "fakes", "fake_llm_main")
    if not path or not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise FakeLlmError(
            f"the fake LLM binary is missing ({path or 'HERALD_E2E_FAKE_LLM is not set'}): "
            "build //tests/fakes:fake_llm_main in the same output base as //component:herald, "
            "or set HERALD_E2E_FAKE_LLM to its path")
    return os.path.abspath(path)


class FakeLlm:
    def __init__(self, wire_format="anthropic", slow_seconds=5, api_key=None,
                 start_timeout=10.0, tls=False):
        """tls: serve TLS (HTTP/2 when the client offers it by ALPN) on a self-signed
        certificate, whose PEM is then at self.certificate (Herald's tls_ca_file)."""
        self.format = wire_format
        self.dir = tempfile.mkdtemp(prefix=f"herald-e2e-llm-{wire_format}-")
        self.port_file = os.path.join(self.dir, "port")
        self.request_log = os.path.join(self.dir, "requests.jsonl")
        self.embeddings_log = os.path.join(self.dir, "embeddings.jsonl")
        self.output = os.path.join(self.dir, "console")
        self.certificate = os.path.join(self.dir, "certificate.pem") if tls else None
        self.port = None
        self.proc = None
        program = fake_llm_program()
        with open(self.output, "ab") as out:
            self.proc = subprocess.Popen(
                [program, f"--format={wire_format}", f"--port_file={self.port_file}",
                 f"--request_log={self.request_log}", f"--embeddings_log={self.embeddings_log}",
                 f"--slow_seconds={slow_seconds}"]
                + ([f"--require_api_key={api_key}"] if api_key else [])
                + ([f"--tls_certificate_out={self.certificate}"] if tls else []),
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, cwd=self.dir)
        _LIVE.add(self)
        deadline = time.monotonic() + start_timeout
        while self.port is None:
            if self.proc.poll() is not None:
                self.stop()
                raise FakeLlmError(f"fake_llm_main exited with {self.proc.returncode}")
            if time.monotonic() > deadline:
                self.stop()
                raise FakeLlmError(f"fake_llm_main did not announce a port in {start_timeout}s")
            with contextlib.suppress(OSError, ValueError):
                with open(self.port_file) as f:
                    self.port = int(f.read().strip())
                break
            time.sleep(0.02)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    @property
    def base_url(self):
        """Anthropic's and Ollama's base URL, or OpenAI's (with /v1)."""
        url = f"{'https' if self.certificate else 'http'}://127.0.0.1:{self.port}"
        return url + "/v1" if self.format == "openai" else url

    def requests(self):
        """Every request answered so far, oldest first, as dicts."""
        try:
            with open(self.request_log, encoding="utf-8") as f:
                return [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def embedding_requests(self):
        """Every embeddings request answered so far, oldest first: {"texts": [...]}."""
        try:
            with open(self.embeddings_log, encoding="utf-8") as f:
                return [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def wait_for_requests(self, count, timeout):
        """The requests once there are at least count, or all there are after timeout."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.requests()
            if len(got) >= count or time.monotonic() >= deadline:
                return got
            time.sleep(0.05)

    def log(self):
        try:
            with open(self.output, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        _LIVE.discard(self)
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
