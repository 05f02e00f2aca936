// control/http/api_gateway.cc
#include "control/http/api_gateway.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/generic/generic_stub.h>

#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/json_depth.h"
#include "nlohmann/json.hpp"

namespace herald::control::http {
namespace {

namespace pb = google::protobuf;

constexpr std::string_view kPrefix = "/api/";
constexpr int kMaxJsonDepth = 64;
constexpr char kJsonType[] = "application/json";
constexpr char kEventStreamType[] = "text/event-stream; charset=utf-8";

// What a method is, as the gateway serves it.
struct ApiMethod {
  std::string grpc_name;  // "/herald.v1.AdminService/GetStatus"
  const pb::Descriptor* input = nullptr;
  const pb::Descriptor* output = nullptr;
  bool client_streaming = false;
  bool server_streaming = false;
};

// The method an /api/ path names, from the scope table and the generated descriptors.
std::optional<ApiMethod> FindMethod(std::string_view path) {
  const std::string grpc_name = absl::StrCat("/", AbslView(path.substr(kPrefix.size())));
  if (!ScopeFor(grpc_name).has_value()) return std::nullopt;
  const std::string_view name = std::string_view(grpc_name).substr(1);
  const size_t slash = name.find('/');
  const pb::ServiceDescriptor* service =
      pb::DescriptorPool::generated_pool()->FindServiceByName(std::string(name.substr(0, slash)));
  if (service == nullptr) return std::nullopt;
  const pb::MethodDescriptor* method =
      service->FindMethodByName(std::string(name.substr(slash + 1)));
  if (method == nullptr) return std::nullopt;
  return ApiMethod{.grpc_name = grpc_name,
                   .input = method->input_type(),
                   .output = method->output_type(),
                   .client_streaming = method->client_streaming(),
                   .server_streaming = method->server_streaming()};
}

HttpResponse JsonResponse(int status, std::string body) {
  return HttpResponse{.status = status, .content_type = kJsonType, .body = std::move(body)};
}

HttpResponse ErrorResponse(grpc::StatusCode code, std::string_view message) {
  HttpResponse response = JsonResponse(HttpStatusForGrpc(code), ErrorJson(code, message));
  if (code == grpc::StatusCode::UNAUTHENTICATED) {
    response.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"herald\"");
  }
  return response;
}

grpc::ByteBuffer ToByteBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// One message of `type` from its JSON; an InvalidArgument a person can act on otherwise.
absl::StatusOr<grpc::ByteBuffer> MessageFromJson(const pb::Descriptor* type,
                                                 std::string_view json) {
  pb::DynamicMessageFactory factory;
  std::unique_ptr<pb::Message> message(factory.GetPrototype(type)->New());
  const pb::util::Status parsed = pb::util::JsonStringToMessage(json, message.get());
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("the body is not a ", type->full_name(),
                                                   " in JSON: ", std::string(parsed.message())));
  }
  return ToByteBuffer(message->SerializeAsString());
}

