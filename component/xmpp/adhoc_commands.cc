#include "component/xmpp/adhoc_commands.h"

#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_join.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/stanza.h"

namespace herald::xmpp {
namespace {

// The fields of a submitted jabber:x:data form inside `command`.
std::vector<std::pair<std::string, std::string>> SubmittedFields(const XmlElement& command) {
  std::vector<std::pair<std::string, std::string>> fields;
  const XmlElement* form = command.FindChild("x", ns::kDataForms);
  if (form == nullptr || form->Attr("type") != "submit") return fields;
  for (const XmlNode& node : form->children()) {
    const XmlElement* field = node.element.get();
    if (field == nullptr || field->name() != "field" || field->Attr("var").empty()) continue;
    if (fields.size() == kMaxFormFields) break;
    std::vector<std::string> values;
    for (const XmlNode& value : field->children()) {
      if (value.element != nullptr && value.element->name() == "value") {
        values.push_back(value.element->Text());
      }
    }
    std::string joined = absl::StrJoin(values, "\n");
    if (joined.size() > kMaxFieldBytes) joined.resize(kMaxFieldBytes);
    fields.emplace_back(std::string(field->Attr("var")), std::move(joined));
  }
  return fields;
}

// (error type, condition) of a refusal named in AnswerCommand::error.
std::pair<std::string_view, std::string_view> ErrorOf(std::string_view error) {
  if (error == "forbidden") return {"auth", "forbidden"};
  if (error == "item-not-found") return {"cancel", "item-not-found"};
  if (error == "bad-sessionid") return {"modify", "bad-request"};
  if (error == "resource-constraint") return {"wait", "resource-constraint"};
  return {"modify", "bad-request"};
}

std::string_view StatusName(AnswerCommand::Status status) {
  switch (status) {
    case AnswerCommand::Status::kExecuting:
      return "executing";
    case AnswerCommand::Status::kCanceled:
      return "canceled";
    case AnswerCommand::Status::kCompleted:
      break;
  }
  return "completed";
}

}  // namespace

std::optional<CommandRequest> TranslateCommandRequest(const XmlElement& iq) {
  const std::string_view type = iq.Attr("type");
  if ((type != "get" && type != "set") || !iq.HasAttr("id")) return std::nullopt;
  const XmlElement* payload = IqPayload(iq);
  if (payload == nullptr) return std::nullopt;
  const bool list = type == "get" && payload->name() == "query" &&
                    payload->xmlns() == ns::kDiscoItems && payload->Attr("node") == ns::kCommands;
  const bool run =
      type == "set" && payload->name() == "command" && payload->xmlns() == ns::kCommands;
  if (!list && !run) return std::nullopt;
  absl::StatusOr<Jid> from = Jid::Parse(iq.Attr("from"));
  if (!from.ok()) return std::nullopt;  // nobody to answer; the responder says bad-request
  absl::StatusOr<Jid> to = Jid::Parse(iq.Attr("to"));
  CommandRequest request{.from = *std::move(from),
                         .to = to.ok() ? *std::move(to) : Jid(),
                         .iq_id = std::string(iq.Attr("id"))};
  if (list) return request;
  request.kind = payload->Attr("action") == "cancel" ? CommandRequest::Kind::kCancel
                                                     : CommandRequest::Kind::kExecute;
  request.node = std::string(payload->Attr("node"));
  request.session_id = std::string(payload->Attr("sessionid"));
  request.fields = SubmittedFields(*payload);
  return request;
}

XmlElement CommandAnswerStanza(const AnswerCommand& answer, const Jid& own_jid) {
  XmlElement iq("iq");
  iq.SetAttr("to", answer.to.ToString()).SetAttr("id", answer.iq_id);
  if (!answer.from.empty()) iq.SetAttr("from", answer.from.ToString());
  if (!answer.error.empty()) {
    iq.SetAttr("type", "error");
    const auto [type, condition] = ErrorOf(answer.error);
    XmlElement& error = iq.AddChild("error");
    error.SetAttr("type", type);
    error.AddChild(std::string(condition), ns::kStanzaErrors);
    if (answer.error == "bad-sessionid") error.AddChild("bad-sessionid", ns::kCommands);
    return iq;
  }
  iq.SetAttr("type", "result");
  if (answer.kind == CommandRequest::Kind::kList) {
    XmlElement& query = iq.AddChild("query", ns::kDiscoItems);
    query.SetAttr("node", ns::kCommands);
    const std::string jid = answer.from.empty() ? own_jid.ToString() : answer.from.ToString();
    for (const AnswerCommand::Item& item : answer.items) {
      query.AddChild("item")
          .SetAttr("jid", jid)
          .SetAttr("node", item.node)
          .SetAttr("name", item.name);
    }
    return iq;
  }
  XmlElement& command = iq.AddChild("command", ns::kCommands);
  command.SetAttr("node", answer.node).SetAttr("status", StatusName(answer.status));
  if (!answer.session_id.empty()) command.SetAttr("sessionid", answer.session_id);
  if (answer.status == AnswerCommand::Status::kExecuting) {
    command.AddChild("actions").SetAttr("execute", "complete").AddChild("complete");
    XmlElement& form = command.AddChild("x", ns::kDataForms);
    form.SetAttr("type", "form");
    if (!answer.form_title.empty()) form.AddChild("title").AddText(answer.form_title);
    if (!answer.note.empty()) form.AddChild("instructions").AddText(answer.note);
    for (const AnswerCommand::Field& field : answer.fields) {
      XmlElement& out = form.AddChild("field");
      out.SetAttr("var", field.var).SetAttr("type", field.type).SetAttr("label", field.label);
      if (field.required) out.AddChild("required");
      if (!field.value.empty()) out.AddChild("value").AddText(field.value);
      for (const AnswerCommand::Option& option : field.options) {
        out.AddChild("option")
            .SetAttr("label", option.label)
            .AddChild("value")
            .AddText(option.value);
      }
    }
  } else if (!answer.note.empty()) {
    command.AddChild("note").SetAttr("type", "info").AddText(answer.note);
  }
  return iq;
}

}  // namespace herald::xmpp
