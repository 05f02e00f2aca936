// component/xmpp/xml_writer.h
//
// Serializes XmlElement trees to XML text, escaping text and attribute values so that any
// string Herald holds (a chat message, a JID, an error text) comes out as well-formed XML
// that parses back to the same string. An xmlns attribute is written only where an
// element's namespace differs from the namespace in scope. An attribute named "{uri}local"
// gets a prefix declared on its element; "xml:lang" is written as it is.
//
//   std::string out;
//   AppendXml(stanza, "jabber:component:accept", out);   // a top-level stanza on a stream
//   std::string text = ToXml(element);                  // standalone, namespaces declared
#pragma once

#include <string>
#include <string_view>

#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

// Appends `element` to `out`. `scope_xmlns` is the default namespace in scope where the
// element is written (the stream's content namespace for a top-level stanza).
void AppendXml(const XmlElement& element, std::string_view scope_xmlns, std::string& out);

// The XML text of `element` with its namespace declared.
std::string ToXml(const XmlElement& element);

// Both escapers keep what a parser hands back unchanged: characters XML 1.0 forbids (controls
// other than tab, newline and CR; U+FFFE, U+FFFF) are dropped, and a byte that is not part of
// well-formed UTF-8 becomes U+FFFD, so a broken string can never break the stream.
//
// Escapes &, <, > in character data, and CR (which a parser would turn into a newline) as a
// character reference.
void AppendEscapedText(std::string_view text, std::string& out);
// Escapes &, <, >, ", ' and the whitespace characters that attribute-value normalization
// would otherwise fold (tab, newline, carriage return) as character references.
void AppendEscapedAttribute(std::string_view value, std::string& out);

}  // namespace herald::xmpp
