// control/http/console_page.h
//
// The web console (SPEC W1; docs/console.md) on Herald's HTTP listener: GET /console/ serves
// the page, /console/main.js and /console/console.css its code and style, all compiled into
// the binary (control/console). The page itself needs no token — it holds nothing — and asks
// for a control token, which it sends to the HTTP/JSON API (/api/) like any other client.
//
// Every answer carries a Content-Security-Policy that lets the page run only its own script
// and reach only this listener (no inline script, no other origin, no framing), and an ETag,
// so a browser revalidates instead of downloading again (304). "/" and "/console" redirect to
// "/console/".
//
//   ServeConsole(http_server);
//   // open http://127.0.0.1:8080/console/
#pragma once

#include "control/http/http_server.h"

namespace herald::control::http {

inline constexpr char kConsoleSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

void ServeConsole(HttpServer& server);

}  // namespace herald::control::http
