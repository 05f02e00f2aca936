// XEP-0050 on the wire: the IQs that list and run ad-hoc commands, read into CommandRequests,
// and the answers written from AnswerCommands. The stanzas follow the XEP's examples.
#include "component/xmpp/adhoc_commands.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/xml_element.h"
#include "gtest/gtest.h"
#include "tests/component/xmpp/one_stanza.h"

namespace herald::xmpp {
namespace {

using testing::OneStanza;

Jid J(std::string_view text) { return Jid::Parse(text).value(); }

TEST(TranslateCommandRequestTest, ListingTheCommandsIsDiscoItemsAtTheCommandsNode) {
  // XEP-0050 example 2.
  OneStanza iq(
      "<iq type='get' from='requester@domain/r' to='agent.localhost' id='list1'>"
      "<query xmlns='http://jabber.org/protocol/disco#items' "
      "node='http://jabber.org/protocol/commands'/></iq>");
  std::optional<CommandRequest> request = TranslateCommandRequest(iq.get());
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->kind, CommandRequest::Kind::kList);
  EXPECT_EQ(request->from, J("requester@domain/r"));
  EXPECT_EQ(request->to, J("agent.localhost"));
  EXPECT_EQ(request->iq_id, "list1");
}

TEST(TranslateCommandRequestTest, ExecutingSubmittingAndCancelling) {
  // XEP-0050 example 5: execute.
  OneStanza execute(
      "<iq type='set' from='requester@domain/r' to='agent.localhost' id='exec1'>"
      "<command xmlns='http://jabber.org/protocol/commands' node='ping' action='execute'/></iq>");
  std::optional<CommandRequest> request = TranslateCommandRequest(execute.get());
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->kind, CommandRequest::Kind::kExecute);
  EXPECT_EQ(request->node, "ping");
  EXPECT_TRUE(request->session_id.empty());
  EXPECT_TRUE(request->fields.empty());

  // Example 7: the form comes back, in its session (no action means execute).
  OneStanza submit(
      "<iq type='set' from='requester@domain/r' to='agent.localhost' id='exec2'>"
      "<command xmlns='http://jabber.org/protocol/commands' node='history' "
      "sessionid='adhoc-1'><x xmlns='jabber:x:data' type='submit'>"
      "<field var='arguments'><value>5</value></field>"
      "<field var='lines' type='text-multi'><value>a</value><value>b</value></field>"
      "<field><value>no var</value></field></x></command></iq>");
  request = TranslateCommandRequest(submit.get());
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->kind, CommandRequest::Kind::kExecute);
  EXPECT_EQ(request->session_id, "adhoc-1");
  ASSERT_EQ(request->fields.size(), 2u);
  EXPECT_EQ(request->fields[0], (std::pair<std::string, std::string>("arguments", "5")));
  EXPECT_EQ(request->fields[1], (std::pair<std::string, std::string>("lines", "a\nb")));

  // Example 10: cancel.
  OneStanza cancel(
      "<iq type='set' from='requester@domain/r' to='agent.localhost' id='exec3'>"
      "<command xmlns='http://jabber.org/protocol/commands' node='history' sessionid='adhoc-1' "
      "action='cancel'/></iq>");
  request = TranslateCommandRequest(cancel.get());
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->kind, CommandRequest::Kind::kCancel);
}

TEST(TranslateCommandRequestTest, AHostileFormIsBounded) {
  std::string fields;
  for (int i = 0; i < 40; ++i) {
    absl::StrAppend(&fields, "<field var='f", i, "'><value>", std::string(5000, 'x'),
                    "</value></field>");
  }
  OneStanza iq(absl::StrCat(
      "<iq type='set' from='a@b/c' id='x'><command xmlns='http://jabber.org/protocol/commands' "
      "node='history' sessionid='s'><x xmlns='jabber:x:data' type='submit'>",
      fields, "</x></command></iq>"));
  std::optional<CommandRequest> request = TranslateCommandRequest(iq.get());
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->fields.size(), kMaxFormFields);
  EXPECT_EQ(request->fields[0].second.size(), kMaxFieldBytes);
}

