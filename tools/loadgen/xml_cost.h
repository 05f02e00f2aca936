// tools/loadgen/xml_cost.h
//
// What Herald's own XML layer costs on the stanzas of a run, measured in loadgen's process
// before the load starts (one core, nothing else of loadgen running): StreamParser on the
// inbound message stanzas exactly as they are pumped (fed in 64 KiB reads, as Herald reads),
// and building plus writing a reply like Herald's (XmlElement, AppendXml). Server mode
// reports these beside the component's CPU per round trip, so the share of parsing in it
// is visible.
//
//   XmlCost cost = MeasureXmlCost(stanzas, "agent.localhost", "pong");
//   cost.parse_us_per_stanza; cost.write_us_per_stanza;
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace herald::loadgen {

struct XmlCost {
  double parse_us_per_stanza = 0;
  double write_us_per_stanza = 0;
};

// `stanzas` are jabber:component:accept message stanzas from distinct users; the reply goes
// from `component_domain` to the first stanza's sender with `reply_body`. Runs about
// `seconds` for each half.
XmlCost MeasureXmlCost(const std::vector<std::string>& stanzas, std::string_view component_domain,
                       std::string_view reply_body, double seconds = 0.3);

}  // namespace herald::loadgen
