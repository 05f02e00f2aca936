// component/config/bind_control.cc
//
// [quota] and [control]: token limits and prices, the control plane's listener, tokens and files.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "component/base/field_template.h"
#include "component/config/bind_sections.h"
#include "component/config/toml_binder.h"
#include "component/config/value_formats.h"
#include "component/events/event_bus.h"

namespace herald::config {

void BindQuota(Binder& b, const Section& root, QuotaConfig& quota) {
  Section s = b.Sub(root, "quota");
  b.Integer(s, "daily_tokens", &quota.daily_tokens);
  b.NonEmptyString(s, "path", &quota.path);
  absl::flat_hash_set<std::string> models;
  for (const Section& p : b.Tables(s, "prices")) {
    ModelPrice price;
    if (!b.Has(p, "model")) {
      b.Error(p.line, absl::StrCat(p.path, ".model is required (\"<provider>:<model>\")"));
    } else if (b.NonEmptyString(p, "model", &price.model) && !models.insert(price.model).second) {
      b.Error(p, "model",
              absl::StrCat(p.path, ".model ", b.Shown(b.Node(p, "model")), " already has a price"));
    }
    for (auto [key, out] :
         {std::pair<std::string_view, double*>{"input_per_mtok", &price.input_per_mtok},
          std::pair<std::string_view, double*>{"output_per_mtok", &price.output_per_mtok}}) {
      const toml::node* node = b.Node(p, key);
      if (node == nullptr || !node->is_number()) continue;
      const double value = node->is_integer() ? static_cast<double>(node->as_integer()->get())
                                              : node->as_floating_point()->get();
      if (!(value >= 0 && value < 1e9)) {
        b.Error(p, key,
                absl::StrCat(Binder::Path(p, key),
                             " must be a price in USD per million tokens, "
                             "0 or more"));
        continue;
      }
      *out = value;
    }
    quota.prices.push_back(std::move(price));
  }
}

void BindStorage(Binder& b, const Section& root, StorageConfig& storage) {
  Section s = b.Sub(root, "storage");
  b.Enum<StorageBackend>(
      s, "backend",
      {{"sqlite", StorageBackend::kSqlite}, {"postgresql", StorageBackend::kPostgresql}},
      &storage.backend);
  b.NonEmptyString(s, "postgresql", &storage.postgresql);
  b.Integer(s, "pool_size", &storage.pool_size);
  b.Integer(s, "lease_seconds", &storage.lease_seconds);
  if (storage.backend == StorageBackend::kPostgresql && storage.postgresql.empty()) {
    b.Error(s, "backend",
            "storage.backend = \"postgresql\" needs storage.postgresql, a libpq connection "
            "string such as \"host=/run/postgresql dbname=herald\"");
  }
}

void BindHttp(Binder& b, const Section& root, HttpConfig& http) {
  Section s = b.Sub(root, "http");
  b.NonEmptyString(s, "tls_cert", &http.tls_cert);
  b.NonEmptyString(s, "tls_key", &http.tls_key);
  if (http.tls_cert.empty() != http.tls_key.empty()) {
    b.Error(s, http.tls_cert.empty() ? "tls_key" : "tls_cert",
            "http.tls_cert and http.tls_key must be set together");
  }
  if (b.String(s, "listen", &http.listen) && !http.listen.empty()) {
    const bool tls = !http.tls_cert.empty() && !http.tls_key.empty();
    if (absl::Status status = CheckHttpListenAddress(http.listen, tls); !status.ok()) {
      b.Error(s, "listen",
              absl::StrCat("http.listen ", b.Shown(b.Node(s, "listen")),
                           " is not usable: ", status.message()));
    }
  }
}

void BindTraces(Binder& b, const Section& root, TracesConfig& traces) {
  Section s = b.Sub(root, "traces");
  b.Integer(s, "keep", &traces.keep);
  b.Integer(s, "max_spans", &traces.max_spans);
  b.Integer(s, "export_interval_seconds", &traces.export_interval_seconds);
  if (b.String(s, "otlp_endpoint", &traces.otlp_endpoint) && !traces.otlp_endpoint.empty() &&
      !IsValidHttpUrl(traces.otlp_endpoint)) {
    b.Error(s, "otlp_endpoint", "traces.otlp_endpoint must be an http:// or https:// URL");
  }
}

namespace {

void BindWebhooksOut(Binder& b, const Section& s, WebhooksConfig& webhooks) {
  absl::flat_hash_set<std::string> names;
  for (const Section& w : b.Tables(s, "out")) {
    WebhookOutConfig hook{.name = absl::StrCat("out-", w.index + 1)};
    for (const char* required : {"url", "secret", "events"}) {
      if (!b.Has(w, required)) b.Error(w.line, absl::StrCat(w.path, ".", required, " is required"));
    }
    b.NonEmptyString(w, "name", &hook.name);
    if (!names.insert(hook.name).second) {
      b.Error(w.line, absl::StrCat(w.path, ".name \"", hook.name, "\" is used twice"));
    }
    if (b.NonEmptyString(w, "url", &hook.url) && !IsValidHttpUrl(hook.url)) {
      b.Error(w, "url", absl::StrCat(w.path, ".url must be an http:// or https:// URL"));
    }
    if (b.String(w, "secret", &hook.secret) && hook.secret.size() < 16) {
      b.Error(w, "secret",
              absl::StrCat(w.path,
                           ".secret must be at least 16 bytes (use \"${NAME}\" to read "
                           "it from the environment)"));
    }
    if (b.Has(w, "events")) {
      std::vector<Binder::Element> listed = b.StringList(w, "events");
      if (listed.empty()) b.Error(w, "events", absl::StrCat(w.path, ".events must name an event"));
      for (Binder::Element& element : listed) {
        std::string name = element.value;
        if (name == "limit_reached") name = "limit_blocked";
        if (name == "limit_warned") name = "limit_warning";
        if (!events::EventTypeNamed(name).has_value()) {
          b.ElementError(element,
                         absl::StrCat(element.path,
                                      " must be an event type such as \"run_completed\", "
                                      "\"run_failed\", \"action_required\", \"limit_reached\"; "
                                      "got ",
                                      b.Shown(element.node)));
          continue;
        }
        hook.events.push_back(std::move(name));
      }
    }
    b.Integer(w, "max_queue", &hook.max_queue);
    b.Integer(w, "max_attempts", &hook.max_attempts);
    b.Integer(w, "timeout_seconds", &hook.timeout_seconds);
    webhooks.out.push_back(std::move(hook));
  }
}

}  // namespace

void BindWebhooks(Binder& b, const Section& root, const HttpConfig& http,
                  WebhooksConfig& webhooks) {
  Section s = b.Sub(root, "webhooks");
  b.NonEmptyString(s, "dead_letters_path", &webhooks.dead_letters_path);
  BindWebhooksOut(b, s, webhooks);
  const std::vector<Section> endpoints = b.Tables(s, "in");
  if (http.listen.empty() && !endpoints.empty()) {
    b.Error(s, "in", "webhooks.in needs the HTTP listener: set [http] listen");
  }
  absl::flat_hash_set<std::string> names;
  for (const Section& w : endpoints) {
    WebhookInConfig hook;
    for (const char* required : {"name", "secret", "to"}) {
      if (!b.Has(w, required)) b.Error(w.line, absl::StrCat(w.path, ".", required, " is required"));
    }
    if (b.NonEmptyString(w, "name", &hook.name)) {
      if (!IsShortName(hook.name)) {
        b.Error(w, "name",
                absl::StrCat(w.path,
                             ".name must be 1-64 of a-z 0-9 _ - (it is the path "
                             "/webhooks/<name>)"));
      } else if (!names.insert(hook.name).second) {
        b.Error(w, "name", absl::StrCat(w.path, ".name \"", hook.name, "\" is used twice"));
      }
    }
    // The value is never shown: it is a secret.
    if (b.String(w, "secret", &hook.secret) && hook.secret.size() < 16) {
      b.Error(w, "secret",
              absl::StrCat(w.path,
                           ".secret must be at least 16 bytes (use \"${NAME}\" to read "
                           "it from the environment)"));
    }
    if (b.NonEmptyString(w, "to", &hook.to) &&
        !IsValidBareJid(hook.to, /*require_localpart=*/false)) {
      b.Error(w, "to",
              absl::StrCat(w.path, ".to must be a bare JID or a room's JID; got ",
                           b.Shown(b.Node(w, "to"))));
    }
    if (b.String(w, "template", &hook.template_text)) {
      if (absl::StatusOr<base::FieldTemplate> parsed =
              base::FieldTemplate::Parse(hook.template_text);
          !parsed.ok()) {
        b.Error(w, "template", absl::StrCat(w.path, ".template: ", parsed.status().message()));
      } else if (hook.template_text.empty()) {
        b.Error(w, "template", absl::StrCat(w.path, ".template must not be empty"));
      }
    }
    b.Integer(w, "max_body_bytes", &hook.max_body_bytes);
    b.Integer(w, "rate_per_minute", &hook.rate_per_minute);
    webhooks.in.push_back(std::move(hook));
  }
}

void BindControl(Binder& b, const Section& root, ControlConfig& control) {
  Section s = b.Sub(root, "control");
  b.NonEmptyString(s, "tls_cert", &control.tls_cert);
  b.NonEmptyString(s, "tls_key", &control.tls_key);
  b.NonEmptyString(s, "tls_client_ca", &control.tls_client_ca);
  if (control.tls_cert.empty() != control.tls_key.empty()) {
    b.Error(s, control.tls_cert.empty() ? "tls_key" : "tls_cert",
            "control.tls_cert and control.tls_key must be set together");
  }
  if (!control.tls_client_ca.empty() && control.tls_cert.empty()) {
    b.Error(s, "tls_client_ca",
            "control.tls_client_ca (mTLS) needs control.tls_cert and control.tls_key");
  }
  b.NonEmptyString(s, "audit_path", &control.audit_path);
  b.NonEmptyString(s, "state_path", &control.state_path);
  b.Integer(s, "shutdown_grace_seconds", &control.shutdown_grace_seconds);
  b.Integer(s, "subscriber_queue_limit", &control.subscriber_queue_limit);
  const bool tls = !control.tls_cert.empty() && !control.tls_key.empty();
  if (b.String(s, "listen", &control.listen)) {
    if (absl::Status status = CheckControlListenAddress(control.listen, tls); !status.ok()) {
      b.Error(s, "listen",
              absl::StrCat("control.listen ", b.Shown(b.Node(s, "listen")),
                           " is not usable: ", status.message()));
    }
  }
  absl::flat_hash_set<std::string> names;
  for (const Section& t : b.Tables(s, "tokens")) {
    ControlToken token;
    if (!b.Has(t, "name")) {
      b.Error(t.line, absl::StrCat(t.path,
                                   ".name is required (it names the caller in the "
                                   "audit log)"));
    } else if (b.NonEmptyString(t, "name", &token.name) && !names.insert(token.name).second) {
      b.Error(t, "name",
              absl::StrCat(t.path, ".name ", b.Shown(b.Node(t, "name")),
                           " is used by an earlier token"));
    }
    constexpr absl::string_view kHashHint =
        "store the SHA-256 of the token as 64 lowercase hex digits (e.g. the output of "
        "`printf %s \"$TOKEN\" | sha256sum`), never the token itself";
    if (!b.Has(t, "token_sha256")) {
      b.Error(t.line, absl::StrCat(t.path, ".token_sha256 is required: ", kHashHint));
    } else if (b.String(t, "token_sha256", &token.token_sha256) &&
               !IsLowercaseSha256Hex(token.token_sha256)) {
      // The value is never shown: it may well be the token itself.
      b.Error(t, "token_sha256",
              absl::StrCat(t.path, ".token_sha256 is not a SHA-256 digest: ", kHashHint));
      token.token_sha256.clear();
    }
    if (!b.Has(t, "scopes")) {
      b.Error(t.line, absl::StrCat(t.path,
                                   ".scopes is required: a list among \"read\", \"operate\", "
                                   "\"execute\", \"admin\""));
    } else {
      std::vector<Binder::Element> scopes = b.StringList(t, "scopes");
      if (scopes.empty()) {
        b.Error(t, "scopes", absl::StrCat(t.path, ".scopes must name at least one scope"));
      }
      for (Binder::Element& scope : scopes) {
        if (scope.value != "read" && scope.value != "operate" && scope.value != "execute" &&
            scope.value != "admin") {
          b.ElementError(scope, absl::StrCat(scope.path,
                                             " must be one of \"read\", \"operate\", "
                                             "\"execute\", \"admin\"; got ",
                                             b.Shown(scope.node)));
          continue;
        }
        token.scopes.push_back(scope.value);
      }
    }
    control.tokens.push_back(std::move(token));
  }
}

}  // namespace herald::config
