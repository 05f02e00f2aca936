#!/usr/bin/python3
"""The demo behind tools/demo: a private Prosody, Herald as its component, a real client.

    demo.py --agent bazel-bin/component/herald [--keep] [--extra-config FILE]

Starts Prosody on loopback (throwaway folder, users alice and bob, a MUC service),
starts Herald as its component (skills current_time and memory_recall, the room
lobby@conference.localhost), and has alice hold a short scripted conversation with it over a
real XMPP connection — one that makes Herald call its tools — then say hello in the room,
printing the transcript with the tool calls Herald's memory recorded. Exits non-zero when
Herald does not answer. With --keep everything stays up and the script prints how to
connect: the XMPP account, and the operator's side — the HTTP listener's /console/, /metrics
and /api/ addresses on loopback, and a heraldctl command line whose control token (made for
this demo, only its SHA-256 in the config) is in a 0600 file in Herald's folder.

The model: with ANTHROPIC_API_KEY, OPENAI_API_KEY or OLLAMA_HOST set (checked in that
order) Herald uses that provider (model HERALD_DEMO_MODEL, or a default per provider;
ANTHROPIC_BASE_URL and OPENAI_BASE_URL are honoured); with none of them it runs on the
scripted provider's built-in demo rules. The API key reaches Herald through its
environment (`${...}` in the config), never through the config file.
"""

import argparse
import hashlib
import os
import secrets
import sys
import tempfile
import time

from agent import Agent, component_config, runtime_sections
from client import Client, ClientError
from memory_files import read_history, user_folder
from servers import Prosody, ServerError, free_port, tail

# What alice says, and how long each answer may take (a real model can be slow). The lines
# are ones the scripted provider's demo rules answer well (providers/scripted/demo_rules.toml):
# two of them make Herald call a tool.
SCRIPT = (
    ("/ping", 10.0),
    ("Hello Herald!", 90.0),
    ("What time is it?", 90.0),
    ("Remember that my favourite colour is green.", 90.0),
    ("/history 2", 10.0),
    ("What did I tell you about my favourite colour?", 90.0),
)
ROOM = "lobby"
ROOM_LINE = "herald: hello, everyone!"
FIRST_CONTACT = 30.0
# How Herald's reply starts when a turn failed (the model unreachable, a key refused...).
APOLOGY = "Sorry, I could not answer"
# How long the demo waits for Herald's memory to record an answer it already sent.
MEMORY_LAG = 3.0
SKILLS = ("current_time", "memory_recall")
# Default models when an API key (or an Ollama host) is set and HERALD_DEMO_MODEL is not.
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4o-mini",
                  "ollama": "llama3.1"}
# Written by --keep; `tools/demo --stop` (or the next demo) runs it.
STOP_SCRIPT = os.path.join(tempfile.gettempdir(), "herald-demo-stop.sh")


def say(text=""):
    print(text, flush=True)


def choose_llm(env):
    """([llm] keys for the provider the environment names, or None), and a description.

    None means no [llm] section: Herald then runs on scripted:demo (SPEC §4).
    """
    model = env.get("HERALD_DEMO_MODEL", "").strip()
    if env.get("ANTHROPIC_API_KEY"):
        section = {"api_key": "${ANTHROPIC_API_KEY}"}
        if env.get("ANTHROPIC_BASE_URL"):
            section["base_url"] = env["ANTHROPIC_BASE_URL"]
        provider, why = "anthropic", "ANTHROPIC_API_KEY is set"
    elif env.get("OPENAI_API_KEY"):
        section = {"api_key": "${OPENAI_API_KEY}"}
        if env.get("OPENAI_BASE_URL"):
            section["base_url"] = env["OPENAI_BASE_URL"]
        provider, why = "openai", "OPENAI_API_KEY is set"
    elif env.get("OLLAMA_HOST"):
        host = env["OLLAMA_HOST"].strip()
        if "://" not in host:  # the ollama CLI accepts "127.0.0.1:11434"; Herald wants a URL
            host = "http://" + host
        section = {"host": host}
        provider, why = "ollama", f"OLLAMA_HOST is {host}"
    else:
        return None, ("scripted:demo — the scripted provider's built-in rules, no model "
                      "(set ANTHROPIC_API_KEY, OPENAI_API_KEY or OLLAMA_HOST to use one)")
    reference = f"{provider}:{model or DEFAULT_MODELS[provider]}"
    return {"default": reference, provider: section}, f"{reference} ({why})"


