-- Wires Herald into Prosody as an XEP-0114 external component.
--
-- Add the two global lines near the top of prosody.cfg.lua (before any VirtualHost),
-- and the Component section at the end. Replace:
--   agent.example.org   the address users write to; it must be a subdomain of, or
--                       otherwise routable from, a VirtualHost you serve
--   5347                the component port (Herald's [server] port)
--   the secret          a long random string, e.g. `openssl rand -hex 32`; Herald
--                       reads the same value (component_secret = "${HERALD_SECRET}")
-- then `prosodyctl reload` (or restart) and start Herald.
--
-- The end-to-end tests (tests/e2e/servers.py) build their Prosody config from this
-- very file, so what is written here is what the tests prove works.

-- Global section. Components authenticate with a shared secret over plain TCP:
-- listen on loopback only and run Herald on the same machine (or behind a tunnel).
component_ports = { 5347 }
component_interfaces = { "127.0.0.1" }

-- Component section: at the end of the file, after your VirtualHost sections.
Component "agent.example.org"
    component_secret = "change-me-to-a-long-random-secret"
