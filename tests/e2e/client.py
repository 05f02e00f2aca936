"""A real XMPP client (slixmpp) for tests and the demo, with every wait bounded.

    with Client(server, "alice") as alice:                 # STARTTLS verified with server.ca_file
        body = alice.ask("agent.localhost", "/ping", timeout=10)      # str, or None
        alice.send("agent.localhost", "/ping")
        alice.replies_from("agent.localhost", within=3)               # [] means silence
        alice.join_room("lobby@conference.localhost", "alice")        # occupants, created
        alice.say_in_room("lobby@conference.localhost", "herald: hi")
        alice.room_messages("lobby@conference.localhost", within=10, count=1)  # [(nick, body)]
        alice.invite("lobby@conference.localhost", "agent.localhost")  # through the room
        alice.occupant_arrives("lobby@conference.localhost", "herald", within=10)  # bool
        alice.send_marked("agent.localhost", "hi", "id-1")      # asks for a receipt and marker
        alice.exchange_from("agent.localhost", within=10)       # [("received", "id-1"), ...]
        alice.features_of("agent.localhost")                    # disco#info features
        alice.disco_info("agent.localhost", node)               # (identities, features)
        alice.caps_of("lobby@conference.localhost/herald")      # caps seen on joining
        alice.commands_of("agent.localhost")                    # [(node, name)] (XEP-0050)
        alice.run_command("agent.localhost", "ping")            # {"status": ..., "note": ...}

The client verifies the server's certificate against the throwaway CA the server made,
with hostname checking on: it costs nothing on loopback and proves the certificate Herald
is given in client mode is valid. Each Client owns its asyncio loop and drives it only
inside its calls, so tests stay plain synchronous unittest code and nothing runs between
calls (messages that arrive meanwhile are read from the socket on the next call).
"""

import asyncio
import urllib.request
import xml.etree.ElementTree as ET

import slixmpp
from slixmpp.exceptions import IqError, IqTimeout
from slixmpp.xmlstream.handler import Callback
from slixmpp.xmlstream.matcher import MatchXPath

MUC = "http://jabber.org/protocol/muc"
MUC_USER = MUC + "#user"
MUC_OWNER = MUC + "#owner"
DISCO_INFO = "http://jabber.org/protocol/disco#info"
DELAY = "urn:xmpp:delay"
PING = "urn:xmpp:ping"
RECEIPTS = "urn:xmpp:receipts"          # XEP-0184
MARKERS = "urn:xmpp:chat-markers:0"     # XEP-0333
CAPS = "http://jabber.org/protocol/caps"  # XEP-0115
COMMANDS = "http://jabber.org/protocol/commands"  # XEP-0050
DISCO_ITEMS = "http://jabber.org/protocol/disco#items"
DATA_FORMS = "jabber:x:data"
REPLY = "urn:xmpp:reply:0"             # XEP-0461
FALLBACK = "urn:xmpp:fallback:0"       # XEP-0428
STANZA_ID = "urn:xmpp:sid:0"           # XEP-0359
CORRECTION = "urn:xmpp:message-correct:0"  # XEP-0308
MAM = "urn:xmpp:mam:2"                 # XEP-0313
HINTS = "urn:xmpp:hints"               # XEP-0334
REACTIONS = "urn:xmpp:reactions:0"     # XEP-0444
FORWARD = "urn:xmpp:forward:0"         # XEP-0297
UPLOAD = "urn:xmpp:http:upload:0"      # XEP-0363
OOB = "jabber:x:oob"                   # XEP-0066


class ClientError(RuntimeError):
    pass


