"""A real XMPP client (slixmpp) for tests and the demo, with every wait bounded.

    with Client(server, "alice") as alice:                 # STARTTLS verified with server.ca_file
        body = alice.ask("agent.localhost", "/ping", timeout=10)      # str, or None
        alice.send("agent.localhost", "/ping")
        alice.replies_from("agent.localhost", within=3)               # [] means silence

The client verifies the server's certificate against the throwaway CA the server made,
with hostname checking on: it costs nothing on loopback and proves the certificate Herald
is given in client mode is valid. Each Client owns its asyncio loop and drives it only
inside its calls, so tests stay plain synchronous unittest code and nothing runs between
calls (messages that arrive meanwhile are read from the socket on the next call).
"""

import asyncio

import slixmpp


class ClientError(RuntimeError):
    pass


class Client:
    def __init__(self, server, user, resource="e2e", connect_timeout=15.0):
        self.jid = slixmpp.JID(f"{server.jid(user)}/{resource}")
        self._server = server
        self._password = server.password(user)
        self._connect_timeout = connect_timeout
        self._loop = asyncio.new_event_loop()
        self._inbox = None
        self.xmpp = None

    def __enter__(self):
        self.connect()
        return self

    def __exit__(self, *exc):
        self.close()

    # Connection.
    def connect(self):
        self._run(self._connect(), self._connect_timeout, "connect and log in")

    async def _connect(self):
        asyncio.set_event_loop(self._loop)
        self._inbox = asyncio.Queue()
        xmpp = slixmpp.ClientXMPP(str(self.jid), self._password)
        xmpp.loop = self._loop
        xmpp.ca_certs = self._server.ca_file

        # slixmpp would resolve "localhost" itself (over DNS when aiodns is installed).
        async def records(domain, port=None):
            return [(domain, "127.0.0.1", self._server.c2s_port)]
        xmpp.get_dns_records = records

        ready = self._loop.create_future()

        def settle(result):
            if not ready.done():
                ready.set_result(result)

        async def on_start(_):
            xmpp.send_presence()
            await xmpp.get_roster(timeout=5)
            settle(None)

        xmpp.add_event_handler("session_start", on_start)
        xmpp.add_event_handler("failed_auth", lambda _: settle("authentication failed"))
        xmpp.add_event_handler("connection_failed",
                               lambda e: settle(f"connection failed: {e}"))
        xmpp.add_event_handler("disconnected", lambda e: settle(f"disconnected: {e}"))
        xmpp.add_event_handler("message", self._inbox.put_nowait)
        self.xmpp = xmpp
        xmpp.connect(address=("127.0.0.1", self._server.c2s_port), force_starttls=True)
        problem = await ready
        if problem:
            xmpp.cancel_connection_attempt()
            raise ClientError(f"{self.jid}: {problem}")

    def close(self):
        if self.xmpp is None:
            return
        xmpp, self.xmpp = self.xmpp, None
        try:
            xmpp.cancel_connection_attempt()
            self._loop.run_until_complete(
                asyncio.wait_for(xmpp.disconnect(wait=1.0), timeout=3))
        except (asyncio.TimeoutError, ConnectionError):
            pass
        finally:
            if xmpp.transport is not None:
                xmpp.transport.abort()
            self._drain_tasks()
            self._loop.close()

    def _drain_tasks(self):
        tasks = [t for t in asyncio.all_tasks(self._loop) if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            self._loop.run_until_complete(asyncio.wait(tasks, timeout=2))

    # Messages.
    def send(self, to, body):
        self.xmpp.send_message(mto=to, mbody=body, mtype="chat")
        self._run(asyncio.sleep(0), 1, "send")  # let the loop write it

    def replies_from(self, peer, within, count=None):
        """Bodies of chat messages from peer's bare JID arriving within `within` seconds.

        Stops early once `count` bodies arrived. Error and body-less messages are skipped.
        """
        return self._run(self._collect(peer, within, count), within + 5, "wait for replies")

    def ask(self, peer, body, timeout=10.0):
        """Sends body to peer and returns the first reply body, or None after timeout.

        Replies that were already waiting (late answers to earlier questions) are dropped
        first, so the answer is to this question.
        """
        self.discard_pending()
        self.send(peer, body)
        got = self.replies_from(peer, within=timeout, count=1)
        return got[0] if got else None

    def discard_pending(self):
        self._run(asyncio.sleep(0.05), 1, "read pending")
        while self._inbox is not None and not self._inbox.empty():
            self._inbox.get_nowait()

    async def _collect(self, peer, within, count):
        peer = slixmpp.JID(peer).bare
        found = []
        deadline = self._loop.time() + within
        while count is None or len(found) < count:
            left = deadline - self._loop.time()
            if left <= 0:
                break
            try:
                msg = await asyncio.wait_for(self._inbox.get(), timeout=left)
            except asyncio.TimeoutError:
                break
            if msg["from"].bare != peer or msg["type"] == "error" or not msg["body"]:
                continue
            found.append(msg["body"])
        return found

    def _run(self, coroutine, timeout, what):
        try:
            return self._loop.run_until_complete(asyncio.wait_for(coroutine, timeout))
        except asyncio.TimeoutError as e:
            raise ClientError(f"{self.jid}: could not {what} within {timeout:.0f}s") from e
