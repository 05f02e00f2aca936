#include "component/xmpp/stream_parser.h"

#include <expat.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

// Reparse deferral (expat 2.6.0, and backported to Debian 12's 2.5.0) holds back a token
// until enough new bytes arrive, which would delay a stanza's delivery. Whether the function
// exists depends on the patch level, not on XML_MAJOR/MINOR/MICRO_VERSION, so it is declared
// weak here and looked for at run time: its address is null when the linked libexpat does not
// export it, and such an expat never defers, so there is nothing to switch off.
extern "C" XMLPARSEAPI(XML_Bool) XML_SetReparseDeferralEnabled(XML_Parser parser, XML_Bool enabled)
    __attribute__((weak));

namespace herald::xmpp {

// Appends parsed attributes without XmlElement::SetAttr's duplicate search (a friend of
// XmlElement): expat has already refused duplicates.
class XmlTreeBuilder {
 public:
  static void ReserveAttributes(XmlElement& element, size_t count) {
    element.attributes_.reserve(count);
  }
  static void AppendAttribute(XmlElement& element, std::string name, const char* value) {
    element.attributes_.push_back(XmlAttribute{std::move(name), value});
  }
};

namespace {

// Expat joins a namespace URI and a local name with this separator. U+0001 is not an XML 1.0
// character, so it can be in neither; expat also refuses a URI that contains it.
constexpr char kNamespaceSeparator = '\x01';
constexpr std::string_view kStreamsNamespace = "http://etherx.jabber.org/streams";
constexpr std::string_view kXmlNamespace = "http://www.w3.org/XML/1998/namespace";

// Expat is fed at most this much per call, so that the size cap is checked between slices and
// a stanza never grows far past the cap in memory.
constexpr size_t kSliceBytes = 64 * 1024;

// With reparse deferral off, expat rescans an unfinished token from its start on every call;
// a peer trickling a huge start tag a few bytes at a time would make that quadratic. Once the
// unfinished part is this large, bytes that cannot finish a tag (no '>') are held back until
// they are at least half as many as the unfinished part, which keeps the rescanning linear.
// No stanza is delayed by this: every element ends with '>'.
constexpr int64_t kHoldThreshold = 4 * 1024;

struct SplitName {
  std::string_view uri;
  std::string_view local;
};

SplitName Split(const XML_Char* name) {
  const char* separator = std::strchr(name, kNamespaceSeparator);
  if (separator == nullptr) return {{}, name};
  return {std::string_view(name, separator - name), separator + 1};
}

// "local" for an attribute in no namespace, "xml:local" in the XML namespace, "{uri}local" in
// any other.
std::string AttributeName(const XML_Char* raw) {
  SplitName name = Split(raw);
  if (name.uri.empty()) return std::string(name.local);
  std::string out;
  if (name.uri == kXmlNamespace) {
    out.reserve(4 + name.local.size());
    out.append("xml:").append(name.local);
  } else {
    out.reserve(2 + name.uri.size() + name.local.size());
    out.append("{").append(name.uri).append("}").append(name.local);
  }
  return out;
}

bool IsXmlWhitespace(std::string_view text) {
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

}  // namespace

class StreamParser::Impl {
 public:
  Impl(const StreamLimits& limits, Handler* handler) : limits_(limits), handler_(handler) {
    parser_ = XML_ParserCreateNS("UTF-8", kNamespaceSeparator);
    if (parser_ != nullptr) Configure();
    stack_.reserve(16);
  }

  ~Impl() {
    if (parser_ != nullptr) XML_ParserFree(parser_);
  }