def demo_config(server, extra_text="", env=None):
    """Herald's config for the demo, and a description of the model it uses."""
    env = os.environ if env is None else env
    llm, model = choose_llm(env)
    if any(line.strip().startswith("[llm") for line in extra_text.splitlines()):
        llm, model = None, "the [llm] section of --extra-config"
    config = (component_config(server, allowed_jids=("alice@localhost",))
              + runtime_sections(llm=llm, skills=SKILLS,
                                 rooms=[{"jid": f"{ROOM}@{server.muc_domain}",
                                         "nick": "herald", "activation": "mention"}])
              + extra_text)
    return config, model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", required=True,
                        help="the herald binary, or `echo` for the slixmpp stand-in")
    parser.add_argument("--keep", action="store_true",
                        help="leave Prosody and Herald running and print how to connect")
    parser.add_argument("--extra-config", metavar="FILE",
                        help="TOML appended to Herald's generated config (e.g. [llm])")
    parser.add_argument("--heraldctl", metavar="PATH",
                        help="the heraldctl binary, for the ready command line --keep prints")
    args = parser.parse_args()

    program = None
    if args.agent != "echo":
        program = [args.agent]
    else:
        from agent import ECHO
        program = [sys.executable, ECHO]
    config_extra = ""
    if args.extra_config:
        with open(args.extra_config) as f:
            config_extra = "\n" + f.read()

    say("Starting a private Prosody on 127.0.0.1 ...")
    server = Prosody()
    try:
        server.start()
    except ServerError as e:
        say(f"Prosody did not start: {e}")
        return 1
    say(f"  client port {server.c2s_port}, component port {server.component_port}, "
        f"folder {server.dir}")
    herald = server.component_domain
    operator = None
    if args.agent != "echo":
        # The operator's side: the HTTP listener (/metrics, the HTTP API under /api/) on a
        # loopback port picked now, and the control plane with a token made for this demo
        # alone (only its SHA-256 is in the config; the token itself goes to a 0600 file).
        operator = {"http_port": free_port(), "token": secrets.token_urlsafe(32)}
        config_extra += f"""
[http]
listen = "127.0.0.1:{operator['http_port']}"

[control]
listen = "unix:data/control.sock"

[[control.tokens]]
name = "demo"
token_sha256 = "{hashlib.sha256(operator['token'].encode()).hexdigest()}"
scopes = ["read", "operate", "execute", "admin"]
"""
    config, model = demo_config(server, config_extra)
    agent = Agent.start(config, secret=server.component_secret, program=program)
    if operator is not None:
        operator["token_file"] = write_token_file(agent.dir, operator.pop("token"))
    say(f"Starting Herald as component {herald} (log: {agent.log_file}) ...")
    say(f"  model: {model}")
    say(f"  skills: {', '.join(SKILLS)}; memory: {agent.memory_dir}")
    if operator is not None:
        say(f"  metrics: http://127.0.0.1:{operator['http_port']}/metrics")
    ok = False
    try:
        ok = converse(server, agent, herald, rooms=args.agent != "echo")
    except ClientError as e:
        say(f"The XMPP client failed: {e}")
    if not ok:
        say("\n--- Herald's log ---")
        say(agent.log().rstrip())
        say(f"--- tail of Prosody's log ---\n{tail(server.log_file, 20).rstrip()}")
    if args.keep and ok:
        keep_running(server, agent, operator, args.heraldctl)
        return 0
    agent.stop()
    server.stop()
    say("\nStopped Prosody and Herald." if ok
        else "\nDemo FAILED: Herald did not answer as it should (see above).")
    return 0 if ok else 1


def converse(server, agent, herald, rooms=True):
    with Client(server, "alice", resource="demo") as alice:
        # Herald may still be connecting: ask until the first pong (bounded), quietly.
        deadline = time.monotonic() + FIRST_CONTACT
        reply = None
        while reply is None and time.monotonic() < deadline:
            if agent.exit_code() is not None:
                say(f"Herald exited with status {agent.exit_code()}.")
                return False
            reply = alice.ask(herald, "/ping", timeout=1.0)
        if reply is None:
            say(f"Herald did not come online within {FIRST_CONTACT:.0f}s.")
            return False
        alice.discard_pending()
        say(f"\nTranscript (alice is {alice.jid.bare}, a real XMPP client connection; lines "
            "marked [tool]\nare the tool calls Herald made for the answer, as its memory "
            "recorded them):\n")
        history = os.path.join(user_folder(agent.memory_dir, alice.jid.bare), "history.md")
        answered_all = True
        for line, timeout in SCRIPT:
            say(f"  alice → herald: {line}")
            seen = len(read_history(history))
            reply = alice.ask(herald, line, timeout=timeout)
            if reply is None:
                say(f"  (no answer within {timeout:.0f}s)")
                answered_all = False
                continue
            # A failed turn records no answer: nothing to wait for.
            if not line.startswith("/") and not reply.startswith(APOLOGY):
                for call in tool_calls_since(history, seen):
                    show("  [tool]          ", call)
            show("  herald → alice: ", reply)
            if reply.startswith(APOLOGY):
                say("  (Herald could not get an answer from its model: its log below says why)")
                answered_all = False
            if line == "/ping" and not reply.startswith("pong"):
                say("  (expected an answer starting with pong)")
                answered_all = False
        if not rooms:
            say("\n(The echo stand-in does not join rooms: no room in this demo.)")
            return answered_all
        return in_the_room(server, alice) and answered_all


