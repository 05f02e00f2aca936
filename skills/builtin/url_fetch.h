// skills/builtin/url_fetch.h
//
// url_fetch: reads a web page for the model ({"url": "https://..."}). It fetches through
// GuardedFetcher (http/https only; the SSRF guard resolves and checks every address, pins
// the connection to it, and re-checks each of at most 5 redirects; one deadline; a size cap;
// a content-type allowlist) and gives the model text: HTML reduced to readable text (title,
// headings, paragraphs, lists, links numbered [n] with their URLs listed at the end) and
// plain text or JSON passed through, cut at max_text_bytes with a note saying so. Reducing a
// page is CPU work, so it runs on the worker pool; the answer comes back on the I/O loop.
//
//   absl::StatusOr<std::unique_ptr<UrlFetchSkill>> skill =
//       UrlFetchSkill::Create(io, workers, http, UrlFetchOptions{.allow_hosts = {"wiki.lan"}});
//   registry.Register(*std::move(skill));
//   // {"url": "https://example.org/"} ->
//   // URL: https://example.org/
//   // Title: Example Domain
//   // ...text with links [1]...
//   // Links:
//   // [1] https://www.iana.org/domains/example
#pragma once

#include <asio.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "providers/http/http_client.h"
#include "providers/provider.h"
#include "skills/skill.h"
#include "skills/web/address_guard.h"
#include "skills/web/guarded_fetch.h"

namespace herald::skills {

// The media types url_fetch reads by default: HTML, plain text, JSON and XML-ish text.
std::vector<std::string> DefaultUrlFetchContentTypes();

struct UrlFetchOptions {
  size_t max_bytes = 1 << 20;        // of a response body; past it the page is cut
  size_t max_text_bytes = 64 << 10;  // of the text the model reads
  absl::Duration timeout = absl::Seconds(20);
  std::vector<std::string> allowed_content_types = DefaultUrlFetchContentTypes();
  // Exempt from the private-address refusal (AddressPolicy's forms: names, "*.domain",
  // addresses, networks).
  std::vector<std::string> allow_hosts;
  std::string user_agent = "Herald url_fetch";
  // Empty: the system's resolver through Asio. Tests resolve names their own way.
  web::HostResolver resolver;
};

class UrlFetchSkill : public Skill {
 public:
  // Fails when an allow_hosts entry is malformed. `io`, `workers` and `http` must outlive
  // the skill and every run.
  static absl::StatusOr<std::unique_ptr<UrlFetchSkill>> Create(asio::io_context& io,
                                                               asio::thread_pool& workers,
                                                               providers::HttpClient& http,
                                                               UrlFetchOptions options);

  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json& arguments, const SkillContext& context, Done done) override;

 private:
  UrlFetchSkill(asio::io_context& io, asio::thread_pool& workers,
                std::unique_ptr<web::GuardedFetcher> fetcher, size_t max_text_bytes);

  asio::io_context& io_;
  asio::thread_pool& workers_;
  std::unique_ptr<web::GuardedFetcher> fetcher_;
  size_t max_text_bytes_;
  providers::ToolSpec spec_;
};

// The text the model reads for a fetched 2xx page: a short header (URL, title, type), the
// page's text cut at `max_text_bytes`, notes when the body or the text was cut, and the
// links' URLs. Exposed for tests.
std::string DescribePage(const web::FetchedPage& page, size_t max_bytes, size_t max_text_bytes);

}  // namespace herald::skills