TEST(TranslateCommandRequestTest, OtherRequestsAreNotCommands) {
  for (const char* xml : {
           // disco#items without the commands node, or of another node
           "<iq type='get' from='a@b/c' id='1'><query "
           "xmlns='http://jabber.org/protocol/disco#items'/></iq>",
           "<iq type='get' from='a@b/c' id='2'><query "
           "xmlns='http://jabber.org/protocol/disco#items' node='other'/></iq>",
           // a command as a get, a result, without an id, without a sender, in another namespace
           "<iq type='get' from='a@b/c' id='3'><command "
           "xmlns='http://jabber.org/protocol/commands' node='ping'/></iq>",
           "<iq type='result' from='a@b/c' id='4'><command "
           "xmlns='http://jabber.org/protocol/commands' node='ping'/></iq>",
           "<iq type='set' from='a@b/c'><command xmlns='http://jabber.org/protocol/commands' "
           "node='ping'/></iq>",
           "<iq type='set' id='6'><command xmlns='http://jabber.org/protocol/commands' "
           "node='ping'/></iq>",
           "<iq type='set' from='a@b/c' id='7'><command xmlns='urn:example' node='ping'/></iq>",
       }) {
    OneStanza iq(xml);
    EXPECT_FALSE(TranslateCommandRequest(iq.get()).has_value()) << xml;
  }
}

TEST(CommandAnswerStanzaTest, AListNamesEachCommandAtHeraldsAddress) {
  const XmlElement iq = CommandAnswerStanza(
      AnswerCommand{.to = J("requester@domain/r"),
                    .iq_id = "list1",
                    .kind = CommandRequest::Kind::kList,
                    .items = {{"ping", "check that Herald is reachable"}, {"help", "this list"}}},
      J("agent.localhost"));
  EXPECT_EQ(iq.Attr("type"), "result");
  EXPECT_EQ(iq.Attr("id"), "list1");
  EXPECT_EQ(iq.Attr("to"), "requester@domain/r");
  const XmlElement* query = iq.FindChild("query", ns::kDiscoItems);
  ASSERT_NE(query, nullptr);
  EXPECT_EQ(query->Attr("node"), ns::kCommands);
  std::vector<std::string> nodes;
  for (const XmlNode& node : query->children()) {
    ASSERT_NE(node.element, nullptr);
    EXPECT_EQ(node.element->Attr("jid"), "agent.localhost");
    nodes.emplace_back(node.element->Attr("node"));
  }
  EXPECT_EQ(nodes, (std::vector<std::string>{"ping", "help"}));
}

TEST(CommandAnswerStanzaTest, ACompletedCommandCarriesItsAnswerAsANote) {
  const XmlElement iq = CommandAnswerStanza(AnswerCommand{.to = J("requester@domain/r"),
                                                          .iq_id = "exec1",
                                                          .kind = CommandRequest::Kind::kExecute,
                                                          .node = "ping",
                                                          .note = "pong",
                                                          .from = J("agent.localhost")},
                                            J("agent.localhost"));
  EXPECT_EQ(iq.Attr("type"), "result");
  EXPECT_EQ(iq.Attr("from"), "agent.localhost");
  const XmlElement* command = iq.FindChild("command", ns::kCommands);
  ASSERT_NE(command, nullptr);
  EXPECT_EQ(command->Attr("node"), "ping");
  EXPECT_EQ(command->Attr("status"), "completed");
  EXPECT_FALSE(command->HasAttr("sessionid"));
  const XmlElement* note = command->FindChild("note");
  ASSERT_NE(note, nullptr);
  EXPECT_EQ(note->Attr("type"), "info");
  EXPECT_EQ(note->Text(), "pong");
}