def show(prefix, text):
    first, *rest = text.splitlines() or [""]
    say(f"{prefix}{first}")
    for more in rest:
        say(" " * len(prefix) + more)


def tool_calls_since(history, seen):
    """The tool entries Herald recorded for the answer after the first `seen` entries.

    Herald writes the turn to memory right after sending the answer, so this waits (briefly)
    for the answer's own entry first.
    """
    deadline = time.monotonic() + MEMORY_LAG
    while True:
        entries = read_history(history)[seen:]
        if any(e.role == "assistant" for e in entries) or time.monotonic() > deadline:
            return [_first_line(f"{e.author} {e.text}") for e in entries if e.role == "tool"]
        time.sleep(0.05)


def _first_line(text):
    first, *rest = text.splitlines() or [""]
    return f"{first} (+{len(rest)} more lines)" if rest else first


def in_the_room(server, alice):
    """alice joins the room Herald created and mentions it; True when Herald answers there."""
    room = f"{ROOM}@{server.muc_domain}"
    say(f"\nIn the room {room} (Herald answers when its nick is mentioned):\n")
    deadline = time.monotonic() + FIRST_CONTACT
    while not alice.exists(room, timeout=2):
        if time.monotonic() > deadline:
            say(f"  (Herald did not create {room})")
            return False
        time.sleep(0.2)
    while True:
        try:
            alice.join_room(room, "alice")
            break
        except ClientError as e:
            if time.monotonic() > deadline:
                say(f"  (alice could not join: {e})")
                return False
            time.sleep(0.3)
    say(f"  alice: {ROOM_LINE}")
    alice.say_in_room(room, ROOM_LINE)
    said = alice.room_messages(room, within=90.0, count=1)
    if not said:
        say("  (no answer in the room within 90s)")
        return False
    nick, body = said[0]
    show(f"  {nick}: ", body)
    return not body.startswith(APOLOGY)


def write_token_file(folder, token):
    """Keeps the demo's control token in a file only its owner reads; returns the path.

    The summary names the file rather than the token: a terminal's scrollback and a shared
    screen should not carry a credential, even a throwaway one.
    """
    path = os.path.join(folder, "control.token")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return path


def operator_lines(agent, operator, heraldctl):
    """The web console's, /metrics' and the HTTP API's addresses and a ready heraldctl command,
    for --keep's summary."""
    if operator is None:
        return ""
    socket_path = os.path.join(agent.dir, "data", "control.sock")
    http = f"http://127.0.0.1:{operator['http_port']}"
    return (f"\n  console    {http}/console/   (sign in with the token in the file below)"
            f"\n  metrics    {http}/metrics   (from loopback no token is needed)"
            f"\n  HTTP API   {http}/api/   (Authorization: Bearer <the token in the file below>)"
            f"\n  heraldctl  {heraldctl or 'heraldctl'} --target unix:{socket_path} "
            f"--token-file {operator['token_file']} status"
            f"\n             (the token, made for this demo alone, is in that file (mode 0600);"
            f"\n             try `... sessions list`, `... metrics`, `... events`)")


def keep_running(server, agent, operator=None, heraldctl=None):
    with open(STOP_SCRIPT, "w") as f:
        f.write("#!/bin/bash\n# Stops the demo that tools/demo --keep left running.\n"
                f"{agent.detach()}\n{server.detach()}\nrm -f {STOP_SCRIPT}\n")
    say(f"""
Everything keeps running. Connect with any XMPP client (Gajim, Dino, Profanity...):
  server     127.0.0.1 port {server.c2s_port} (STARTTLS; the certificate is signed by a
             throwaway CA: {server.ca_file})
  account    {server.jid('alice')}   password {server.password('alice')}
  also       {server.jid('bob')}     password {server.password('bob')}
             (bob is not allowed: Herald stays silent to him)
  Herald     {server.component_domain}   (send it /help, then just talk)
  room       {ROOM}@{server.muc_domain}   (Herald is there; say "herald: hello")
  memory     {agent.memory_dir}   (plain markdown: users/, rooms/)
  Herald log {agent.log_file}
  Prosody    {server.config_file}, log {server.log_file}{operator_lines(agent, operator, heraldctl)}

To stop everything: tools/demo --stop   (or bash {STOP_SCRIPT})""")


if __name__ == "__main__":
    sys.exit(main())
