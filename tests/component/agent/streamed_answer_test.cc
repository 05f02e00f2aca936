// StreamedAnswer with a hand-moved clock: when the first part goes out, how often it is
// corrected, what archives are told to keep, and how it ends (finished, stopped, or never
// streamed at all).
#include "component/agent/streamed_answer.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace herald::agent {
namespace {

class StreamedAnswerTest : public ::testing::Test {
 protected:
  StreamedAnswer& Make(bool may_stream = true) {
    answer_.emplace(
        xmpp::SendMessage{.to = xmpp::Jid::Parse("alice@localhost/phone").value(),
                          .thread = "t1",
                          .chat_state = "active"},
        StreamPacing{.first_part_after = absl::Seconds(1), .interval = absl::Milliseconds(700)},
        [this, may_stream] {
          ++asked_;
          return may_stream;
        },
        [this] { return now_; }, [this](xmpp::SendMessage part) { sent_.push_back(part); });
    return *answer_;
  }
  void Advance(absl::Duration by) { now_ += by; }

  absl::Time now_ = absl::FromUnixSeconds(1763800000);
  std::vector<xmpp::SendMessage> sent_;
  int asked_ = 0;
  std::optional<StreamedAnswer> answer_;
};

TEST(FreshMessageIdTest, IdsAreRandomAndRecognisable) {
  const std::string one = FreshMessageId();
  const std::string two = FreshMessageId();
  EXPECT_NE(one, two);
  EXPECT_TRUE(IsFreshMessageId(one));
  EXPECT_FALSE(IsFreshMessageId("herald-1"));
  EXPECT_FALSE(IsFreshMessageId("h17"));
  EXPECT_FALSE(IsFreshMessageId(""));
}

TEST_F(StreamedAnswerTest, TheFirstSentenceGoesOutThenCorrectionsAtMostOncePerInterval) {
  StreamedAnswer& answer = Make();
  answer.Append("Paris is");
  Advance(absl::Milliseconds(300));
  EXPECT_TRUE(sent_.empty());  // not a sentence yet
  answer.Append(" the capital of France. It");
  ASSERT_EQ(sent_.size(), 1u);
  const xmpp::SendMessage first = sent_[0];
  EXPECT_EQ(first.body, "Paris is the capital of France. It");
  EXPECT_EQ(first.thread, "t1");
  EXPECT_TRUE(first.id.starts_with("herald-")) << first.id;
  EXPECT_TRUE(first.replace_id.empty());
  EXPECT_FALSE(first.no_store);           // the archive keeps the first message
  EXPECT_TRUE(first.chat_state.empty());  // Herald is still writing

  Advance(absl::Milliseconds(300));
  answer.Append(" has");
  EXPECT_EQ(sent_.size(), 1u);  // within the interval
  Advance(absl::Milliseconds(400));
  answer.Append(" two million people.");
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_EQ(sent_[1].body, "Paris is the capital of France. It has two million people.");
  EXPECT_EQ(sent_[1].replace_id, first.id);
  EXPECT_NE(sent_[1].id, first.id);
  EXPECT_TRUE(sent_[1].no_store);  // an archive skips the corrections in between

  answer.Finish("Paris is the capital of France. It has two million people, give or take.");
  ASSERT_EQ(sent_.size(), 3u);
  EXPECT_EQ(sent_[2].body,
            "Paris is the capital of France. It has two million people, give or take.");
  EXPECT_EQ(sent_[2].replace_id, first.id);  // always the first message's id
  EXPECT_FALSE(sent_[2].no_store);           // the last correction is the one kept
  EXPECT_EQ(sent_[2].chat_state, "active");
  EXPECT_EQ(answer.corrections(), 2);
  EXPECT_EQ(asked_, 1);

  answer.Append(" more");
  answer.Finish("again");
  answer.Stop("[stopped]");
  EXPECT_EQ(sent_.size(), 3u);  // nothing after the end
}

TEST_F(StreamedAnswerTest, AnAnswerThatArrivesWholeAtOnceIsOneMessage) {
  StreamedAnswer& answer = Make();
  answer.Append("Paris is the capital of France.");
  Advance(absl::Milliseconds(100));
  answer.Append(" It has two million people.");
  EXPECT_TRUE(sent_.empty());  // sentences, but too soon to be worth a correction
  answer.Finish("Paris is the capital of France. It has two million people.");
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_TRUE(sent_[0].replace_id.empty());
  EXPECT_EQ(asked_, 0);  // nothing was due before the end
}

TEST_F(StreamedAnswerTest, WithoutASentenceTheFirstPartGoesOutAfterTheWait) {
  StreamedAnswer& answer = Make();
  answer.Append("a list without full stops");
  Advance(absl::Milliseconds(999));
  answer.Append(" one two");
  EXPECT_TRUE(sent_.empty());
  Advance(absl::Milliseconds(1));
  answer.Append(" three");
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].body, "a list without full stops one two three");
}