TEST(CommandAnswerStanzaTest, ACommandWaitingForArgumentsSendsAForm) {
  const XmlElement iq =
      CommandAnswerStanza(AnswerCommand{.to = J("requester@domain/r"),
                                        .iq_id = "exec1",
                                        .kind = CommandRequest::Kind::kExecute,
                                        .node = "history",
                                        .session_id = "adhoc-1",
                                        .status = AnswerCommand::Status::kExecuting,
                                        .note = "the last n messages",
                                        .form_title = "/history",
                                        .fields = {{.var = "arguments", .label = "[n]"}}},
                          J("agent.localhost"));
  const XmlElement* command = iq.FindChild("command", ns::kCommands);
  ASSERT_NE(command, nullptr);
  EXPECT_EQ(command->Attr("status"), "executing");
  EXPECT_EQ(command->Attr("sessionid"), "adhoc-1");
  const XmlElement* actions = command->FindChild("actions");
  ASSERT_NE(actions, nullptr);
  EXPECT_EQ(actions->Attr("execute"), "complete");
  EXPECT_NE(actions->FindChild("complete"), nullptr);
  const XmlElement* form = command->FindChild("x", ns::kDataForms);
  ASSERT_NE(form, nullptr);
  EXPECT_EQ(form->Attr("type"), "form");
  EXPECT_EQ(form->ChildText("title"), "/history");
  EXPECT_EQ(form->ChildText("instructions"), "the last n messages");
  const XmlElement* field = form->FindChild("field");
  ASSERT_NE(field, nullptr);
  EXPECT_EQ(field->Attr("var"), "arguments");
  EXPECT_EQ(field->Attr("type"), "text-single");
  EXPECT_EQ(field->Attr("label"), "[n]");
}

// XEP-0004 §3.3: a list-single field carries its options, each a label and a <value/>; a
// default is the field's own <value/>; a required field says <required/>.
TEST(CommandAnswerStanzaTest, AChoiceListsItsOptionsAndADefaultIsTheFieldsValue) {
  const XmlElement iq = CommandAnswerStanza(
      AnswerCommand{.to = J("requester@domain/r"),
                    .iq_id = "exec2",
                    .kind = CommandRequest::Kind::kExecute,
                    .node = "pending",
                    .session_id = "adhoc-2",
                    .status = AnswerCommand::Status::kExecuting,
                    .fields = {{.var = "decision",
                                .label = "Answer",
                                .type = "list-single",
                                .value = "deny",
                                .required = true,
                                .options = {{.label = "Let it run", .value = "approve"},
                                            {.label = "Refuse it", .value = "deny"}}}}},
      J("agent.localhost"));
  const XmlElement* form = iq.FindChild("command", ns::kCommands)->FindChild("x", ns::kDataForms);
  ASSERT_NE(form, nullptr);
  const XmlElement* field = form->FindChild("field");
  ASSERT_NE(field, nullptr);
  EXPECT_EQ(field->Attr("type"), "list-single");
  EXPECT_NE(field->FindChild("required"), nullptr);
  EXPECT_EQ(field->ChildText("value"), "deny");
  std::vector<std::pair<std::string, std::string>> options;
  for (const XmlNode& node : field->children()) {
    if (node.element == nullptr || node.element->name() != "option") continue;
    options.emplace_back(node.element->Attr("label"), node.element->ChildText("value"));
  }
  EXPECT_EQ(options, (std::vector<std::pair<std::string, std::string>>{{"Let it run", "approve"},
                                                                       {"Refuse it", "deny"}}));
}

TEST(CommandAnswerStanzaTest, RefusalsAreStanzaErrors) {
  struct Case {
    const char* error;
    const char* type;
    const char* condition;
  };
  for (const Case& c :
       {Case{"forbidden", "auth", "forbidden"}, Case{"item-not-found", "cancel", "item-not-found"},
        Case{"bad-request", "modify", "bad-request"},
        Case{"bad-sessionid", "modify", "bad-request"}}) {
    const XmlElement iq = CommandAnswerStanza(
        AnswerCommand{.to = J("a@b/c"), .iq_id = "x", .node = "ping", .error = c.error},
        J("agent.localhost"));
    EXPECT_EQ(iq.Attr("type"), "error") << c.error;
    const XmlElement* error = iq.FindChild("error");
    ASSERT_NE(error, nullptr) << c.error;
    EXPECT_EQ(error->Attr("type"), c.type) << c.error;
    EXPECT_NE(error->FindChild(c.condition, ns::kStanzaErrors), nullptr) << c.error;
    EXPECT_EQ(error->FindChild("bad-sessionid", ns::kCommands) != nullptr,
              std::string_view(c.error) == "bad-sessionid");
  }
}

}  // namespace
}  // namespace herald::xmpp
