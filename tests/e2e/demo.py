#!/usr/bin/python3
"""The demo behind tools/demo: a private Prosody, Herald as its component, a real client.

    demo.py --agent bazel-bin/component/herald [--keep] [--extra-config FILE]

Starts Prosody on loopback (throwaway folder, users alice and bob, a MUC service),
starts Herald as its component, and has alice hold a short scripted conversation with it
over a real XMPP connection, printing the transcript. Exits non-zero when Herald does
not answer. With --keep everything stays up and the script prints how to connect.
"""

import argparse
import os
import sys
import tempfile
import time

from agent import Agent, component_config
from client import Client, ClientError
from servers import Prosody, ServerError, tail

# What alice says, and how long each answer may take (a real model can be slow).
SCRIPT = (
    ("/ping", 10.0),
    ("Hello Herald! Who are you?", 90.0),
    ("/help", 10.0),
)
FIRST_CONTACT = 30.0
# Written by --keep; `tools/demo --stop` (or the next demo) runs it.
STOP_SCRIPT = os.path.join(tempfile.gettempdir(), "herald-demo-stop.sh")


def say(text=""):
    print(text, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", required=True,
                        help="the herald binary, or `echo` for the slixmpp stand-in")
    parser.add_argument("--keep", action="store_true",
                        help="leave Prosody and Herald running and print how to connect")
    parser.add_argument("--extra-config", metavar="FILE",
                        help="TOML appended to Herald's generated config (e.g. [llm])")
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
    agent = Agent.start(component_config(server) + config_extra,
                        secret=server.component_secret, program=program)
    say(f"Starting Herald as component {herald} (log: {agent.log_file}) ...")
    ok = False
    try:
        ok = converse(server, agent, herald)
    except ClientError as e:
        say(f"The XMPP client failed: {e}")
    if not ok:
        say("\n--- Herald's log ---")
        say(agent.log().rstrip())
        say(f"--- tail of Prosody's log ---\n{tail(server.log_file, 20).rstrip()}")
    if args.keep and ok:
        keep_running(server, agent)
        return 0
    agent.stop()
    server.stop()
    say("\nStopped Prosody and Herald." if ok else "\nDemo FAILED: Herald did not answer.")
    return 0 if ok else 1


def converse(server, agent, herald):
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
        say(f"\nTranscript (alice is {alice.jid.bare}, a real XMPP client connection):\n")
        answered_all = True
        for line, timeout in SCRIPT:
            say(f"  alice → herald: {line}")
            reply = alice.ask(herald, line, timeout=timeout)
            if reply is None:
                say(f"  (no answer within {timeout:.0f}s)")
                answered_all = False
                continue
            first, *rest = reply.splitlines() or [""]
            say(f"  herald → alice: {first}")
            for more in rest:
                say(f"                  {more}")
            if line == "/ping" and not reply.startswith("pong"):
                say("  (expected an answer starting with pong)")
                answered_all = False
        return answered_all


def keep_running(server, agent):
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
  Herald     {server.component_domain}   (send it /ping)
  rooms      {server.muc_domain}
  Herald log {agent.log_file}
  Prosody    {server.config_file}, log {server.log_file}

To stop everything: tools/demo --stop   (or bash {STOP_SCRIPT})""")


if __name__ == "__main__":
    sys.exit(main())
