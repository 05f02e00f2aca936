#!/usr/bin/python3
"""An echo component written with slixmpp, the Python peer of Herald's side-by-side benchmark.

    PEER_SECRET=s /usr/bin/python3 tools/bench/peers/slixmpp_echo.py 127.0.0.1 5347 echo.localhost

It connects to the server as an XEP-0114 component (Debian's python3-slixmpp, installed by
tools/setup) and answers every chat or normal message that has a body with a message carrying
the same body, back to its sender. Nothing else: no logging, no delays, so it runs as fast as
the library allows (the stock asyncio event loop, as slixmpp ships). Exits 1 when the
connection fails or closes. Used by tools/bench/side_by_side (docs/BENCHMARKS.md).
"""

import asyncio
import os
import sys

from slixmpp.componentxmpp import ComponentXMPP


class EchoComponent(ComponentXMPP):
    def __init__(self, domain, secret, host, port):
        super().__init__(domain, secret, host, port)
        self.add_event_handler("message", self.echo)
        self.add_event_handler("disconnected", self.lost)
        self.add_event_handler("connection_failed", self.lost)

    def echo(self, message):
        if message["type"] in ("chat", "normal") and message["body"]:
            message.reply(message["body"]).send()

    def lost(self, _event):
        os._exit(1)  # a benchmark peer that lost its server is done


def main():
    if len(sys.argv) != 4 or "PEER_SECRET" not in os.environ:
        sys.exit("usage: PEER_SECRET=secret slixmpp_echo.py HOST PORT DOMAIN")
    host, port, domain = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    echo = EchoComponent(domain, os.environ["PEER_SECRET"], host, port)
    echo.connect()
    asyncio.get_event_loop().run_forever()


if __name__ == "__main__":
    main()