  absl::Status Feed(std::string_view bytes) {
    if (in_parse_) {
      return absl::FailedPreconditionError("StreamParser::Feed called from its own handler");
    }
    if (!error_.ok()) return error_;
    if (closed_) {
      CheckAfterClose(bytes);
      return error_;
    }
    if (parser_ == nullptr) {
      Fail("resource-constraint", absl::ResourceExhaustedError("cannot create an XML parser"));
      return error_;
    }
    if (bytes.empty()) return error_;

    const int64_t unfinished = received_ - last_event_end_;
    if (unfinished >= kHoldThreshold &&
        static_cast<int64_t>(held_.size() + bytes.size()) < unfinished / 2 &&
        std::memchr(bytes.data(), '>', bytes.size()) == nullptr) {
      held_.append(bytes);
      CheckSize(received_ + static_cast<int64_t>(held_.size()));
      return error_;
    }

    std::string_view input = bytes;
    if (!held_.empty()) {
      held_.append(bytes);
      feeding_.swap(held_);
      input = feeding_;
    }
    while (!input.empty()) {
      if (received_ == 0 && !CheckEncoding(input)) break;
      const size_t slice = std::min(input.size(), kSliceBytes);
      const int64_t base = received_;
      received_ += static_cast<int64_t>(slice);
      in_parse_ = true;
      const XML_Status status =
          XML_Parse(parser_, input.data(), static_cast<int>(slice), XML_FALSE);
      in_parse_ = false;
      if (reset_requested_) {
        // A handler asked for a new stream: expat stopped right after that element; the rest
        // of the input belongs to the new stream.
        const int64_t consumed = std::clamp<int64_t>(reset_offset_ - base, 0, slice);
        input.remove_prefix(static_cast<size_t>(consumed));
        Restart();
        continue;
      }
      if (closed_) {
        // Expat stopped at the closing tag; the rest is checked here, the same way however
        // the bytes were cut.
        input.remove_prefix(
            static_cast<size_t>(std::clamp<int64_t>(close_offset_ - base, 0, slice)));
        CheckAfterClose(input);
        break;
      }
      if (status != XML_STATUS_OK) {
        if (error_.ok()) FailFromExpat();
        break;
      }
      input.remove_prefix(slice);
      if (!CheckSize(received_)) break;
    }
    feeding_.clear();
    return error_;
  }

  void Reset() {
    if (in_parse_) {
      // Expat must not be reset or freed inside its own callback: stop it here, and Feed()
      // restarts it once XML_Parse has returned.
      if (!reset_requested_) {
        reset_requested_ = true;
        reset_offset_ = callback_event_end_;
        stopped_ = true;
        XML_StopParser(parser_, XML_FALSE);
      }
      return;
    }
    held_.clear();
    Restart();
  }

  std::string_view error_condition() const { return condition_; }

 private:
  void Configure() {
    XML_SetUserData(parser_, this);
    XML_SetElementHandler(parser_, &Impl::OnStartElement, &Impl::OnEndElement);
    XML_SetCharacterDataHandler(parser_, &Impl::OnCharacterData);
    XML_SetStartNamespaceDeclHandler(parser_, &Impl::OnStartNamespace);
    XML_SetStartDoctypeDeclHandler(parser_, &Impl::OnDoctype);
    XML_SetEntityDeclHandler(parser_, &Impl::OnEntityDecl);
    XML_SetCommentHandler(parser_, &Impl::OnComment);
    XML_SetProcessingInstructionHandler(parser_, &Impl::OnProcessingInstruction);
    XML_SetParamEntityParsing(parser_, XML_PARAM_ENTITY_PARSING_NEVER);
    if (&XML_SetReparseDeferralEnabled != nullptr) {
      XML_SetReparseDeferralEnabled(parser_, XML_FALSE);
    }
  }

  // Forgets the stream; reuses expat's buffers rather than allocating a new parser.
  void Restart() {
    depth_ = 0;
    stack_.clear();
    stanza_.reset();
    skipping_ = false;
    skipped_head_.reset();
    closed_ = false;
    content_xmlns_.clear();
    received_ = 0;
    last_event_end_ = 0;
    stanza_start_ = 0;
    callback_event_end_ = 0;
    stopped_ = false;
    reset_requested_ = false;
    reset_offset_ = 0;
    error_ = absl::OkStatus();
    condition_ = {};
    if (parser_ == nullptr) {
      parser_ = XML_ParserCreateNS("UTF-8", kNamespaceSeparator);
      if (parser_ == nullptr) return;  // Feed() reports it
    } else {
      XML_ParserReset(parser_, "UTF-8");
    }
    Configure();
  }

