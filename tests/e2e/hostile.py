"""A hostile server, played by a second component on the test server (servers.HOSTILE_DOMAIN).

A component can send from any address of its domain, the way a federated server can from
any address of its own: so it can play a room on a foreign MUC service whose invitations
name whoever it likes as the inviter.

    with HostileServer(server) as evil:
        evil.send_raw("<message from='trap@muc.evil.example' to='agent.localhost'>...")
        evil.stanzas_to("trap@muc.evil.example", within=3)   # what reached its rooms

Like client.Client, it owns its asyncio loop and drives it only inside its calls.
"""

import asyncio

import slixmpp


class HostileServer:
    def __init__(self, server, connect_timeout=15.0):
        self._server = server
        self._timeout = connect_timeout
        self._loop = asyncio.new_event_loop()
        self._received = None
        self.xmpp = None
        self.domain = server.hostile_domain

    def __enter__(self):
        self.connect()
        return self

    def __exit__(self, *exc):
        self.close()

    def connect(self):
        self._loop.run_until_complete(asyncio.wait_for(self._connect(), self._timeout))

    async def _connect(self):
        asyncio.set_event_loop(self._loop)
        self._received = asyncio.Queue()
        xmpp = slixmpp.ComponentXMPP(self.domain, self._server.hostile_secret, "127.0.0.1",
                                     self._server.hostile_port)
        xmpp.loop = self._loop
        ready = self._loop.create_future()

        def settle(result):
            if not ready.done():
                ready.set_result(result)

        xmpp.add_event_handler("session_start", lambda _: settle(None))
        xmpp.add_event_handler("connection_failed", lambda e: settle(f"connection failed: {e}"))
        xmpp.add_event_handler("disconnected", lambda e: settle(f"disconnected: {e}"))
        # Everything addressed to the hostile domain: presence to its rooms, IQs, messages.
        for kind in ("message", "presence", "iq"):
            xmpp.register_handler(slixmpp.xmlstream.handler.Callback(
                f"hostile {kind}", slixmpp.xmlstream.matcher.MatchXPath(
                    f"{{{xmpp.default_ns}}}{kind}"), self._received.put_nowait))
        self.xmpp = xmpp
        xmpp.connect()
        problem = await ready
        if problem:
            raise RuntimeError(f"the hostile component could not connect: {problem}")

    def send_raw(self, xml):
        """Writes xml on the stream; returns once it has left for the server (the transport
        has handed it to the socket)."""
        self.xmpp.send_raw(xml)
        self._loop.run_until_complete(asyncio.wait_for(self._written(), 10))

    async def _written(self):
        while self.xmpp.transport is not None and self.xmpp.transport.get_write_buffer_size():
            await asyncio.sleep(0.005)

    def stanzas_to(self, jid, within):
        """The stanzas addressed to jid's bare address that arrive within `within` seconds."""
        return self._loop.run_until_complete(self._collect(slixmpp.JID(jid).bare, within))

    async def _collect(self, bare, within):
        found = []
        deadline = self._loop.time() + within
        while True:
            left = deadline - self._loop.time()
            if left <= 0:
                return found
            try:
                stanza = await asyncio.wait_for(self._received.get(), timeout=left)
            except asyncio.TimeoutError:
                return found
            if stanza["to"].bare == bare:
                found.append(stanza)

    def close(self):
        if self.xmpp is None:
            return
        xmpp, self.xmpp = self.xmpp, None
        try:
            self._loop.run_until_complete(asyncio.wait_for(xmpp.disconnect(wait=1.0), timeout=3))
        except (asyncio.TimeoutError, ConnectionError):
            pass
        finally:
            if xmpp.transport is not None:
                xmpp.transport.abort()
            tasks = [t for t in asyncio.all_tasks(self._loop) if not t.done()]
            for t in tasks:
                t.cancel()
            if tasks:
                self._loop.run_until_complete(asyncio.wait(tasks, timeout=2))
            self._loop.close()
