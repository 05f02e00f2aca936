// component/xmpp/upload_service.h
//
// UploadServiceDiscovery finds the XMPP server's XEP-0363 HTTP File Upload service, where
// Herald will ask for the slots of the files it sends. It asks the server's domain for its
// disco#info and its disco#items, then each item (a bare domain without a node; the first
// kMaxItems) for its disco#info. The service is the first of them whose features include
// urn:xmpp:http:upload:0, the domain itself before the items, the items in the order the
// server listed them; the largest file it takes is the max-file-size of the XEP-0128 form
// (FORM_TYPE urn:xmpp:http:upload:0) in the same answer, when there is one. Only the entity
// asked may answer (ids are guessable).
//
// It is pure, like MucServices: the session sends the queries it asks for and hands the
// answers in. XmppSession runs it on every stream that comes up, logs the outcome and reports
// a service found as an UploadServiceFound event (events.h).
//
//   UploadServiceDiscovery upload;
//   for (XmlElement& query : upload.Start("localhost", next_id)) Send(std::move(query));
//   if (upload.Answers(iq)) {                        // each answer, until settled()
//     for (XmlElement& query : upload.OnAnswer(iq, next_id)) Send(std::move(query));
//     if (upload.settled() && upload.found()) Emit(*upload.found());
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "component/xmpp/events.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

// XEP-0363 §4: <iq type='get'><request xmlns='urn:xmpp:http:upload:0' filename size
// content-type/></iq> for `request`, with IQ id `id`.
XmlElement UploadSlotRequest(const RequestUploadSlot& request, std::string_view id);

// The UploadSlot `iq` (a result or an error from `service`) answers, for `request_id`; nullopt
// when `iq` comes from anyone else. A result without http(s) PUT and GET URLs is "bad-slot";
// PUT headers other than Authorization, Cookie and Expires are dropped (XEP-0363 §5).
std::optional<UploadSlot> TranslateUploadSlot(const XmlElement& iq, const Jid& service,
                                              const std::string& request_id);

class UploadServiceDiscovery {
 public:
  // A server announcing more items than this is asked about the first ones only.
  static constexpr size_t kMaxItems = 64;

  // Starts over (a new stream): forgets what was found and returns the queries to send, the
  // disco#info and disco#items of `server_domain`, with ids from `next_id`. None, and settled
  // with nothing found, when `server_domain` is not a domain.
  std::vector<XmlElement> Start(std::string_view server_domain,
                                const std::function<std::string()>& next_id);

  // True once the service is known, or known to be absent, or discovery was given up.
  bool settled() const { return settled_; }

  // True when `iq` (a result or an error) answers a query of the discovery in progress.
  bool Answers(const XmlElement& iq) const;

  // Handles an answer to one of its queries: the disco#info queries to send next (ids from
  // `next_id`). Settles as soon as the first service in order is known.
  std::vector<XmlElement> OnAnswer(const XmlElement& iq,
                                   const std::function<std::string()>& next_id);

  // Stops waiting for the queries still unanswered: the first service among the answers is
  // the one.
  void GiveUp();

  // The service once settled; nullopt while discovering and when there is none.
  const std::optional<UploadServiceFound>& found() const { return found_; }

 private:
  enum class Verdict { kPending, kNotUpload, kUpload };
  struct Candidate {
    Jid jid;         // a domain
    std::string id;  // of its disco#info query
    Verdict verdict = Verdict::kPending;
    std::optional<uint64_t> max_file_size;
  };

  void MaybeSettle();
  void Settle(const Candidate* service);

  std::string server_domain_;
  std::string items_id_;               // "" once answered
  std::vector<Candidate> candidates_;  // the domain first, then its items in order
  bool settled_ = false;
  std::optional<UploadServiceFound> found_;
};

// "upload.localhost (max 10 MiB)", for the log.
std::string DescribeUploadService(const UploadServiceFound& service);

}  // namespace herald::xmpp