  // Records the first failure; the stream accepts nothing more until Reset().
  void Fail(std::string_view condition, absl::Status status) {
    if (!error_.ok()) return;
    condition_ = condition;
    error_ = std::move(status);
    stopped_ = true;
  }

  // Fail() from inside an expat callback, which also stops expat at the current token.
  void Stop(std::string_view condition, std::string_view what, bool limit = false) {
    if (stopped_) return;
    std::string message = absl::StrCat(
        "XMPP stream ", std::string(condition), ": ", std::string(what), " (line ",
        XML_GetCurrentLineNumber(parser_), ", column ", XML_GetCurrentColumnNumber(parser_), ")");
    Fail(condition,
         limit ? absl::ResourceExhaustedError(message) : absl::InvalidArgumentError(message));
    XML_StopParser(parser_, XML_FALSE);
  }

  void FailFromExpat() {
    const XML_Error code = XML_GetErrorCode(parser_);
    const std::string_view condition =
        code == XML_ERROR_NO_MEMORY ? "resource-constraint" : "not-well-formed";
    Fail(condition, absl::InvalidArgumentError(absl::StrCat(
                        "XMPP stream ", std::string(condition), ": ", XML_ErrorString(code),
                        " (line ", XML_GetCurrentLineNumber(parser_), ", column ",
                        XML_GetCurrentColumnNumber(parser_), ")")));
  }

  // After the stream's closing tag only whitespace may follow (RFC 6120 §4.4: nothing is sent
  // after it); anything else is not-well-formed.
  void CheckAfterClose(std::string_view bytes) {
    if (IsXmlWhitespace(bytes)) return;
    Fail("not-well-formed",
         absl::InvalidArgumentError(
             "XMPP stream not-well-formed: data after the stream's closing tag"));
  }

  // Even with UTF-8 forced, expat switches to UTF-16 when a stream's first two bytes are a
  // UTF-16 byte order mark or contain a zero byte, and it decides on the first byte alone when
  // that is all it has; so the first two bytes go to expat together, and neither pattern is
  // accepted (none is valid UTF-8 anyway). False when `input` was held back or refused.
  bool CheckEncoding(std::string_view input) {
    if (input.size() < 2) {
      held_.append(input);
      return false;
    }
    const auto b0 = static_cast<uint8_t>(input[0]);
    const auto b1 = static_cast<uint8_t>(input[1]);
    if (b0 == 0 || b1 == 0 || (b0 == 0xFE && b1 == 0xFF) || (b0 == 0xFF && b1 == 0xFE)) {
      Fail("unsupported-encoding",
           absl::InvalidArgumentError("XMPP stream unsupported-encoding: the stream is not UTF-8"));
      return false;
    }
    return true;
  }

  // `end` is how many bytes of this stream have arrived. What lies after the last complete
  // token is one unfinished token (a tag expat holds whole), refused once it exceeds the cap:
  // it could not be skipped without holding it. Inside a stanza, one that has grown past the
  // cap is skipped from here on, and a skipped one that goes on past its own cap is refused.
  bool CheckSize(int64_t end) {
    if (end - last_event_end_ > static_cast<int64_t>(limits_.max_stanza_bytes)) {
      Fail("policy-violation",
           absl::ResourceExhaustedError(absl::StrCat(
               "XMPP stream policy-violation: ", depth_ >= 2 ? "a tag" : "a top-level element",
               " larger than ", limits_.max_stanza_bytes, " bytes")));
      return false;
    }
    if (depth_ < 2) return true;
    if (!skipping_ && end - stanza_start_ > static_cast<int64_t>(limits_.max_stanza_bytes)) {
      if (!BeginSkipping()) {
        Fail("policy-violation", absl::ResourceExhaustedError(absl::StrCat(
                                     "XMPP stream policy-violation: stanza larger than ",
                                     limits_.max_stanza_bytes, " bytes")));
        return false;
      }
    }
    if (skipping_ && SkippedTooFar(end)) {
      Fail("policy-violation", absl::ResourceExhaustedError(SkippedTooFarMessage()));
      return false;
    }
    return true;
  }

