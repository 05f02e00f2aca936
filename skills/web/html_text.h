// skills/web/html_text.h
//
// HtmlToText reduces an HTML page to the text a person would read, for url_fetch to hand to
// the model: the title; headings as "#" lines; paragraphs and blocks separated by blank
// lines; list items as "- " or "1. " lines; table cells joined with " | "; image alt text as
// "[image: ...]"; each link's text followed by a marker [n], where links[n-1] is its URL.
// Scripts, styles, comments, SVG, templates and media fallbacks are dropped, character
// references (&amp; &eacute; &#8217; &#x1F600;) decoded, and whitespace collapsed outside
// <pre>. It is a tolerant tokenizer, not a DOM: any input, however broken (unclosed tags,
// stray '<', unterminated comments or quotes), gives valid UTF-8 text in one linear pass.
//
//   HtmlText page = HtmlToText("<title>Hi</title><p>See <a href='https://a.example/'>A</a>");
//   // page.title == "Hi", page.text == "See A [1]", page.links == {"https://a.example/"}
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace herald::skills::web {

struct HtmlTextOptions {
  // The URL listed for a link's href (decoded), or nullopt to show the link's text without a
  // marker. url_fetch resolves relative links against the page's URL here. When empty, only
  // absolute http:// and https:// hrefs are listed, as written.
  std::function<std::optional<std::string>(std::string_view href)> resolve_link;
  // Links past this many keep their text but get no marker.
  size_t max_links = 100;
};

struct HtmlText {
  std::string title;               // the first <title>, whitespace collapsed; may be empty
  std::string text;                // valid UTF-8, no control characters but '\n'
  std::vector<std::string> links;  // the URL of marker [n] is links[n - 1]; no duplicates
};

HtmlText HtmlToText(std::string_view html, const HtmlTextOptions& options = {});

// The charset a page declares near its start (<meta charset="..."> or an http-equiv
// Content-Type), lower case, or "" when it declares none.
std::string SniffHtmlCharset(std::string_view html);

}  // namespace herald::skills::web
