// component/xmpp/stanza.h
//
// Builders for the stanzas the XMPP layer answers with: IQ results and stanza errors
// addressed back to the sender, and stream errors. Addresses are swapped from the request,
// so a reply always goes back to whoever asked, from whichever address was asked.
//
//   XmlElement pong = MakeIqResult(ping);
//   XmlElement error = MakeStanzaError(request, "cancel", "service-unavailable");
#pragma once

#include <string_view>

#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

// The one element child of `iq`, or null when it has none or several (RFC 6120 §8.2.3).
const XmlElement* IqPayload(const XmlElement& iq);

// <iq type='result'/> with the request's id, from = request's to, to = request's from.
XmlElement MakeIqResult(const XmlElement& request);

// The request's own element name (iq, message, presence) with type='error' and an
// <error type='...'><condition xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error>.
XmlElement MakeStanzaError(const XmlElement& request, std::string_view error_type,
                           std::string_view condition);

// <stream:error><condition xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error>
XmlElement MakeStreamError(std::string_view condition);

// The condition of a <stream:error/> or of a stanza's <error/> (the first child element in
// the error namespace), or "undefined-condition".
std::string_view ErrorCondition(const XmlElement& error);
// The <text/> of an error, or "".
std::string ErrorText(const XmlElement& error);

}  // namespace herald::xmpp
