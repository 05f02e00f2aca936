// tests/component/xmpp/one_stanza.h
//
// OneStanza: parses one stanza the way the session receives it (inside a component stream), for
// tests of the units that read stanzas.
//
//   OneStanza iq("<iq type='get' id='1' from='a@b/c'><ping xmlns='urn:xmpp:ping'/></iq>");
//   responder.Answer(iq.get());
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "component/xmpp/stream_parser.h"
#include "component/xmpp/xml_element.h"
#include "gtest/gtest.h"

namespace herald::xmpp::testing {

class OneStanza : public StreamParser::Handler {
 public:
  explicit OneStanza(std::string_view xml) {
    StreamParser parser(StreamLimits{}, this);
    EXPECT_TRUE(parser
                    .Feed(absl::StrCat("<stream:stream xmlns='jabber:component:accept' "
                                       "xmlns:stream='http://etherx.jabber.org/streams'>",
                                       std::string(xml)))
                    .ok());
  }
  void OnStreamOpen(const XmlElement&, std::string_view) override {}
  void OnStanza(std::unique_ptr<XmlElement> stanza) override { stanza_ = std::move(stanza); }
  void OnStreamClose() override {}
  const XmlElement& get() const { return *stanza_; }

 private:
  std::unique_ptr<XmlElement> stanza_;
};

}  // namespace herald::xmpp::testing
