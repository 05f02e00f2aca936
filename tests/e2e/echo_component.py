#!/usr/bin/python3
"""A minimal stand-in for Herald written with slixmpp, run exactly like it.

    echo_component.py --config herald.toml

It reads the same TOML ([server], [agent], ${VAR} expansion), connects as an XEP-0114
component or as a client (STARTTLS, verified against tls_ca_file), answers `/ping` from an
allowed JID with `pong`, echoes other text, stays silent to anyone else, reconnects with
exponential backoff, and exits 1 with a clear line when the server refuses the component
secret. The e2e suite runs against it to check the harness itself (tests/e2e/run echo),
and the benchmarks use it as the slixmpp peer.
"""

import argparse
import asyncio
import logging
import os
import random
import re
import ssl
import sys
import tomllib

import slixmpp

log = logging.getLogger("echo")

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand(value, where):
    """Replaces ${VAR} in strings with the environment's value; a missing one is an error."""
    if isinstance(value, str):
        def one(m):
            if m.group(1) not in os.environ:
                raise SystemExit(f"config: {where}: environment variable {m.group(1)} is not set")
            return os.environ[m.group(1)]
        return _VAR.sub(one, value)
    if isinstance(value, list):
        return [expand(v, where) for v in value]
    if isinstance(value, dict):
        return {k: expand(v, f"{where}.{k}") for k, v in value.items()}
    return value


def load_config(path):
    with open(path, "rb") as f:
        raw = tomllib.load(f)
    return expand(raw, "config")


class Policy:
    """Who may talk to the agent: [agent] allowed_jids and allowed_domains."""

    def __init__(self, agent, default_domain):
        self.jids = {j.lower() for j in agent.get("allowed_jids", [])}
        self.domains = {d.lower() for d in agent.get("allowed_domains", [default_domain])}

    def allows(self, bare):
        bare = bare.lower()
        domain = bare.rsplit("@", 1)[-1]
        if "*" not in self.domains and domain not in self.domains:
            return False
        return "*" in self.jids or bare in self.jids


def _pin_address(xmpp, host, port):
    # slixmpp would resolve the XMPP domain (over DNS when aiodns is installed); the
    # config names the address, so no lookup leaves the machine.
    async def records(domain, port_=None):
        return [(domain, host, port)]
    xmpp.get_dns_records = records


class Agent:
    def __init__(self, config):
        server = config["server"]
        self.mode = server.get("mode", "component")
        self.host = server.get("host", "127.0.0.1")
        self.port = int(server.get("port", 5347 if self.mode == "component" else 5222))
        self.initial = server.get("reconnect_initial_ms", 1000) / 1000
        self.maximum = server.get("reconnect_max_ms", 60000) / 1000
        self.delay = self.initial
        self.exit_code = None
        self.done = asyncio.get_event_loop().create_future()
        if self.mode == "component":
            self.own = server["component_domain"]
            self.xmpp = slixmpp.ComponentXMPP(self.own, server["component_secret"],
                                              self.host, self.port)
            default_domain = self.own.split(".", 1)[-1]
        elif self.mode == "client":
            jid = slixmpp.JID(server["jid"])
            jid.resource = server.get("resource", "herald")
            self.own = jid.bare
            self.xmpp = slixmpp.ClientXMPP(str(jid), server["password"])
            if server.get("tls_verify", True):
                if "tls_ca_file" in server:
                    self.xmpp.ca_certs = server["tls_ca_file"]
            else:
                self.xmpp.ssl_context.check_hostname = False
                self.xmpp.ssl_context.verify_mode = ssl.CERT_NONE
            self.starttls_required = server.get("starttls", "required") == "required"
            default_domain = jid.domain
        else:
            raise SystemExit(f"config: server.mode: unknown mode {self.mode!r}")
        _pin_address(self.xmpp, self.host, self.port)
        self.policy = Policy(config.get("agent", {}), default_domain)
        self.xmpp.add_event_handler("session_start", self.on_session_start)
        self.xmpp.add_event_handler("message", self.on_message)
        self.xmpp.add_event_handler("stream_error", self.on_stream_error)
        self.xmpp.add_event_handler("failed_auth", self.on_failed_auth)
        self.xmpp.add_event_handler("disconnected", self.on_disconnected)
        self.xmpp.add_event_handler("connection_failed", self.on_connection_failed)

    def connect(self):
        log.info("connecting to %s:%d as %s (%s)", self.host, self.port, self.own, self.mode)
        if self.mode == "component":
            self.xmpp.connect()
        else:
            self.xmpp.connect(address=(self.host, self.port),
                              force_starttls=self.starttls_required)

    async def on_session_start(self, _):
        log.info("online as %s", self.own)
        self.delay = self.initial
        if self.mode == "client":
            self.xmpp.send_presence()
            await self.xmpp.get_roster()

    def on_message(self, msg):
        if msg["type"] not in ("chat", "normal") or not msg["body"]:
            return
        sender = msg["from"].bare
        if not self.policy.allows(sender):
            log.info("ignored a message from %s: not allowed", sender)
            return
        body = msg["body"].strip()
        reply = "pong" if body == "/ping" else f"echo: {body}"
        self.xmpp.send_message(mto=msg["from"], mfrom=msg["to"], mbody=reply, mtype="chat")

    def on_stream_error(self, error):
        condition = error["condition"]
        if condition == "not-authorized" and self.mode == "component":
            log.error("the server refused the component secret (not-authorized); "
                      "check [server] component_secret")
            self.exit_code = 1
        elif condition in ("not-authorized", "host-unknown", "conflict"):
            log.error("stream error %s: %s", condition, error["text"])
            self.exit_code = 1
        else:
            log.warning("stream error %s: %s", condition, error["text"])

    def on_failed_auth(self, _):
        log.error("the server refused the account's password (not-authorized)")
        self.exit_code = 1
        self.xmpp.disconnect(wait=0)

    def on_disconnected(self, reason):
        if self.exit_code is not None:
            if not self.done.done():
                self.done.set_result(self.exit_code)
            return
        self._retry(f"disconnected ({reason})")

    def on_connection_failed(self, reason):
        # slixmpp would retry on its own with a fixed backoff; ours follows the config.
        self.xmpp.cancel_connection_attempt()
        self._retry(f"connection failed ({reason})")

    def _retry(self, why):
        delay = self.delay * random.uniform(0.8, 1.2)
        self.delay = min(self.maximum, self.delay * 2)
        log.warning("%s; reconnecting in %.2fs", why, delay)
        asyncio.get_event_loop().call_later(delay, self.connect)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True)
    args = parser.parse_args()
    config = load_config(args.config)
    level = config.get("log", {}).get("level", "info").upper()
    logging.basicConfig(level=getattr(logging, level, logging.INFO), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # slixmpp's own loggers would print stanzas (and so handshakes) at debug level.
    logging.getLogger("slixmpp").setLevel(logging.WARNING)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    agent = Agent(config)
    agent.connect()
    try:
        code = loop.run_until_complete(agent.done)
    except KeyboardInterrupt:
        code = 0
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.wait(pending, timeout=2))
    sys.exit(code)


if __name__ == "__main__":
    main()
