// control/http/console_page.cc
#include "control/http/console_page.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "component/base/hex.h"
#include "control/console/assets.h"

namespace herald::control::http {
namespace {

constexpr std::string_view kPrefix = "/console/";

std::string ContentTypeOf(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

struct Page {
  std::string_view bytes;
  std::string content_type;
  std::string etag;  // quoted, as the header carries it
};

// The headers every console answer carries.
std::vector<std::pair<std::string, std::string>> SecurityHeaders() {
  return {{"Content-Security-Policy", kConsoleSecurityPolicy},
          {"X-Content-Type-Options", "nosniff"},
          {"X-Frame-Options", "DENY"},
          {"Referrer-Policy", "no-referrer"},
          {"Cross-Origin-Opener-Policy", "same-origin"},
          {"Cross-Origin-Resource-Policy", "same-origin"}};
}

HttpResponse Redirect(std::string location) {
  HttpResponse response{.status = 302, .body = "See /console/\n"};
  response.headers = SecurityHeaders();
  response.headers.emplace_back("Location", std::move(location));
  return response;
}

HttpResponse NotFound() {
  HttpResponse response{.status = 404, .body = "Not found\n"};
  response.headers = SecurityHeaders();
  return response;
}

// Whether the If-None-Match header names `etag` ("*", one tag, or a list of them).
bool Matches(std::string_view if_none_match, std::string_view etag) {
  constexpr std::string_view kSpace = " \t";
  while (!if_none_match.empty()) {
    const size_t comma = if_none_match.find(',');
    std::string_view candidate = if_none_match.substr(0, comma);
    if_none_match = comma == std::string_view::npos ? "" : if_none_match.substr(comma + 1);
    const size_t first = candidate.find_first_not_of(kSpace);
    if (first == std::string_view::npos) continue;
    candidate = candidate.substr(first, candidate.find_last_not_of(kSpace) - first + 1);
    if (candidate.starts_with("W/")) candidate.remove_prefix(2);
    if (candidate == "*" || candidate == etag) return true;
  }
  return false;
}

}  // namespace

void ServeConsole(HttpServer& server) {
  auto pages = std::make_shared<std::map<std::string, Page, std::less<>>>();
  for (const console::ConsoleAsset& asset : console::ConsoleAssets()) {
    (*pages)[std::string(asset.name)] = {
        .bytes = asset.bytes,
        .content_type = ContentTypeOf(asset.name),
        .etag = "\"" + base::Sha256Hex(asset.bytes).substr(0, 32) + "\""};
  }
  server.Route("/console/", {.methods = {"GET"}},
               [pages](const HttpRequest& request, HttpServer::Respond respond) {
                 std::string_view name = std::string_view(request.path).substr(kPrefix.size());
                 if (name.empty()) name = "index.html";
                 auto page = pages->find(name);
                 if (page == pages->end()) return respond(NotFound());
                 HttpResponse response{.content_type = page->second.content_type};
                 response.headers = SecurityHeaders();
                 response.headers.emplace_back("Cache-Control", "no-cache");
                 response.headers.emplace_back("ETag", page->second.etag);
                 if (Matches(request.Header("if-none-match"), page->second.etag)) {
                   response.status = 304;
                 } else {
                   response.body = std::string(page->second.bytes);
                 }
                 respond(std::move(response));
               });
  server.Route("/console", {.methods = {"GET"}},
               [](const HttpRequest&, HttpServer::Respond respond) {
                 respond(Redirect(std::string(kPrefix)));
               });
  // "/" is every path no other route takes: the root redirects, anything else is unknown.
  server.Route("/", {.methods = {"GET"}},
               [](const HttpRequest& request, HttpServer::Respond respond) {
                 respond(request.path == "/" ? Redirect(std::string(kPrefix)) : NotFound());
               });
}

}  // namespace herald::control::http