// The request messages in a body: `{}` when empty; for a client-streaming call one object
// or an array of them.
absl::StatusOr<std::vector<grpc::ByteBuffer>> RequestsFromBody(const ApiMethod& method,
                                                               const std::string& body) {
  std::vector<grpc::ByteBuffer> requests;
  const absl::string_view stripped = absl::StripAsciiWhitespace(body);
  const std::string_view text(stripped.data(), stripped.size());
  if (text.empty()) {
    requests.push_back(ToByteBuffer(""));
    return requests;
  }
  if (base::JsonNestingDepth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return absl::InvalidArgumentError("the body nests deeper than 64 levels");
  }
  if (method.client_streaming && text.front() == '[') {
    const nlohmann::json array = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (array.is_discarded()) return absl::InvalidArgumentError("the body is not valid JSON");
    for (const nlohmann::json& element : array) {
      absl::StatusOr<grpc::ByteBuffer> request = MessageFromJson(
          method.input, element.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      if (!request.ok()) return request.status();
      requests.push_back(*std::move(request));
    }
    return requests;
  }
  absl::StatusOr<grpc::ByteBuffer> request = MessageFromJson(method.input, text);
  if (!request.ok()) return request.status();
  requests.push_back(*std::move(request));
  return requests;
}

// A response message as JSON on one line; the error object when it cannot be read.
std::string JsonFromBytes(const pb::Descriptor* type, const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (buffer.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  pb::DynamicMessageFactory factory;
  std::unique_ptr<pb::Message> message(factory.GetPrototype(type)->New());
  std::string json;
  pb::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  if (!message->ParseFromString(bytes) ||
      !pb::util::MessageToJsonString(*message, &json, options).ok()) {
    return ErrorJson(grpc::StatusCode::INTERNAL, "the answer could not be written as JSON");
  }
  return json;
}

std::string ServerSentEvent(std::string_view event, std::string_view data) {
  return absl::StrCat("event: ", AbslView(event), "\ndata: ", AbslView(data), "\n\n");
}

bool IsJsonContentType(std::string_view content_type) {
  const std::string_view media = content_type.substr(0, content_type.find(';'));
  return absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(AbslView(media)), kJsonType);
}

// GET /api/: the methods, their scopes and whether they stream.
std::string MethodIndex() {
  nlohmann::json methods = nlohmann::json::array();
  for (const MethodScope& entry : kMethodScopes) {
    std::optional<ApiMethod> method = FindMethod(
        absl::StrCat(AbslView(kPrefix.substr(0, kPrefix.size() - 1)), AbslView(entry.method)));
    if (!method.has_value()) continue;
    const bool interactive = entry.method == methods::kAttachHooks;
    methods.push_back({{"path", absl::StrCat(AbslView(kPrefix), AbslView(entry.method.substr(1)))},
                       {"scope", std::string(ScopeName(entry.scope))},
                       {"streaming", method->server_streaming},
                       {"http", !interactive}});
  }
  return nlohmann::json{{"methods", methods}}.dump();
}

// Shared by the routes: what a call needs after the handler has returned.
struct Gateway {
  asio::io_context& io;
  asio::thread_pool& workers;
  grpc::GenericStub channel;  // gRPC's untyped client: calls any method by name
  const Authenticator* authenticator;
  absl::Duration heartbeat;
  absl::Duration begin_after;
};

// One unary call: the request on its way, the answer written when gRPC finishes.
struct UnaryCall {
  grpc::ClientContext context;
  grpc::ByteBuffer request;
  grpc::ByteBuffer response;
};

void StartUnary(const std::shared_ptr<Gateway>& gateway, const ApiMethod& method,
                std::shared_ptr<HttpStream> http, std::string authorization,
                grpc::ByteBuffer request) {
  auto call = std::make_shared<UnaryCall>();
  if (!authorization.empty()) call->context.AddMetadata("authorization", authorization);
  call->request = std::move(request);
  http->OnClose([weak = std::weak_ptr<UnaryCall>(call)] {
    if (auto alive = weak.lock()) alive->context.TryCancel();
  });
  gateway->channel.UnaryCall(
      &call->context, method.grpc_name, grpc::StubOptions(), &call->request, &call->response,
      [gateway, call, http = std::move(http), output = method.output](grpc::Status status) {
        HttpResponse answer = status.ok()
                                  ? JsonResponse(200, JsonFromBytes(output, call->response))
                                  : ErrorResponse(status.error_code(), status.error_message());
        asio::post(gateway->io, [http, answer = std::move(answer)]() mutable {
          http->Respond(std::move(answer));
        });
      });
}

// One streaming call, as server-sent events. gRPC's callbacks convert and post; the stream
// is written on the loop. Owns itself from Start until gRPC is done with it.
class StreamCall : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>,
                   public std::enable_shared_from_this<StreamCall> {
 public:
  StreamCall(std::shared_ptr<Gateway> gateway, const ApiMethod& method,
             std::shared_ptr<HttpStream> http, std::vector<grpc::ByteBuffer> requests)
      : gateway_(std::move(gateway)),
        output_(method.output),
        http_(std::move(http)),
        requests_(std::move(requests)),
        heartbeat_(gateway_->io) {}

  // On the loop. `allowed`: the token may make the call, so the events begin at the latest
  // `begin_after` from now; a refused call is answered as a plain HTTP error.
  void Start(const ApiMethod& method, const std::string& authorization, bool allowed) {
    self_ = shared_from_this();
    if (!authorization.empty()) context_.AddMetadata("authorization", authorization);
    if (allowed) {
      heartbeat_.expires_after(absl::ToChronoNanoseconds(gateway_->begin_after));
      heartbeat_.async_wait([weak = weak_from_this()](const asio::error_code& ec) {
        if (auto self = weak.lock(); !ec && self != nullptr && self->http_->open()) {
          self->BeginEvents();
        }
      });
    }
    http_->OnClose([weak = weak_from_this()] {
      if (auto alive = weak.lock()) alive->context_.TryCancel();
    });
    gateway_->channel.PrepareBidiStreamingCall(&context_, method.grpc_name, grpc::StubOptions(),
                                               this);
    StartRead(&incoming_);
    WriteNext();
    StartCall();
  }

  void OnWriteDone(bool ok) override {
    if (ok) WriteNext();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;
    std::string event = ServerSentEvent("message", JsonFromBytes(output_, incoming_));
    asio::post(gateway_->io, [self = shared_from_this(), event = std::move(event)] {
      self->BeginEvents();
      self->http_->Send(event);
    });
    StartRead(&incoming_);
  }

  void OnDone(const grpc::Status& status) override {
    asio::post(gateway_->io, [self = std::move(self_), status] {
      self->heartbeat_.cancel();
      const grpc::StatusCode code = status.error_code();
      if (!self->http_->begun()) {
        self->http_->Respond(ErrorResponse(code, status.error_message()));
        return;
      }
      self->http_->Send(
          ServerSentEvent(status.ok() ? "end" : "error", ErrorJson(code, status.error_message())));
      self->http_->End();
    });
  }

 private:
  // The requests one at a time, then the half-close.
  void WriteNext() {
    if (next_request_ < requests_.size()) {
      StartWrite(&requests_[next_request_++]);
    } else if (!writes_done_) {
      writes_done_ = true;
      StartWritesDone();
    }
  }

  // On the loop: the head once, then a comment each `heartbeat` while the stream is open.
  void BeginEvents() {
    if (http_->begun()) return;
    http_->Begin(200, kEventStreamType, {{"X-Accel-Buffering", "no"}});
    Heartbeat();
  }

  void Heartbeat() {
    heartbeat_.expires_after(absl::ToChronoNanoseconds(gateway_->heartbeat));
    heartbeat_.async_wait([weak = weak_from_this()](const asio::error_code& ec) {
      auto self = weak.lock();
      if (ec || self == nullptr || !self->http_->open()) return;
      self->http_->Send(": keep-alive\n\n");
      self->Heartbeat();
    });
  }

  std::shared_ptr<Gateway> gateway_;
  const pb::Descriptor* output_;
  std::shared_ptr<HttpStream> http_;  // used on the loop only
  std::vector<grpc::ByteBuffer> requests_;
  size_t next_request_ = 0;
  bool writes_done_ = false;
  grpc::ClientContext context_;
  grpc::ByteBuffer incoming_;
  asio::steady_timer heartbeat_;
  std::shared_ptr<StreamCall> self_;  // from Start until OnDone's post has run
};

void HandleCall(const std::shared_ptr<Gateway>& gateway, const HttpRequest& request,
                std::shared_ptr<HttpStream> http) {
  std::optional<ApiMethod> method = FindMethod(request.path);
  if (!method.has_value()) {
    http->Respond(ErrorResponse(grpc::StatusCode::NOT_FOUND,
                                absl::StrCat("no such method: ", request.path.substr(5))));
    return;
  }
  if (method->grpc_name == methods::kAttachHooks) {
    http->Respond(ErrorResponse(grpc::StatusCode::UNIMPLEMENTED,
                                "HookService/Attach is a live two-way stream: use gRPC"));
    return;
  }
  if (!request.body.empty() && !IsJsonContentType(request.Header("content-type"))) {
    http->Respond(JsonResponse(
        415, ErrorJson(grpc::StatusCode::INVALID_ARGUMENT, "send the body as application/json")));
    return;
  }
  std::string authorization(request.Header("authorization"));
  // Parsing a large body is work: off the loop, then back to it to start the call.
  asio::post(gateway->workers, [gateway, method = *std::move(method), body = request.body,
                                http = std::move(http),
                                authorization = std::move(authorization)]() mutable {
    absl::StatusOr<std::vector<grpc::ByteBuffer>> requests = RequestsFromBody(method, body);
    asio::post(gateway->io, [gateway, method = std::move(method), http = std::move(http),
                             authorization = std::move(authorization),
                             requests = std::move(requests)]() mutable {
      if (!http->open()) return;
      if (!requests.ok()) {
        const absl::string_view why = requests.status().message();
        http->Respond(ErrorResponse(grpc::StatusCode::INVALID_ARGUMENT,
                                    std::string_view(why.data(), why.size())));
        return;
      }
      if (!method.client_streaming && !method.server_streaming) {
        StartUnary(gateway, method, std::move(http), authorization, std::move(requests->front()));
        return;
      }
      const bool allowed =
          gateway->authenticator != nullptr &&
          gateway->authenticator
              ->Authorize(authorization.empty() ? std::nullopt
                                                : std::optional<std::string_view>(authorization),
                          method.grpc_name)
              .ok();
      auto call =
          std::make_shared<StreamCall>(gateway, method, std::move(http), *std::move(requests));
      call->Start(method, authorization, allowed);
    });
  });
}

}  // namespace

