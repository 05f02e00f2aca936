// component/xmpp/xml_element.h
//
// XmlElement is Herald's stanza tree: one XML element with its resolved namespace, its
// attributes in document order, and its children (elements and text, in order). The stream
// parser builds one per top-level stanza; the agent and the XMPP layer build their own and
// hand them to the writer.
//
// Namespaces are resolved, never prefixed: xmlns() is the namespace URI the element is in.
// An element built by Herald may leave xmlns() empty, meaning "the same as my parent" (or,
// for a top-level stanza, the stream's content namespace); the writer then writes no xmlns
// attribute for it. (So an element in no namespace inside one that has a namespace, written
// with xmlns='', cannot be told apart from one that inherits; XMPP has no use for those.)
// Attribute names are local names, except "xml:lang"-style names in the XML namespace, and
// "{uri}local" for the rare attribute in any other namespace.
//
//   XmlElement message("message");
//   message.SetAttr("to", "alice@localhost").SetAttr("type", "chat");
//   message.AddChild("body").AddText("pong");
//   const XmlElement* body = message.FindChild("body");   // same namespace as <message/>
//   std::string text = body->Text();                        // "pong"
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace herald::xmpp {

struct XmlAttribute {
  std::string name;
  std::string value;
};

class XmlElement;

// A child of an element: either an element (element != nullptr) or a run of text.
struct XmlNode {
  std::unique_ptr<XmlElement> element;
  std::string text;
};

class XmlElement {
 public:
  explicit XmlElement(std::string name, std::string xmlns = "");

  XmlElement(XmlElement&&) noexcept = default;
  XmlElement& operator=(XmlElement&&) noexcept = default;
  XmlElement(const XmlElement&) = delete;
  XmlElement& operator=(const XmlElement&) = delete;

  // A deep copy; copies are explicit because stanzas are moved along the hot path.
  XmlElement Clone() const;

  const std::string& name() const { return name_; }
  const std::string& xmlns() const { return xmlns_; }
  void set_xmlns(std::string xmlns) { xmlns_ = std::move(xmlns); }

  // The attribute's value, or "" when absent.
  std::string_view Attr(std::string_view name) const;
  bool HasAttr(std::string_view name) const;
  // Replaces the value when the attribute exists, appends it otherwise.
  XmlElement& SetAttr(std::string_view name, std::string_view value);
  void RemoveAttr(std::string_view name);
  const std::vector<XmlAttribute>& attributes() const { return attributes_; }

  // Appends a child element and returns it. A child built with an empty namespace is in its
  // parent's namespace.
  XmlElement& AddChild(XmlElement child);
  XmlElement& AddChild(std::string name, std::string xmlns = "");
  // Appends text, merging it with a text node that ends the children.
  XmlElement& AddText(std::string_view text);

  const std::vector<XmlNode>& children() const { return children_; }

  // The first child element named `name` in this element's own namespace (e.g. <body/> of a
  // <message/>); a child with an empty namespace counts as being in this namespace.
  const XmlElement* FindChild(std::string_view name) const;
  // The first child element named `name` in namespace `xmlns`.
  const XmlElement* FindChild(std::string_view name, std::string_view xmlns) const;
  // The first child element in namespace `xmlns`, whatever its name (e.g. an IQ's payload).
  const XmlElement* FindChildByNamespace(std::string_view xmlns) const;
  // The first child element of any name and namespace.
  const XmlElement* FirstChildElement() const;

  // The concatenated text of this element's direct text children.
  std::string Text() const;
  // Text() of FindChild(name), or "" when there is no such child.
  std::string ChildText(std::string_view name) const;

 private:
  // The stream parser appends attributes without SetAttr's duplicate search: expat has already
  // refused duplicates, and a linear search per attribute would be quadratic on hostile input.
  friend class XmlTreeBuilder;

  std::string name_;
  std::string xmlns_;
  std::vector<XmlAttribute> attributes_;
  std::vector<XmlNode> children_;
};

}  // namespace herald::xmpp
