#!/usr/bin/env node
// An echo component written with @xmpp/component (npm), the JavaScript peer of Herald's
// side-by-side benchmark (tools/bench/side_by_side, docs/BENCHMARKS.md). It connects to the
// server as an XEP-0114 component and answers every chat or normal message that has a body
// with a message carrying the same body, back to its sender. Nothing else: no logging, no
// delays, so it runs as fast as the library allows.
//
//   PEER_SECRET=s node tools/bench/peers/xmpp_component_echo.js 127.0.0.1 5347 echo.localhost
//
// The library comes from tools/bench/peers/node_modules (installed by tools/setup from
// package.json and package-lock.json beside this file). Exits 1 when the connection fails
// or closes.
"use strict";

const { component, xml } = require("@xmpp/component");

const [host, port, domain] = process.argv.slice(2);
if (!host || !port || !domain || !process.env.PEER_SECRET) {
  console.error("usage: PEER_SECRET=secret xmpp_component_echo.js HOST PORT DOMAIN");
  process.exit(2);
}

const xmpp = component({
  service: `xmpp://${host}:${port}`,
  domain,
  password: process.env.PEER_SECRET,
});
xmpp.reconnect.stop();  // a benchmark peer that lost its server is done

xmpp.on("stanza", (stanza) => {
  if (!stanza.is("message")) return;
  const type = stanza.attrs.type || "normal";
  if (type !== "chat" && type !== "normal") return;
  const body = stanza.getChildText("body");
  if (body === null) return;
  xmpp.send(xml("message", { to: stanza.attrs.from, from: stanza.attrs.to, type },
                xml("body", {}, body)))
      .catch(() => {});
});

xmpp.on("error", (err) => {
  console.error(`xmpp_component_echo: ${err.message}`);
  process.exit(1);
});
xmpp.on("offline", () => process.exit(1));

xmpp.start().catch((err) => {
  console.error(`xmpp_component_echo: ${err.message}`);
  process.exit(1);
});