int HttpStatusForGrpc(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return 200;
    case grpc::StatusCode::CANCELLED:
      return 499;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return 504;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::ABORTED:
      return 409;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::StatusCode::UNIMPLEMENTED:
      return 501;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    default:
      return 500;
  }
}

std::string ErrorJson(grpc::StatusCode code, std::string_view message) {
  return nlohmann::json{{"code", static_cast<int>(code)},
                        {"status", absl::StatusCodeToString(static_cast<absl::StatusCode>(code))},
                        {"message", std::string(message)}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void ServeApi(HttpServer& server, ApiGatewayOptions options) {
  auto gateway = std::make_shared<Gateway>(Gateway{.io = options.io,
                                                   .workers = options.workers,
                                                   .channel = grpc::GenericStub(options.channel),
                                                   .authenticator = options.authenticator,
                                                   .heartbeat = options.heartbeat,
                                                   .begin_after = options.begin_after});
  server.RouteStream(
      std::string(kPrefix), {.methods = {"GET", "POST"}, .max_body_bytes = options.max_body_bytes},
      [gateway](const HttpRequest& request, std::shared_ptr<HttpStream> http) {
        if (request.method == "GET") {
          http->Respond(request.path == kPrefix
                            ? JsonResponse(200, MethodIndex())
                            : ErrorResponse(grpc::StatusCode::NOT_FOUND,
                                            "call a method with POST; GET /api/ lists them"));
          return;
        }
        HandleCall(gateway, request, std::move(http));
      });
}

}  // namespace herald::control::http
