// skills/tool_search/http_tool.h
//
// The HTTP executor of registry tools (S6). A tool whose registry line says
//
//   "executor": {"type": "http", "method": "GET", "url": "https://api.example/v1/{city}",
//                "headers": {"Authorization": "Bearer ${WEATHER_KEY}"}}
//
// runs as one request through url_fetch's SSRF guard (GuardedFetcher: every address the host
// resolves to is checked and the connection pinned to the checked one; private, loopback and
// link-local addresses are refused unless [skills.http_tools] allow_hosts exempts them, cloud
// metadata always), with one deadline, a cap on the body read, and redirects not followed (a
// credential meant for one endpoint never travels to where it points).
//
// A call fills the templates in (url_template.h): `{name}` with the argument (percent-encoded
// in the URL, so it cannot leave its path segment or change the host; as is in a header, where
// control characters are refused), `${NAME}` with the credential the run obtained for the
// tool's required_env. The arguments the templates do not use go in the query string (GET,
// DELETE) or as a JSON object in the body (POST, PUT, PATCH). The model reads the status, the
// media type and the body's text, cut at max_text_bytes; an answer other than 2xx is an error
// it reads. Credentials never reach it: the tool-call path redacts them from whatever comes
// back (component/agent/tool_call.h), and log lines name the host only.
//
//   auto tools = HttpTools::Create(io, http, HttpToolOptions{.allow_hosts = {"10.0.0.0/8"}});
//   std::unique_ptr<Skill> skill = (*tools)->SkillFor(tool, "weather");  // registry_tools.h
//   skill->ExecuteWithSecrets({{"city", "Oslo"}}, context, {{"WEATHER_KEY", key}}, done);
#pragma once

#include <asio.hpp>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "providers/http/http_client.h"
#include "skills/skill.h"
#include "skills/tool_search/tool_definition.h"
#include "skills/web/address_guard.h"
#include "skills/web/guarded_fetch.h"

namespace herald::skills {

struct HttpToolOptions {
  size_t max_bytes = 1 << 20;        // of a response body; past it the answer is cut
  size_t max_text_bytes = 64 << 10;  // of the text the model reads
  absl::Duration timeout = absl::Seconds(30);
  // Exempt from the private-address refusal (AddressPolicy's forms: names, "*.domain",
  // addresses, networks), e.g. an intranet API.
  std::vector<std::string> allow_hosts;
  std::string user_agent = "Herald";
  // Empty: the system's resolver through Asio. Tests resolve names their own way.
  web::HostResolver resolver;
};

// The request a call of an HTTP tool makes: InvalidArgument, with a message for the model, when
// an argument a template needs is missing or cannot be sent; FailedPrecondition when a
// credential is missing from `secrets` (the run asks for every required_env first).
absl::StatusOr<web::FetchRequest> BuildHttpToolRequest(
    const ToolExecutor& executor, const nlohmann::json& arguments,
    const std::map<std::string, std::string>& secrets);

// What the model reads of an answer: the status and media type, then the body's text cut at
// `max_text_bytes`; an error (with the status and the start of the body) for anything but 2xx.
absl::StatusOr<std::string> DescribeHttpToolAnswer(const web::FetchedPage& answer, size_t max_bytes,
                                                   size_t max_text_bytes);

class HttpTools {
 public:
  // Fails when an allow_hosts entry is malformed. `io` and `http` must outlive the HttpTools,
  // and it every skill it made.
  static absl::StatusOr<std::unique_ptr<HttpTools>> Create(asio::io_context& io,
                                                           providers::HttpClient& http,
                                                           HttpToolOptions options);

  // The skill that runs `tool` (an HTTP executor's) when the model calls it by `name`.
  std::unique_ptr<Skill> SkillFor(ToolDefinition tool, std::string name);

 private:
  HttpTools(asio::io_context& io, std::unique_ptr<web::GuardedFetcher> fetcher,
            size_t max_text_bytes)
      : io_(io), fetcher_(std::move(fetcher)), max_text_bytes_(max_text_bytes) {}

  asio::io_context& io_;
  std::unique_ptr<web::GuardedFetcher> fetcher_;
  size_t max_text_bytes_;
};

}  // namespace herald::skills