  // Stops building the current stanza and keeps only its top-level tag; false when skipping
  // is off (max_skipped_stanza_bytes = 0).
  bool BeginSkipping() {
    if (limits_.max_skipped_stanza_bytes == 0) return false;
    if (skipping_) return true;
    skipping_ = true;
    skipped_head_ = std::make_unique<XmlElement>(stanza_->name(), stanza_->xmlns());
    XmlTreeBuilder::ReserveAttributes(*skipped_head_, stanza_->attributes().size());
    for (const XmlAttribute& attribute : stanza_->attributes()) {
      XmlTreeBuilder::AppendAttribute(*skipped_head_, attribute.name, attribute.value.c_str());
    }
    stanza_.reset();
    stack_.clear();
    return true;
  }

  bool SkippedTooFar(int64_t end) const {
    return end - stanza_start_ > static_cast<int64_t>(limits_.max_skipped_stanza_bytes);
  }
  std::string SkippedTooFarMessage() const {
    return absl::StrCat("XMPP stream policy-violation: stanza larger than ",
                        limits_.max_skipped_stanza_bytes, " bytes, too large even to skip");
  }

  int64_t EventEnd() const {
    return static_cast<int64_t>(XML_GetCurrentByteIndex(parser_)) +
           XML_GetCurrentByteCount(parser_);
  }

  // True when the stanza, up to `end`, is over the cap: it is skipped from now on (or the
  // stream stopped when skipping is off).
  bool OverSize(int64_t end) {
    if (end - stanza_start_ <= static_cast<int64_t>(limits_.max_stanza_bytes)) return false;
    if (!BeginSkipping()) {
      Stop("policy-violation",
           absl::StrCat("stanza larger than ", limits_.max_stanza_bytes, " bytes"),
           /*limit=*/true);
    }
    return true;
  }

  // While skipping: false (and the stream stopped) once the stanza is past its skipping cap.
  bool SkipGoesOn(int64_t end) {
    if (!SkippedTooFar(end)) return true;
    Stop("policy-violation",
         absl::StrCat("stanza larger than ", limits_.max_skipped_stanza_bytes,
                      " bytes, too large even to skip"),
         /*limit=*/true);
    return false;
  }

  // A single tag is one expat token, held whole: one over the cap cannot be skipped.
  bool TagTooLarge() {
    if (XML_GetCurrentByteCount(parser_) <= static_cast<int>(limits_.max_stanza_bytes)) {
      return false;
    }
    Stop("policy-violation", absl::StrCat("a tag larger than ", limits_.max_stanza_bytes, " bytes"),
         /*limit=*/true);
    return true;
  }

  void StartElement(const XML_Char* raw_name, const XML_Char** atts) {
    if (stopped_) return;
    const SplitName name = Split(raw_name);
    if (depth_ == 0) {
      StartStream(name, atts);
      return;
    }
    ++depth_;
    if (TagTooLarge()) return;
    XmlElement* element;
    if (depth_ == 2) {
      stanza_start_ = static_cast<int64_t>(XML_GetCurrentByteIndex(parser_));
      last_event_end_ = EventEnd();
      stanza_ = std::make_unique<XmlElement>(std::string(name.local), std::string(name.uri));
      element = stanza_.get();
    } else {
      const int64_t end = EventEnd();
      if (skipping_) {
        if (SkipGoesOn(end)) last_event_end_ = end;
        return;
      }
      if (depth_ - 1 > limits_.max_depth) {
        if (!BeginSkipping()) {
          Stop("policy-violation",
               absl::StrCat("stanza nested deeper than ", limits_.max_depth, " elements"),
               /*limit=*/true);
          return;
        }
        if (SkipGoesOn(end)) last_event_end_ = end;
        return;
      }
      if (OverSize(end)) {
        if (skipping_ && SkipGoesOn(end)) last_event_end_ = end;
        return;
      }
      last_event_end_ = end;
      element = &stack_.back()->AddChild(std::string(name.local), std::string(name.uri));
    }
    stack_.push_back(element);
    XmlTreeBuilder::ReserveAttributes(*element, XML_GetSpecifiedAttributeCount(parser_) / 2);
    for (int i = 0; atts[i] != nullptr; i += 2) {
      XmlTreeBuilder::AppendAttribute(*element, AttributeName(atts[i]), atts[i + 1]);
    }
  }

