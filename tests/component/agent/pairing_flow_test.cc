// Pairing through the agent: an admin's /pair makes a code, a stranger who sends it joins the
// allowlist through the control plane's path, once; other strangers stay out.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "component/agent/access_policy.h"
#include "component/agent/runtime_edit.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/agent/agent_fixture.h"

namespace herald::agent {
namespace {

using testing::AgentFixture;
using ::testing::HasSubstr;

class PairingFlowTest : public AgentFixture {
 protected:
  void SetUp() override {
    AgentFixture::SetUp();
    options_.admin_jids = {"dev@localhost"};
    options_.unallowed = RefusalMode::kReply;
    MakeAgent();
    // The control plane's side: records the change and puts it in force.
    services_->edits.apply = [this](RuntimeEdit edit, std::function<void(absl::Status)> done) {
      asked_.push_back(edit);
      options_.allowed_jids.push_back(edit.entry);
      agent_->SetPolicy(AccessPolicy::Create(options_).value());
      asio::post(io_, [done = std::move(done)] { done(absl::OkStatus()); });
    };
  }

  std::string PairingCode() {
    const size_t before = Messages("dev@localhost").size();
    Send("dev@localhost/laptop", "/pair");
    EXPECT_TRUE(WaitForMessages(before + 1, "dev@localhost"));
    const std::string text = Messages("dev@localhost").back().body;
    const size_t at = text.find("Pairing code: ");
    EXPECT_NE(at, std::string::npos) << text;
    return at == std::string::npos ? "" : text.substr(at + 14, 9);
  }

  std::vector<RuntimeEdit> asked_;
};

TEST_F(PairingFlowTest, ACodeLetsOneNewPersonInOnce) {
  const std::string code = PairingCode();
  ASSERT_EQ(code.size(), 9u);

  Send("carol@localhost/phone", "hello?");
  ASSERT_TRUE(WaitForMessages(1, "carol@localhost"));
  EXPECT_EQ(Messages("carol@localhost")[0].body,
            "Sorry, this service is not available to your address.");

  Send("carol@localhost/phone", code);
  ASSERT_TRUE(WaitForMessages(2, "carol@localhost"));
  EXPECT_EQ(Messages("carol@localhost")[1].body, "Welcome! You can talk to me now.");
  ASSERT_EQ(asked_.size(), 1u);
  EXPECT_EQ(asked_[0].kind, RuntimeEdit::Kind::kAllow);
  EXPECT_EQ(asked_[0].entry, "carol@localhost");

  model_->script.push_back({.text = "hi carol"});
  Send("carol@localhost/phone", "hi");
  ASSERT_TRUE(WaitForMessages(3, "carol@localhost"));
  EXPECT_EQ(Messages("carol@localhost")[2].body, "hi carol");

  // The code is spent: the next stranger who sends it stays out.
  Send("erin@localhost/phone", code);
  ASSERT_TRUE(WaitForMessages(1, "erin@localhost"));
  EXPECT_EQ(Messages("erin@localhost")[0].body,
            "Sorry, this service is not available to your address.");
  EXPECT_EQ(asked_.size(), 1u);
  EXPECT_EQ(model_->requests.size(), 1u) << "no stranger's message reached the model";
}

TEST_F(PairingFlowTest, OnlyAnAdminMakesCodes) {
  Send("alice@localhost/phone", "/pair");
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  EXPECT_THAT(Messages("alice@localhost")[0].body, ::testing::Not(HasSubstr("Pairing code")));
  EXPECT_EQ(services_->pairing.live(services_->clock()), 0u);
}

}  // namespace
}  // namespace herald::agent
