#include "component/xmpp/agent_protocol.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/stanza.h"

namespace herald::xmpp {
namespace {

std::string_view KindName(AgentRequest::Kind kind) {
  switch (kind) {
    case AgentRequest::Kind::kExecute:
      return "execute";
    case AgentRequest::Kind::kAsk:
      return "ask";
    case AgentRequest::Kind::kConfirm:
      return "confirm";
    case AgentRequest::Kind::kSkills:
      break;
  }
  return "skills";
}

// The error type RFC 6120 §8.3.3 gives `condition`, as this protocol uses them.
std::string_view ErrorTypeOf(std::string_view condition) {
  if (condition == "forbidden" || condition == "not-authorized") return "auth";
  if (condition == "bad-request") return "modify";
  if (condition == "resource-constraint") return "wait";
  return "cancel";
}

// Reads the non-negative integer attribute `name` of `element` into `value` (kept when the
// attribute is absent); false when it is there and not a number from 0 to `max`.
bool ReadCount(const XmlElement& element, std::string_view name, int max, int& value) {
  if (!element.HasAttr(name)) return true;
  int read = 0;
  if (!absl::SimpleAtoi(AbslView(element.Attr(name)), &read) || read < 0 || read > max) {
    return false;
  }
  value = read;
  return true;
}

std::string ReadRequest(const XmlElement& payload, AgentRequest& request) {
  if (!ReadCount(payload, "hops", kMaxAgentHops, request.hops)) {
    return absl::StrCat("hops: a whole number from 0 to ", kMaxAgentHops);
  }
  int timeout = 0;
  if (!ReadCount(payload, "timeout", kMaxAgentTimeoutSeconds, timeout)) {
    return absl::StrCat("timeout: a whole number of seconds up to ", kMaxAgentTimeoutSeconds);
  }
  request.timeout = absl::Seconds(timeout);
  switch (request.kind) {
    case AgentRequest::Kind::kExecute:
      request.skill = std::string(payload.Attr("skill"));
      request.arguments_json = payload.ChildText("arguments");
      if (request.skill.empty()) return "execute: the skill attribute is missing";
      if (request.skill.size() > kMaxAgentNameBytes) {
        return absl::StrCat("skill: longer than ", kMaxAgentNameBytes, " bytes");
      }
      if (request.arguments_json.size() > kMaxAgentArgumentsBytes) {
        return absl::StrCat("arguments: longer than ", kMaxAgentArgumentsBytes, " bytes");
      }
      return "";
    case AgentRequest::Kind::kAsk:
      request.text = payload.ChildText("text");
      request.thread = std::string(payload.Attr("thread"));
      if (request.text.empty()) return "ask: the text is empty";
      if (request.thread.size() > kMaxAgentThreadBytes) {
        return absl::StrCat("thread: longer than ", kMaxAgentThreadBytes, " bytes");
      }
      if (request.text.size() > kMaxAgentTextBytes) {
        return absl::StrCat("text: longer than ", kMaxAgentTextBytes, " bytes");
      }
      return "";
    case AgentRequest::Kind::kConfirm: {
      request.action_id = std::string(payload.Attr("action"));
      const std::string_view decision = payload.Attr("decision");
      request.approve = decision == "approve";
      request.reason = payload.ChildText("reason");
      if (request.action_id.empty()) return "confirm: the action attribute is missing";
      if (request.action_id.size() > kMaxAgentNameBytes) {
        return absl::StrCat("action: longer than ", kMaxAgentNameBytes, " bytes");
      }
      if (decision != "approve" && decision != "deny") {
        return "confirm: decision is \"approve\" or \"deny\"";
      }
      return "";
    }
    case AgentRequest::Kind::kSkills:
      break;
  }
  return "";
}

void SetDuration(XmlElement& element, absl::Duration duration) {
  element.SetAttr("duration-ms", absl::StrCat(absl::ToInt64Milliseconds(duration)));
}

}  // namespace

std::optional<AgentRequest> TranslateAgentRequest(const XmlElement& iq) {
  const std::string_view type = iq.Attr("type");
  if ((type != "get" && type != "set") || !iq.HasAttr("id")) return std::nullopt;
  // With several payloads, the first in our namespace says it is ours (and malformed).
  const XmlElement* payload = iq.FindChildByNamespace(ns::kAgent);
  if (payload == nullptr) return std::nullopt;
  absl::StatusOr<Jid> from = Jid::Parse(iq.Attr("from"));
  if (!from.ok()) return std::nullopt;  // nobody to answer; the responder says bad-request
  absl::StatusOr<Jid> to = Jid::Parse(iq.Attr("to"));
  AgentRequest request{.from = *std::move(from),
                       .to = to.ok() ? *std::move(to) : Jid(),
                       .iq_id = std::string(iq.Attr("id"))};
  // The kind is the element's, even in an IQ of the wrong type (so a refusal names it).
  const std::string& name = payload->name();
  const bool get = type == "get";
  if (name == "execute") {
    request.kind = AgentRequest::Kind::kExecute;
  } else if (name == "ask") {
    request.kind = AgentRequest::Kind::kAsk;
  } else if (name == "confirm") {
    request.kind = AgentRequest::Kind::kConfirm;
  }
  const bool known = name == "skills" || name == "execute" || name == "ask" || name == "confirm";
  if (IqPayload(iq) != payload) {
    request.malformed = "an IQ carries exactly one payload";
  } else if (!known || get != (name == "skills")) {
    request.malformed = absl::StrCat("<", name, "/> in an IQ of type ", AbslView(type),
                                     " is not a request of ", ns::kAgent);
  }
  if (request.malformed.empty()) request.malformed = ReadRequest(*payload, request);
  return request;
}

XmlElement AgentAnswerStanza(const AnswerAgent& answer) {
  XmlElement iq("iq");
  iq.SetAttr("to", answer.to.ToString()).SetAttr("id", answer.iq_id);
  if (!answer.from.empty()) iq.SetAttr("from", answer.from.ToString());
  if (!answer.error.empty()) {
    iq.SetAttr("type", "error");
    XmlElement& error = iq.AddChild("error");
    error.SetAttr("type", ErrorTypeOf(answer.error));
    error.AddChild(answer.error, ns::kStanzaErrors);
    if (!answer.error_text.empty()) {
      error.AddChild("text", ns::kStanzaErrors)
          .SetAttr("xml:lang", "en")
          .AddText(answer.error_text);
    }
    return iq;
  }
  iq.SetAttr("type", "result");
  switch (answer.kind) {
    case AgentRequest::Kind::kSkills: {
      XmlElement& skills = iq.AddChild("skills", ns::kAgent);
      for (const AnswerAgent::Skill& skill : answer.skills) {
        XmlElement& item = skills.AddChild("skill");
        item.SetAttr("name", skill.name).SetAttr("source", skill.source);
        item.AddChild("description").AddText(skill.description);
        item.AddChild("parameters").AddText(skill.parameters_json);
      }
      break;
    }
    case AgentRequest::Kind::kExecute:
    case AgentRequest::Kind::kAsk: {
      XmlElement& result = iq.AddChild("result", ns::kAgent);
      result.SetAttr("ok", answer.ok ? "true" : "false");
      SetDuration(result, answer.duration);
      if (answer.kind == AgentRequest::Kind::kAsk) {
        if (!answer.model.empty()) result.SetAttr("model", answer.model);
        result.SetAttr("input-tokens", absl::StrCat(answer.input_tokens));
        result.SetAttr("output-tokens", absl::StrCat(answer.output_tokens));
      }
      if (answer.ok) {
        result.AddChild("output").AddText(answer.output);
      } else {
        result.AddChild("error").AddText(answer.failure);
      }
      break;
    }
    case AgentRequest::Kind::kConfirm:
      break;  // an empty result says it was done
  }
  return iq;
}

XmlElement AgentProgressStanza(const SendAgentProgress& progress) {
  XmlElement message("message");
  message.SetAttr("to", progress.to.ToString()).SetAttr("type", "normal");
  if (!progress.from.empty()) message.SetAttr("from", progress.from.ToString());
  XmlElement& note = message.AddChild("progress", ns::kAgent);
  note.SetAttr("id", progress.iq_id)
      .SetAttr("elapsed-ms", absl::StrCat(absl::ToInt64Milliseconds(progress.elapsed)));
  note.AddText(progress.text);
  // Stale a moment later; no archive or offline storage should keep it.
  message.AddChild("no-store", ns::kHints);
  return message;
}

XmlElement AgentCallRequest(const CallAgent& call, const std::string& id) {
  XmlElement iq("iq");
  iq.SetAttr("to", call.to.ToString()).SetAttr("type", "set").SetAttr("id", id);
  if (!call.from.empty()) iq.SetAttr("from", call.from.ToString());
  XmlElement& payload = iq.AddChild(std::string(KindName(call.kind)), ns::kAgent);
  payload.SetAttr("hops", absl::StrCat(call.hops));
  payload.SetAttr("timeout",
                  absl::StrCat(std::max<int64_t>(
                      1, absl::ToInt64Seconds(absl::Ceil(call.timeout, absl::Seconds(1))))));
  if (call.kind == AgentRequest::Kind::kExecute) {
    payload.SetAttr("skill", call.skill);
    if (!call.arguments_json.empty()) payload.AddChild("arguments").AddText(call.arguments_json);
  } else {
    if (!call.thread.empty()) payload.SetAttr("thread", call.thread);
    payload.AddChild("text").AddText(call.text);
  }
  return iq;
}

std::optional<AgentAnswer> TranslateAgentAnswer(const XmlElement& iq, const Jid& asked,
                                                std::string call_id) {
  absl::StatusOr<Jid> from = Jid::Parse(iq.Attr("from"));
  if (!from.ok() || !(*from == asked)) return std::nullopt;
  AgentAnswer answer{.call_id = std::move(call_id), .from = *std::move(from)};
  if (iq.Attr("type") != "result") {
    const XmlElement* error = iq.FindChild("error");
    answer.condition = error != nullptr ? ErrorCondition(*error) : "undefined-condition";
    if (error != nullptr) answer.error_text = ErrorText(*error);
    return answer;
  }
  const XmlElement* result = iq.FindChild("result", ns::kAgent);
  if (result == nullptr) {
    answer.condition = "bad-request";  // a result that is not one of ours
    answer.error_text = "the answer carries no <result/>";
    return answer;
  }
  answer.ok = result->Attr("ok") == "true";
  answer.output = result->ChildText("output");
  answer.failure = result->ChildText("error");
  answer.model = std::string(result->Attr("model"));
  int64_t number = 0;
  if (absl::SimpleAtoi(AbslView(result->Attr("input-tokens")), &number) && number >= 0) {
    answer.input_tokens = number;
  }
  if (absl::SimpleAtoi(AbslView(result->Attr("output-tokens")), &number) && number >= 0) {
    answer.output_tokens = number;
  }
  if (absl::SimpleAtoi(AbslView(result->Attr("duration-ms")), &number) && number >= 0) {
    answer.duration = absl::Milliseconds(number);
  }
  return answer;
}

}  // namespace herald::xmpp
