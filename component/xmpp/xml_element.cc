#include "component/xmpp/xml_element.h"

#include <utility>

namespace herald::xmpp {

XmlElement::XmlElement(std::string name, std::string xmlns)
    : name_(std::move(name)), xmlns_(std::move(xmlns)) {}

XmlElement XmlElement::Clone() const {
  XmlElement copy(name_, xmlns_);
  copy.attributes_ = attributes_;
  copy.children_.reserve(children_.size());
  for (const XmlNode& node : children_) {
    XmlNode& added = copy.children_.emplace_back();
    if (node.element != nullptr) {
      added.element = std::make_unique<XmlElement>(node.element->Clone());
    } else {
      added.text = node.text;
    }
  }
  return copy;
}

std::string_view XmlElement::Attr(std::string_view name) const {
  for (const XmlAttribute& attribute : attributes_) {
    if (attribute.name == name) return attribute.value;
  }
  return {};
}

bool XmlElement::HasAttr(std::string_view name) const {
  for (const XmlAttribute& attribute : attributes_) {
    if (attribute.name == name) return true;
  }
  return false;
}

XmlElement& XmlElement::SetAttr(std::string_view name, std::string_view value) {
  for (XmlAttribute& attribute : attributes_) {
    if (attribute.name == name) {
      attribute.value.assign(value);
      return *this;
    }
  }
  attributes_.push_back(XmlAttribute{std::string(name), std::string(value)});
  return *this;
}

void XmlElement::RemoveAttr(std::string_view name) {
  for (auto it = attributes_.begin(); it != attributes_.end(); ++it) {
    if (it->name == name) {
      attributes_.erase(it);
      return;
    }
  }
}

XmlElement& XmlElement::AddChild(XmlElement child) {
  XmlNode& node = children_.emplace_back();
  node.element = std::make_unique<XmlElement>(std::move(child));
  return *node.element;
}

XmlElement& XmlElement::AddChild(std::string name, std::string xmlns) {
  XmlNode& node = children_.emplace_back();
  node.element = std::make_unique<XmlElement>(std::move(name), std::move(xmlns));
  return *node.element;
}

XmlElement& XmlElement::AddText(std::string_view text) {
  if (text.empty()) return *this;
  if (!children_.empty() && children_.back().element == nullptr) {
    children_.back().text.append(text);
  } else {
    children_.emplace_back().text.assign(text);
  }
  return *this;
}

const XmlElement* XmlElement::FindChild(std::string_view name) const {
  return FindChild(name, xmlns_);
}

// A child with an empty namespace is in its parent's namespace, so it matches a query for the
// parent's namespace.
const XmlElement* XmlElement::FindChild(std::string_view name, std::string_view xmlns) const {
  for (const XmlNode& node : children_) {
    const XmlElement* child = node.element.get();
    if (child == nullptr || child->name_ != name) continue;
    const std::string& child_xmlns = child->xmlns_.empty() ? xmlns_ : child->xmlns_;
    if (child_xmlns == xmlns) return child;
  }
  return nullptr;
}

const XmlElement* XmlElement::FindChildByNamespace(std::string_view xmlns) const {
  for (const XmlNode& node : children_) {
    const XmlElement* child = node.element.get();
    if (child == nullptr) continue;
    const std::string& child_xmlns = child->xmlns_.empty() ? xmlns_ : child->xmlns_;
    if (child_xmlns == xmlns) return child;
  }
  return nullptr;
}

const XmlElement* XmlElement::FirstChildElement() const {
  for (const XmlNode& node : children_) {
    if (node.element != nullptr) return node.element.get();
  }
  return nullptr;
}

std::string XmlElement::Text() const {
  std::string text;
  for (const XmlNode& node : children_) {
    if (node.element == nullptr) text.append(node.text);
  }
  return text;
}

std::string XmlElement::ChildText(std::string_view name) const {
  const XmlElement* child = FindChild(name);
  return child == nullptr ? std::string() : child->Text();
}

}  // namespace herald::xmpp