  void StartStream(const SplitName& name, const XML_Char** atts) {
    if (name.uri != kStreamsNamespace || name.local != "stream") {
      Stop("invalid-namespace",
           "the stream does not open with <stream:stream> in " + std::string(kStreamsNamespace));
      return;
    }
    // Everything up to here (XML declaration, whitespace, the header) counts as one top-level
    // element: expat reports none of it until the header is complete.
    if (EventEnd() > static_cast<int64_t>(limits_.max_stanza_bytes)) {
      Stop("policy-violation",
           absl::StrCat("stream header larger than ", limits_.max_stanza_bytes, " bytes"),
           /*limit=*/true);
      return;
    }
    // Namespace declarations inside stanzas are expat's business from here on.
    XML_SetStartNamespaceDeclHandler(parser_, nullptr);
    XmlElement header(std::string(name.local), std::string(name.uri));
    for (int i = 0; atts[i] != nullptr; i += 2) {
      XmlTreeBuilder::AppendAttribute(header, AttributeName(atts[i]), atts[i + 1]);
    }
    depth_ = 1;
    last_event_end_ = callback_event_end_ = EventEnd();
    handler_->OnStreamOpen(header, content_xmlns_);
  }

  void EndElement() {
    if (stopped_) return;
    const int64_t end = EventEnd();
    if (depth_ == 1) {
      depth_ = 0;
      last_event_end_ = callback_event_end_ = end;
      handler_->OnStreamClose();
      if (!reset_requested_) {
        // Expat alone would judge what follows the close differently depending on how the
        // bytes were cut; Feed() checks it itself.
        closed_ = true;
        close_offset_ = end;
        stopped_ = true;
        XML_StopParser(parser_, XML_FALSE);
      }
      return;
    }
    // The end tag itself may take the stanza over the cap; then it is skipped after all.
    if (!skipping_ && depth_ == 2 && OverSize(end) && !skipping_) return;  // skipping is off
    if (skipping_) {
      if (!SkipGoesOn(end)) return;
      --depth_;
      last_event_end_ = end;
      if (depth_ > 1) return;
      skipping_ = false;
      callback_event_end_ = end;
      std::unique_ptr<XmlElement> head = std::move(skipped_head_);
      handler_->OnOversizedStanza(*head, static_cast<size_t>(end - stanza_start_));
      return;
    }
    if (depth_ == 2) {
      depth_ = 1;
      stack_.clear();
      last_event_end_ = callback_event_end_ = end;
      handler_->OnStanza(std::move(stanza_));
      return;
    }
    --depth_;
    stack_.pop_back();
    last_event_end_ = end;
  }

  void CharacterData(const XML_Char* data, int length) {
    if (stopped_) return;
    const int64_t end = EventEnd();
    const std::string_view text(data, static_cast<size_t>(length));
    if (depth_ >= 2) {
      if (skipping_ || OverSize(end)) {
        if (skipping_ && SkipGoesOn(end)) last_event_end_ = end;
        return;
      }
      last_event_end_ = end;
      stack_.back()->AddText(text);
      return;
    }
    // Between stanzas only whitespace (keepalives) may appear.
    if (!IsXmlWhitespace(text)) {
      Stop("not-well-formed", "text between stanzas");
      return;
    }
    last_event_end_ = end;
  }