TEST_F(StreamedAnswerTest, AClientThatCannotShowCorrectionsGetsOneWholeMessage) {
  StreamedAnswer& answer = Make(/*may_stream=*/false);
  answer.Append("Paris is the capital of France. ");
  Advance(absl::Seconds(5));
  answer.ShowProgress("(running web_search…)");
  answer.Append("It is large.");
  EXPECT_TRUE(sent_.empty());
  answer.Finish("Paris is the capital of France. It is large.");
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].body, "Paris is the capital of France. It is large.");
  EXPECT_TRUE(sent_[0].id.starts_with("herald-"));  // an id Herald chose, for reactions
  EXPECT_TRUE(sent_[0].replace_id.empty());
  EXPECT_FALSE(sent_[0].no_store);
  EXPECT_EQ(sent_[0].chat_state, "active");
  EXPECT_EQ(asked_, 1);
}

TEST_F(StreamedAnswerTest, AToolsProgressShowsAtOnceAndTheTextReplacesIt) {
  StreamedAnswer& answer = Make();
  answer.ShowProgress("(running web_search…)");
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].body, "(running web_search…)");
  Advance(absl::Seconds(1));
  answer.Append("Found it: the answer is 42.");
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_EQ(sent_[1].body, "Found it: the answer is 42.");
  EXPECT_EQ(sent_[1].replace_id, sent_[0].id);
}

TEST_F(StreamedAnswerTest, StoppingCorrectsWhatWentOutToSaySo) {
  StreamedAnswer& answer = Make();
  answer.Append("The first sentence");
  Advance(absl::Milliseconds(300));
  answer.Append(" is here. And then");
  ASSERT_EQ(sent_.size(), 1u);
  answer.Stop("[stopped]");
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_EQ(sent_[1].body, "The first sentence is here. And then\n\n[stopped]");
  EXPECT_EQ(sent_[1].replace_id, sent_[0].id);
  EXPECT_FALSE(sent_[1].no_store);
  EXPECT_TRUE(sent_[1].chat_state.empty());
}

TEST_F(StreamedAnswerTest, StoppingBeforeAnythingWentOutSendsNothing) {
  StreamedAnswer& answer = Make();
  answer.Append("Hi");
  answer.Stop("[stopped]");
  EXPECT_TRUE(sent_.empty());
}

TEST_F(StreamedAnswerTest, PastTheStreamingLimitOnlyTheLastCorrectionCarriesTheRest) {
  StreamedAnswer& answer = Make();
  answer.Append("A long answer");
  Advance(absl::Milliseconds(300));
  answer.Append(" begins here. ");
  ASSERT_EQ(sent_.size(), 1u);
  for (int i = 0; i < 100; ++i) {
    Advance(absl::Seconds(1));
    answer.Append(std::string(100, 'x'));
  }
  for (const xmpp::SendMessage& part : sent_) {
    EXPECT_LE(part.body.size(), StreamedAnswer::kMaxStreamedBytes);
  }
  const size_t before = sent_.size();
  answer.Finish(std::string(10000, 'y'));
  ASSERT_EQ(sent_.size(), before + 1);
  EXPECT_EQ(sent_.back().body.size(), 10000u);
  EXPECT_EQ(sent_.back().replace_id, sent_[0].id);
}

TEST_F(StreamedAnswerTest, EveryAnswerHasItsOwnFirstId) {
  for (int i = 0; i < 2; ++i) {
    StreamedAnswer& answer = Make();
    answer.Append("An answer is ");
    Advance(absl::Milliseconds(300));
    answer.Append("being written. ");
  }
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_NE(sent_[0].id, sent_[1].id);
}

}  // namespace
}  // namespace herald::agent