class Client:
    def __init__(self, server, user, resource="e2e", connect_timeout=15.0, plugins=()):
        """plugins: slixmpp plugins to load before logging in, whose features the client then
        announces in disco#info ("xep_0308": it shows corrections)."""
        self.jid = slixmpp.JID(f"{server.jid(user)}/{resource}")
        self._plugins = tuple(plugins)
        self._server = server
        self._password = server.password(user)
        self._connect_timeout = connect_timeout
        self._loop = asyncio.new_event_loop()
        self._inbox = None
        self._presences = None
        self.xmpp = None
        self._rooms = {}  # room bare JID -> our nick
        self._caps = {}   # occupant JID -> the attributes of the caps its presence carried

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
        self._presences = asyncio.Queue()
        xmpp = slixmpp.ClientXMPP(str(self.jid), self._password)
        xmpp.loop = self._loop
        for plugin in self._plugins:
            xmpp.register_plugin(plugin)
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
        # slixmpp's "message" event is only for messages with a body; receipts and markers
        # have none, so they are matched on their own, into the same queue, in stream order.
        for name, path in (("receipt", f"{{{RECEIPTS}}}received"),
                           ("marker", f"{{{MARKERS}}}displayed"),
                           ("reactions", f"{{{REACTIONS}}}reactions")):
            xmpp.register_handler(Callback(name, MatchXPath(f"{{jabber:client}}message/{path}"),
                                           self._inbox.put_nowait))
        xmpp.add_event_handler("presence", self._presences.put_nowait)
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
        self._run(self._written(), 10, "send")

    async def _written(self):
        """Returns once every stanza sent so far has left for the server: slixmpp's send
        queue has handed it to the transport, and the transport has handed it to the socket."""
        await self.xmpp.waiting_queue.join()
        while self.xmpp.transport is not None and self.xmpp.transport.get_write_buffer_size():
            await asyncio.sleep(0.005)

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
        """Drops the messages that reached us before now.

        "Before now" is one ping round trip to our own server (XEP-0199): the server answers
        after what it already had for us, and the stream is read in order, so by the answer
        every such message is in the inbox.
        """
        self._run(self._server_round_trip(), 10, "read pending")
        while self._inbox is not None and not self._inbox.empty():
            self._inbox.get_nowait()

    async def _server_round_trip(self):
        iq = self.xmpp.make_iq_get(ito=self.jid.domain)
        ET.SubElement(iq.xml, f"{{{PING}}}ping")
        try:
            await iq.send()
        except IqError:
            pass  # an error is an answer too, and comes in the same order

    async def _collect(self, peer, within, count):
        peer = slixmpp.JID(peer).bare
        found = []
        deadline = self._loop.time() + within
        while count is None or len(found) < count:
            msg = await self._next(self._inbox, deadline)
            if msg is None:
                break
            if (msg["from"].bare != peer or msg["type"] in ("error", "groupchat")
                    or not msg["body"]):
                continue
            found.append(msg["body"])
        return found

    def chats_with_delay(self, peer, within, count):
        """(body, delayed) of the next `count` chat messages with a body from peer's bare
        JID within `within` seconds; delayed: the message carries XEP-0203 <delay/> (the
        server kept it while we were offline)."""
        return self._run(self._chats_with_delay(peer, within, count), within + 5,
                         "wait for chat messages")

    async def _chats_with_delay(self, peer, within, count):
        found = []
        async for msg in self._chats_from(peer, within):
            if msg["body"]:
                found.append((msg["body"], msg.xml.find(f"{{{DELAY}}}delay") is not None))
                if len(found) >= count:
                    break
        return found

    def share_presence_with(self, peer, timeout=10.0):
        """Asks to see peer's presence (<presence type='subscribe'/>) and waits until peer
        approved it; peer asking back is approved by slixmpp itself (auto_authorize), after
        which the server sends peer our presence as it changes. Whether peer approved."""
        return self._run(self._share_presence(peer, timeout), timeout + 5, "share presence")

    async def _share_presence(self, peer, timeout):
        peer = slixmpp.JID(peer).bare
        self.xmpp.send_presence(pto=peer, ptype="subscribe")
        deadline = self._loop.time() + timeout
        while (pres := await self._next(self._presences, deadline)) is not None:
            if pres["from"].bare == peer and pres["type"] == "subscribed":
                # Our approval of peer's own request goes out as slixmpp handles it; one
                # round trip to the server puts it ahead of whatever we send next.
                await self._server_round_trip()
                return True
        return False

    def publish(self, service, node, item_id, title, summary, timeout=10.0):
        """Publishes an Atom entry (title, summary) as item `item_id` of `node` at `service`
        (XEP-0060 §7.1; the node is created by the service when it is new)."""
        return self._run(self._publish(service, node, item_id, title, summary), timeout + 5,
                         "publish")

    async def _publish(self, service, node, item_id, title, summary):
        iq = self.xmpp.make_iq_set(ito=service)
        pubsub = ET.SubElement(iq.xml, "{http://jabber.org/protocol/pubsub}pubsub")
        publish = ET.SubElement(pubsub, "{http://jabber.org/protocol/pubsub}publish", node=node)
        item = ET.SubElement(publish, "{http://jabber.org/protocol/pubsub}item", id=item_id)
        entry = ET.SubElement(item, "{http://www.w3.org/2005/Atom}entry")
        ET.SubElement(entry, "{http://www.w3.org/2005/Atom}title").text = title
        ET.SubElement(entry, "{http://www.w3.org/2005/Atom}summary").text = summary
        await iq.send(timeout=10)

    def upload(self, service, data, filename, content_type, timeout=15.0):
        """XEP-0363, as Conversations uploads a file: asks `service` for a slot, PUTs `data`
        with the headers the slot names, and returns the URL to download it from."""
        put_url, headers, get_url = self._run(
            self._request_slot(service, filename, len(data), content_type), timeout + 5,
            "upload slot")
        request = urllib.request.Request(put_url, data=data, method="PUT",
                                         headers={"Content-Type": content_type, **headers})
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            if answer.status not in (200, 201):
                raise ClientError(f"upload to {put_url}: HTTP {answer.status}")
        return get_url

    async def _request_slot(self, service, filename, size, content_type):
        iq = self.xmpp.make_iq_get(ito=service)
        ET.SubElement(iq.xml, f"{{{UPLOAD}}}request",
                      {"filename": filename, "size": str(size), "content-type": content_type})
        result = await iq.send(timeout=10)
        slot = result.xml.find(f"{{{UPLOAD}}}slot")
        put = slot.find(f"{{{UPLOAD}}}put")
        headers = {h.get("name"): h.text or "" for h in put.findall(f"{{{UPLOAD}}}header")
                   if h.get("name") in ("Authorization", "Cookie", "Expires")}
        return put.get("url"), headers, slot.find(f"{{{UPLOAD}}}get").get("url")

    def send_file(self, to, url, body=None, mtype="chat"):
        """Sends `url` as XEP-0066 out-of-band data with the URL as the body too (unless
        `body` is given), as Conversations, Dino and Monal send a file they uploaded."""
        msg = self.xmpp.make_message(mto=to, mbody=url if body is None else body, mtype=mtype)
        oob = ET.SubElement(msg.xml, f"{{{OOB}}}x")
        ET.SubElement(oob, f"{{{OOB}}}url").text = url
        msg.send()
        self._run(self._written(), 10, "send")

    def chats_with_links(self, peer, within, until_link=True):
        """(body, oob_url, oob_desc) of chat messages with a body from peer's bare JID within
        `within` seconds; oob_url is the XEP-0066 link the message carries, or None. Stops after
        the first message with a link when `until_link`."""
        return self._run(self._chats_with_links(peer, within, until_link), within + 5,
                         "wait for a file")

    async def _chats_with_links(self, peer, within, until_link):
        found = []
        async for msg in self._chats_from(peer, within):
            if not msg["body"]:
                continue
            oob = msg.xml.find(f"{{{OOB}}}x")
            url = oob.findtext(f"{{{OOB}}}url") if oob is not None else None
            desc = oob.findtext(f"{{{OOB}}}desc") if oob is not None else None
            found.append((msg["body"], url, desc))
            if url is not None and until_link:
                break
        return found

    def download(self, url, timeout=15.0):
        """The bytes at `url` (a file someone sent as a link), by a plain HTTP GET."""
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return answer.read()

    def send_marked(self, to, body, msg_id, receipt=True, markable=True):
        """Sends a chat message with the id `msg_id` that asks for a delivery receipt
        (XEP-0184 <request/>) and is markable (XEP-0333), as Conversations sends them."""
        msg = self.xmpp.make_message(mto=to, mbody=body, mtype="chat")
        msg["id"] = msg_id
        if receipt:
            ET.SubElement(msg.xml, f"{{{RECEIPTS}}}request")
        if markable:
            ET.SubElement(msg.xml, f"{{{MARKERS}}}markable")
        msg.send()
        self._run(self._written(), 10, "send")

    def exchange_from(self, peer, within):
        """What peer's bare JID sent within `within` seconds, in order, up to and including
        the first message with a body: ("received", id) for a delivery receipt, ("displayed",
        id) for a displayed marker, ("body", text) for the answer."""
        return self._run(self._exchange(peer, within), within + 5, "wait for an answer")

    async def _chats_from(self, peer, within):
        """The 1:1 messages (not errors, not groupchat) from peer's bare JID, as they come,
        until `within` seconds have passed."""
        peer = slixmpp.JID(peer).bare
        deadline = self._loop.time() + within
        while (msg := await self._next(self._inbox, deadline)) is not None:
            if msg["from"].bare == peer and msg["type"] not in ("error", "groupchat"):
                yield msg

    async def _exchange(self, peer, within):
        found = []
        async for msg in self._chats_from(peer, within):
            received = msg.xml.find(f"{{{RECEIPTS}}}received")
            displayed = msg.xml.find(f"{{{MARKERS}}}displayed")
            if received is not None:
                found.append(("received", received.get("id")))
            if displayed is not None:
                found.append(("displayed", displayed.get("id")))
            if msg["body"]:
                found.append(("body", msg["body"]))
                break
        return found

    def corrections_from(self, peer, within, until, prefix=False):
        """The chat messages peer's bare JID sent within `within` seconds, up to and including
        the first whose body is `until` (with `prefix`: starts with it) and that archives may
        keep (no XEP-0334 <no-store/>): [(id, body, the id it corrects (XEP-0308) or None,
        whether it says no-store)]."""
        return self._run(self._corrections(peer, within, until, prefix), within + 5,
                         "wait for an answer")

    async def _corrections(self, peer, within, until, prefix):
        found = []
        async for msg in self._chats_from(peer, within):
            if not msg["body"]:
                continue
            replace = msg.xml.find(f"{{{CORRECTION}}}replace")
            no_store = msg.xml.find(f"{{{HINTS}}}no-store") is not None
            found.append((msg["id"], msg["body"], None if replace is None else replace.get("id"),
                          no_store))
            done = msg["body"].startswith(until) if prefix else msg["body"] == until
            if done and not no_store:
                break
        return found

    def reply(self, to, body, message_id, author, quoted, mtype="chat"):
        """Replies (XEP-0461) with body to the message `message_id` written by `author`, as
        Conversations and Gajim do: the body starts with `quoted` as a "> " quote, and a
        XEP-0428 fallback says which characters (code points, XEP-0426) that quote spans."""
        quote = "".join(f"> {line}\n" for line in quoted.split("\n"))
        msg = self.xmpp.make_message(mto=slixmpp.JID(to).bare if mtype == "groupchat" else to,
                                     mbody=quote + body, mtype=mtype)
        ET.SubElement(msg.xml, f"{{{REPLY}}}reply", {"to": author, "id": message_id})
        fallback = ET.SubElement(msg.xml, f"{{{FALLBACK}}}fallback", {"for": REPLY})
        ET.SubElement(fallback, f"{{{FALLBACK}}}body", {"start": "0", "end": str(len(quote))})
        msg.send()
        self._run(self._written(), 10, "send")

    def react(self, to, message_id, emoji):
        """Reacts (XEP-0444) with the list `emoji` to the chat message `message_id` of `to`."""
        msg = self.xmpp.make_message(mto=to, mtype="chat")
        reactions = ET.SubElement(msg.xml, f"{{{REACTIONS}}}reactions", id=message_id)
        for one in emoji:
            ET.SubElement(reactions, f"{{{REACTIONS}}}reaction").text = one
        ET.SubElement(msg.xml, f"{{{HINTS}}}store")
        msg.send()
        self._run(self._written(), 10, "send")

    def archive_from(self, peer, timeout=10.0):
        """What our own archive (XEP-0313) holds of the messages peer's bare JID sent us,
        oldest first: [(id, body, the id it corrects or None)], bodyless ones left out."""
        return self._run(self._archive_from(peer, timeout), timeout + 2, "query the archive")

    async def _archive_from(self, peer, timeout):
        peer = slixmpp.JID(peer).bare
        query_id = f"e2e-mam-{id(self)}-{self._loop.time()}"
        found = []

        def collect(msg):
            result = msg.xml.find(f"{{{MAM}}}result")
            if result is None or result.get("queryid") != query_id:
                return
            inner = result.find(f"{{{FORWARD}}}forwarded/{{jabber:client}}message")
            if inner is None or slixmpp.JID(inner.get("from", "")).bare != peer:
                return
            body = inner.findtext("{jabber:client}body")
            if body is None:
                return
            replace = inner.find(f"{{{CORRECTION}}}replace")
            found.append((inner.get("id"), body, None if replace is None else replace.get("id")))

        name = f"archive {query_id}"
        self.xmpp.register_handler(
            Callback(name, MatchXPath(f"{{jabber:client}}message/{{{MAM}}}result"), collect))
        try:
            iq = self.xmpp.make_iq_set()
            query = ET.SubElement(iq.xml, f"{{{MAM}}}query", queryid=query_id)
            form = ET.SubElement(query, f"{{{DATA_FORMS}}}x", type="submit")
            for var, value in (("FORM_TYPE", MAM), ("with", peer)):
                field = ET.SubElement(form, f"{{{DATA_FORMS}}}field", var=var)
                if var == "FORM_TYPE":
                    field.set("type", "hidden")
                ET.SubElement(field, f"{{{DATA_FORMS}}}value").text = value
            await iq.send(timeout=timeout)  # the results come before the answer that ends them
        finally:
            self.xmpp.remove_handler(name)
        return found

    # Service discovery.
    def features_of(self, jid, timeout=5.0):
        """The features jid announces in disco#info."""
        return self._run(self._features(jid, timeout), timeout + 2, "query disco#info")

    def caps_of(self, occupant):
        """The attributes (hash, node, ver) of the XEP-0115 caps in the presence `occupant`
        (room/nick) had when we joined its room, or None."""
        return self._caps.get(occupant)

    def disco_info(self, jid, node=None, timeout=5.0):
        """disco#info of jid (at `node`): ([(category, type, lang, name)], [feature])."""
        return self._run(self._disco_info_of(jid, node, timeout), timeout + 2, "query disco#info")

    async def _disco_info_of(self, jid, node, timeout):
        iq = self.xmpp.make_iq_get(queryxmlns=DISCO_INFO, ito=jid)
        if node is not None:
            iq.xml.find(f"{{{DISCO_INFO}}}query").set("node", node)
        result = await iq.send(timeout=timeout)
        query = result.xml.find(f"{{{DISCO_INFO}}}query")
        lang = "{http://www.w3.org/XML/1998/namespace}lang"
        identities = [(i.get("category"), i.get("type"), i.get(lang, ""), i.get("name", ""))
                      for i in query.findall(f"{{{DISCO_INFO}}}identity")]
        features = [f.get("var") for f in query.findall(f"{{{DISCO_INFO}}}feature")]
        return identities, features

    def commands_of(self, jid, timeout=5.0):
        """The ad-hoc commands jid offers us, [(node, name)]; raises ClientError with the
        error condition when it refuses."""
        return self._run(self._commands_of(jid, timeout), timeout + 2, "list commands")

    async def _commands_of(self, jid, timeout):
        iq = self.xmpp.make_iq_get(queryxmlns=DISCO_ITEMS, ito=jid)
        iq.xml.find(f"{{{DISCO_ITEMS}}}query").set("node", COMMANDS)
        try:
            result = await iq.send(timeout=timeout)
        except IqError as e:
            raise ClientError(e.iq["error"]["condition"]) from e
        query = result.xml.find(f"{{{DISCO_ITEMS}}}query")
        return [(i.get("node"), i.get("name")) for i in query.findall(f"{{{DISCO_ITEMS}}}item")]

    def run_command(self, jid, node, session=None, fields=None, action=None, timeout=10.0):
        """Runs (or with action="cancel" cancels) an ad-hoc command; `fields` submits a form
        in `session`. A dict: status, sessionid, note, fields (the vars of a form to fill
        in), form (each of those fields as a dict: var, type, value, options (the values
        offered)), or error (the condition of a refusal)."""
        return self._run(self._run_command(jid, node, session, fields, action, timeout),
                         timeout + 2, f"run command {node}")

    async def _run_command(self, jid, node, session, fields, action, timeout):
        iq = self.xmpp.make_iq_set(ito=jid)
        command = ET.SubElement(iq.xml, f"{{{COMMANDS}}}command", {"node": node})
        if session:
            command.set("sessionid", session)
        if action:
            command.set("action", action)
        if fields:
            form = ET.SubElement(command, f"{{{DATA_FORMS}}}x", {"type": "submit"})
            for var, value in fields.items():
                field = ET.SubElement(form, f"{{{DATA_FORMS}}}field", {"var": var})
                ET.SubElement(field, f"{{{DATA_FORMS}}}value").text = value
        try:
            result = await iq.send(timeout=timeout)
        except IqError as e:
            return {"error": e.iq["error"]["condition"]}
        command = result.xml.find(f"{{{COMMANDS}}}command")
        note = command.find(f"{{{COMMANDS}}}note")
        form = command.find(f"{{{DATA_FORMS}}}x")
        fields = [] if form is None else form.findall(f"{{{DATA_FORMS}}}field")
        return {"status": command.get("status"), "sessionid": command.get("sessionid"),
                "note": None if note is None else note.text,
                "fields": [f.get("var") for f in fields],
                "form": [{"var": f.get("var"), "type": f.get("type"),
                          "value": f.findtext(f"{{{DATA_FORMS}}}value"),
                          "options": [o.findtext(f"{{{DATA_FORMS}}}value")
                                      for o in f.findall(f"{{{DATA_FORMS}}}option")]}
                         for f in fields]}

    async def _features(self, jid, timeout):
        iq = self.xmpp.make_iq_get(queryxmlns=DISCO_INFO, ito=jid)
        result = await iq.send(timeout=timeout)
        query = result.xml.find(f"{{{DISCO_INFO}}}query")
        return [f.get("var") for f in query.findall(f"{{{DISCO_INFO}}}feature")]

    def exists(self, jid, timeout=5.0):
        """Whether jid answers disco#info with a result (a room that exists and is open)."""
        return self._run(self._disco_info(jid, timeout), timeout + 2, "query disco#info")

    async def _disco_info(self, jid, timeout):
        iq = self.xmpp.make_iq_get(queryxmlns=DISCO_INFO, ito=jid)
        try:
            await iq.send(timeout=timeout)
            return True
        except (IqError, IqTimeout):
            return False

    # Rooms (XEP-0045), with plain stanzas so every step is visible here.
    def join_room(self, room, nick, timeout=10.0):
        """Enters room as nick without history; returns (occupant nicks, created).

        created: the room did not exist and this join made it (status 201); it is then
        configured as an instant room at once, so others can enter. Raises ClientError when
        the room refuses the join.
        """
        return self._run(self._join_room(slixmpp.JID(room).bare, nick), timeout, "join " + room)

    async def _join_room(self, room, nick):
        presence = self.xmpp.make_presence(pto=f"{room}/{nick}")
        x = ET.SubElement(presence.xml, f"{{{MUC}}}x")
        ET.SubElement(x, f"{{{MUC}}}history", {"maxstanzas": "0"})
        presence.send()
        occupants = set()
        while True:
            pres = await self._presences.get()
            if pres["from"].bare != room:
                continue
            if pres["type"] == "error":
                raise ClientError(f"{self.jid}: {room} refused the join: "
                                  f"{pres['error']['condition']}")
            user = pres.xml.find(f"{{{MUC_USER}}}x")
            codes = set() if user is None else {
                s.get("code") for s in user.findall(f"{{{MUC_USER}}}status")}
            if "110" in codes or pres["from"].resource == nick:
                created = "201" in codes
                if created:
                    await self._accept_default_config(room)
                self._rooms[room] = nick
                return occupants, created
            if pres["type"] != "unavailable":
                occupants.add(pres["from"].resource)
                caps = pres.xml.find(f"{{{CAPS}}}c")
                if caps is not None:
                    self._caps[str(pres["from"])] = dict(caps.attrib)

    async def _accept_default_config(self, room):
        iq = self.xmpp.make_iq_set(ito=room)
        query = ET.SubElement(iq.xml, f"{{{MUC_OWNER}}}query")
        ET.SubElement(query, "{jabber:x:data}x", {"type": "submit"})
        await iq.send(timeout=5)

    def show_real_jids(self, room, timeout=5.0):
        """As the room's owner: occupants' real JIDs visible to all (muc#roomconfig_whois).

        A semi-anonymous room relays invitations in the inviter's occupant name, which says
        nothing about who they are; a non-anonymous one names their real JID.
        """
        self._run(self._show_real_jids(slixmpp.JID(room).bare, timeout), timeout + 2,
                  "configure " + room)

    async def _show_real_jids(self, room, timeout):
        iq = self.xmpp.make_iq_set(ito=room)
        query = ET.SubElement(iq.xml, f"{{{MUC_OWNER}}}query")
        form = ET.SubElement(query, "{jabber:x:data}x", {"type": "submit"})
        for var, value in (("FORM_TYPE", "http://jabber.org/protocol/muc#roomconfig"),
                           ("muc#roomconfig_whois", "anyone")):
            field = ET.SubElement(form, "{jabber:x:data}field", {"var": var})
            ET.SubElement(field, "{jabber:x:data}value").text = value
        await iq.send(timeout=timeout)

    def destroy_room(self, room, reason="", alternate="", timeout=5.0):
        """As the room's owner: destroys it (XEP-0045 §10.9); occupants are told."""
        self._run(self._destroy_room(slixmpp.JID(room).bare, reason, alternate, timeout),
                  timeout + 2, "destroy " + room)

    async def _destroy_room(self, room, reason, alternate, timeout):
        iq = self.xmpp.make_iq_set(ito=room)
        query = ET.SubElement(iq.xml, f"{{{MUC_OWNER}}}query")
        destroy = ET.SubElement(query, f"{{{MUC_OWNER}}}destroy",
                                {"jid": alternate} if alternate else {})
        if reason:
            ET.SubElement(destroy, f"{{{MUC_OWNER}}}reason").text = reason
        await iq.send(timeout=timeout)
        self._rooms.pop(room, None)

    def invite(self, room, jid, reason=""):
        """Invites jid to room through the room (XEP-0045 mediated invitation)."""
        msg = self.xmpp.make_message(mto=slixmpp.JID(room).bare)
        x = ET.SubElement(msg.xml, f"{{{MUC_USER}}}x")
        invite = ET.SubElement(x, f"{{{MUC_USER}}}invite", {"to": jid})
        if reason:
            ET.SubElement(invite, f"{{{MUC_USER}}}reason").text = reason
        msg.send()
        self._run(self._written(), 10, "send")

    def occupant_arrives(self, room, nick, within):
        """Whether nick enters room (an available presence) within `within` seconds."""
        return self._run(self._occupant_arrives(slixmpp.JID(room).bare, nick, within),
                         within + 5, "watch the room's presence")

    async def _occupant_arrives(self, room, nick, within):
        deadline = self._loop.time() + within
        while True:
            pres = await self._next(self._presences, deadline)
            if pres is None:
                return False
            if (pres["from"].bare == room and pres["from"].resource == nick
                    and pres["type"] not in ("unavailable", "error")):
                return True

    def say_in_room_with_id(self, room, body, msg_id):
        """Says body in room as a message with the id `msg_id`."""
        msg = self.xmpp.make_message(mto=slixmpp.JID(room).bare, mbody=body, mtype="groupchat")
        msg["id"] = msg_id
        msg.send()
        self._run(self._written(), 10, "send")

    def room_traffic(self, room, within, until_nick, until_body=None, reactions=False):
        """The room's live messages (ours included) within `within` seconds, up to and
        including the first from `until_nick` (whose body is `until_body`, if given, and that
        says no no-store), each a dict: nick, body, id, stanza_id (the room's XEP-0359 id, or
        None), reply ((to, id) of a XEP-0461 reply, or None), corrects (the id a XEP-0308
        correction names, or None), no_store (a XEP-0334 <no-store/>) and reactions (with
        `reactions`: XEP-0444 reactions as (the id they are on, [emoji]); body "")."""
        return self._run(
            self._room_traffic(slixmpp.JID(room).bare, within, until_nick, until_body, reactions),
            within + 5, "watch the room")

    async def _room_traffic(self, room, within, until_nick, until_body, reactions):
        found = []
        deadline = self._loop.time() + within
        while True:
            msg = await self._next(self._inbox, deadline)
            if msg is None:
                return found
            if (msg["type"] != "groupchat" or msg["from"].bare != room
                    or msg.xml.find(f"{{{DELAY}}}delay") is not None):
                continue
            reacted = msg.xml.find(f"{{{REACTIONS}}}reactions")
            if reactions and reacted is not None and not msg["body"]:
                found.append({"nick": msg["from"].resource, "body": "", "id": msg["id"],
                              "stanza_id": None, "reply": None, "corrects": None,
                              "no_store": False,
                              "reactions": (reacted.get("id"),
                                            [r.text or "" for r in
                                             reacted.findall(f"{{{REACTIONS}}}reaction")])})
                if msg["from"].resource == until_nick and until_body is None:
                    return found
                continue
            if not msg["body"]:
                continue
            stanza_id = None
            for sid in msg.xml.findall(f"{{{STANZA_ID}}}stanza-id"):
                if sid.get("by") == room:
                    stanza_id = sid.get("id")
            reply = msg.xml.find(f"{{{REPLY}}}reply")
            replace = msg.xml.find(f"{{{CORRECTION}}}replace")
            no_store = msg.xml.find(f"{{{HINTS}}}no-store") is not None
            found.append({"nick": msg["from"].resource, "body": msg["body"], "id": msg["id"],
                          "stanza_id": stanza_id,
                          "reply": None if reply is None else (reply.get("to"), reply.get("id")),
                          "corrects": None if replace is None else replace.get("id"),
                          "no_store": no_store, "reactions": None})
            if msg["from"].resource == until_nick and (
                    until_body is None or (msg["body"] == until_body and not no_store)):
                return found

    def say_in_room(self, room, body):
        self.xmpp.send_message(mto=slixmpp.JID(room).bare, mbody=body, mtype="groupchat")
        self._run(self._written(), 10, "send")

    def room_messages(self, room, within, count=None):
        """(nick, body) of live groupchat messages of others in room within `within` seconds.

        Our own echoes, replayed history (delayed) and subject changes are left out; stops
        early once `count` arrived.
        """
        return self._run(self._collect_room(slixmpp.JID(room).bare, within, count),
                         within + 5, "wait for room messages")

    async def _collect_room(self, room, within, count):
        own = self._rooms.get(room)
        found = []
        deadline = self._loop.time() + within
        while count is None or len(found) < count:
            msg = await self._next(self._inbox, deadline)
            if msg is None:
                break
            if (msg["type"] != "groupchat" or msg["from"].bare != room or not msg["body"]
                    or msg["from"].resource == own or msg.xml.find(f"{{{DELAY}}}delay")
                    is not None):
                continue
            found.append((msg["from"].resource, msg["body"]))
        return found

    async def _next(self, queue, deadline):
        """The next item of queue, or None once the loop's clock passes deadline."""
        left = deadline - self._loop.time()
        if left <= 0:
            return None
        try:
            return await asyncio.wait_for(queue.get(), timeout=left)
        except asyncio.TimeoutError:
            return None

    def _run(self, coroutine, timeout, what):
        try:
            return self._loop.run_until_complete(asyncio.wait_for(coroutine, timeout))
        except asyncio.TimeoutError as e:
            raise ClientError(f"{self.jid}: could not {what} within {timeout:.0f}s") from e
