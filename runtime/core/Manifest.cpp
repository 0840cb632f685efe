//===- Manifest.cpp - what a compiled program is, as it says itself -------===//

#include "core/Manifest.h"
#include "tooling/Npy.h"

#include <cstdlib>
#include <sstream>

namespace rankc::rt {

size_t TensorInfo::bytes() const {
  return size_t(elements()) * npy::elementBytes(dtype);
}

namespace {
/// The message lines (`event`, `grid`, `fill`, `bucket`) of either manifest.
bool parseMessageLine(const std::string &kind, std::istringstream &l,
                      std::vector<EventInfo> &events) {
  if (kind == "event") {
    EventInfo e;
    int index;
    l >> index >> e.kind >> e.node;
    std::getline(l >> std::ws, e.tag);
    events.push_back(e);
  } else if (kind == "grid") {
    size_t event, d;
    l >> event >> d;
    GridPeer &g = events.at(event).grid;
    g.shape.resize(d);
    g.shift.resize(d);
    for (int64_t &p : g.shape)
      l >> p;
    for (int64_t &s : g.shift)
      l >> s;
    for (size_t i = 0; i < d; ++i) {
      int periodic;
      l >> periodic;
      g.periodic.push_back(periodic != 0);
    }
  } else if (kind == "bucket") {
    size_t event;
    l >> event;
    EventInfo &e = events.at(event);
    l >> e.bucket;
    auto &p = e.predicted;
    p.known = bool(l >> p.ready >> p.start >> p.reduce >> p.exposed);
  } else if (kind == "fill") {
    size_t event;
    int dtype;
    std::string value;
    l >> event >> dtype >> value;
    EventInfo &e = events.at(event);
    e.fillDtype = dtype;
    e.fillFloat = std::strtod(value.c_str(), nullptr);
    e.fillInt = std::strtoll(value.c_str(), nullptr, 10);
  } else {
    return false;
  }
  return true;
}

/// Calls `each(kind, rest)` for every line of a manifest.
template <typename Each> void forEachLine(const char *text, Each each) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream l(line);
    std::string kind;
    l >> kind;
    each(kind, l);
  }
}

TensorInfo parseTensor(const std::string &kind, std::istringstream &l) {
  TensorInfo t;
  int index, r;
  l >> index;
  if (kind == "input")
    l >> t.id;
  l >> t.dtype >> r;
  t.shape.resize(r);
  for (int64_t &d : t.shape)
    l >> d;
  if (kind == "output") {
    std::string colon, name;
    l >> colon;
    while (l >> name)
      t.names.push_back(name);
    t.id = t.names.empty() ? "" : t.names[0];
  }
  return t;
}
} // namespace

void Manifest::parse(const char *text) {
  *this = Manifest();
  forEachLine(text, [&](const std::string &kind, std::istringstream &l) {
    if (parseMessageLine(kind, l, events))
      return;
    if (kind == "accumulate") {
      l >> accumulate;
    } else if (kind == "fingerprint") {
      l >> fingerprint;
    } else if (kind == "program") {
      l >> program;
    } else if (kind == "world_size") {
      l >> worldSize;
    } else if (kind == "ranks") {
      for (std::string r; l >> r;)
        ranks.push_back(r);
    } else if (kind == "input") {
      inputs.push_back(parseTensor(kind, l));
    } else if (kind == "output") {
      outputs.push_back(parseTensor(kind, l));
    } else if (kind == "zero" || kind == "step") {
      size_t index;
      l >> index;
      (kind == "zero" ? inputs.at(index).zero : inputs.at(index).step) = true;
    } else if (kind == "state") {
      size_t input;
      int output;
      l >> input >> output;
      inputs.at(input).stateOf = output;
    } else if (kind == "check") {
      int index;
      std::string node, what;
      l >> index >> node >> what;
      checks.push_back({node, what == "rem"});
    }
  });
}

void Manifest::parseMicroStep(const char *text) {
  microEvents.clear();
  forEachLine(text, [&](const std::string &kind, std::istringstream &l) {
    parseMessageLine(kind, l, microEvents);
  });
}

bool Manifest::runsOn(int r, std::string &list) const {
  bool mine = false;
  list.clear();
  for (const std::string &s : ranks) {
    mine = mine || s == "all" || s == std::to_string(r);
    list += (list.empty() ? "" : " ") + s;
  }
  return mine;
}

} // namespace rankc::rt