  static Impl* Self(void* user_data) { return static_cast<Impl*>(user_data); }

  static void XMLCALL OnStartElement(void* user_data, const XML_Char* name, const XML_Char** atts) {
    Self(user_data)->StartElement(name, atts);
  }
  static void XMLCALL OnEndElement(void* user_data, const XML_Char*) {
    Self(user_data)->EndElement();
  }
  static void XMLCALL OnCharacterData(void* user_data, const XML_Char* data, int length) {
    Self(user_data)->CharacterData(data, length);
  }
  // Only installed until the stream header: it learns the stream's content namespace.
  static void XMLCALL OnStartNamespace(void* user_data, const XML_Char* prefix,
                                       const XML_Char* uri) {
    Impl* self = Self(user_data);
    if (self->depth_ == 0 && prefix == nullptr) self->content_xmlns_ = uri == nullptr ? "" : uri;
  }
  // A DOCTYPE is refused as soon as its name is read, before any entity it declares could be
  // expanded (billion laughs).
  static void XMLCALL OnDoctype(void* user_data, const XML_Char*, const XML_Char*, const XML_Char*,
                                int) {
    Self(user_data)->Stop("restricted-xml", "a DOCTYPE declaration");
  }
  static void XMLCALL OnEntityDecl(void* user_data, const XML_Char*, int, const XML_Char*, int,
                                   const XML_Char*, const XML_Char*, const XML_Char*,
                                   const XML_Char*) {
    Self(user_data)->Stop("restricted-xml", "an entity declaration");
  }
  static void XMLCALL OnComment(void* user_data, const XML_Char*) {
    Self(user_data)->Stop("restricted-xml", "a comment");
  }
  static void XMLCALL OnProcessingInstruction(void* user_data, const XML_Char*, const XML_Char*) {
    Self(user_data)->Stop("restricted-xml", "a processing instruction");
  }

  const StreamLimits limits_;
  Handler* const handler_;
  XML_Parser parser_ = nullptr;

  // Open elements, counting <stream:stream>: 1 between stanzas, 2 inside a stanza.
  int depth_ = 0;
  std::vector<XmlElement*> stack_;  // the open elements of stanza_, innermost last
  std::unique_ptr<XmlElement> stanza_;
  // A stanza over a limit is read to its end without being built (see StreamLimits).
  bool skipping_ = false;
  std::unique_ptr<XmlElement> skipped_head_;  // its top-level tag, for OnOversizedStanza
  bool closed_ = false;                       // the peer closed the stream
  int64_t close_offset_ = 0;                  // where its closing tag ended
  std::string content_xmlns_;

  // Byte positions in this stream (as expat counts them from the stream's first byte).
  int64_t received_ = 0;            // handed to expat
  int64_t last_event_end_ = 0;      // end of the last token a handler saw
  int64_t stanza_start_ = 0;        // the current stanza's '<'
  int64_t callback_event_end_ = 0;  // end of the token whose callback is running

  std::string held_;     // bytes held back from expat (see kHoldThreshold)
  std::string feeding_;  // held bytes being parsed, kept to reuse the allocation

  bool in_parse_ = false;
  bool stopped_ = false;  // expat was stopped: ignore its remaining callbacks
  bool reset_requested_ = false;
  int64_t reset_offset_ = 0;

  absl::Status error_;
  std::string_view condition_;  // always a string literal
};

StreamParser::StreamParser(const StreamLimits& limits, Handler* handler)
    : impl_(std::make_unique<Impl>(limits, handler)) {}

StreamParser::~StreamParser() = default;

absl::Status StreamParser::Feed(std::string_view bytes) { return impl_->Feed(bytes); }

void StreamParser::Reset() { impl_->Reset(); }

std::string_view StreamParser::error_condition() const { return impl_->error_condition(); }

}  // namespace herald::xmpp
