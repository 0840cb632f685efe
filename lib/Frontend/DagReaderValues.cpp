//===- DagReaderValues.cpp - typed JSON values of a node ===//

#include "DagReading.h"

using namespace mlir;

namespace rankc::dag {

// Typed readers: on a wrong type they set `err` to what was expected and
// return false; the caller reports it with the key's name.

bool Reader::getInt(od::value v, int64_t &out) {
  od::number_type t;
  if (v.type().value_unsafe() != od::json_type::number ||
      v.get_number_type().get(t) || t != od::number_type::signed_integer ||
      v.get_int64().get(out)) {
    // Unsigned integers here are above 2^63: out of range for everything.
    err = "an integer";
    return false;
  }
  return true;
}

bool Reader::getPadding(od::value v, std::vector<int64_t> &out) {
  od::array arr;
  out.clear();
  err = "a list of [lo, hi] pairs of integers";
  if (v.get_array().get(arr))
    return false;
  for (auto elem : arr) {
    od::value e;
    std::vector<int64_t> pair;
    if (elem.get(e) || !getIntList(e, pair) || pair.size() != 2) {
      err = "a list of [lo, hi] pairs of integers";
      return false;
    }
    out.insert(out.end(), pair.begin(), pair.end());
  }
  return true;
}

bool Reader::getString(od::value v, std::string &out) {
  std::string_view s;
  if (v.get_string().get(s)) {
    err = "a string";
    return false;
  }
  out.assign(s);
  return true;
}

bool Reader::getNumber(od::value v, double &out) {
  if (v.get_double().get(out)) {
    err = "a number";
    return false;
  }
  return true;
}

bool Reader::getPeer(od::value v, Peer &out) {
  static constexpr const char *kPeer =
      "a rank, {\"offset\": k} or {\"grid\": [...], \"shift\": [...]} "
      "(optionally \"periodic\": [...])";
  od::json_type t;
  if (v.type().get(t)) {
    err = kPeer;
    return false;
  }
  if (t == od::json_type::number) {
    out.relative = false;
    if (!getInt(v, out.value)) {
      err = kPeer;
      return false;
    }
    return true;
  }
  od::object obj;
  if (t != od::json_type::object || v.get_object().get(obj)) {
    err = kPeer;
    return false;
  }
  // Keys: "offset" alone, or "grid" and "shift" with optional "periodic".
  unsigned seen = 0;
  for (auto field : obj) {
    std::string_view key;
    od::value fv;
    if (field.unescaped_key().get(key) || field.value().get(fv)) {
      err = kPeer;
      return false;
    }
    unsigned bit = key == "offset" ? 1 : key == "grid" ? 2 : key == "shift" ? 4
                 : key == "periodic" ? 8 : 0;
    if (!bit || (seen & bit)) {
      err = bit ? std::string(kPeer) + ", each key once"
                : std::string(kPeer) + "; unknown key '" + std::string(key) + "'";
      return false;
    }
    seen |= bit;
    bool ok = true;
    switch (bit) {
    case 1: ok = getInt(fv, out.value); break;
    case 2: ok = getIntList(fv, out.grid); break;
    case 4: ok = getIntList(fv, out.shift); break;
    case 8: {
      od::array arr;
      ok = !fv.get_array().get(arr);
      for (auto elem : arr) {
        bool b;
        od::value e;
        if (!ok || elem.get(e) || e.get_bool().get(b)) {
          ok = false;
          break;
        }
        out.periodic.push_back(b);
      }
      break;
    }
    }
    if (!ok) {
      err = kPeer;
      return false;
    }
  }
  if (seen == 1) {
    out.relative = true;
    return true;
  }
  if ((seen & 1) || (seen & 6) != 6) {
    err = std::string(kPeer) + ": \"offset\" alone, or \"grid\" with \"shift\"";
    return false;
  }
  if (out.grid.empty() || out.shift.size() != out.grid.size() ||
      (!out.periodic.empty() && out.periodic.size() != out.grid.size())) {
    err = "a grid peer with one \"shift\" (and \"periodic\") entry per axis of "
          "a non-empty \"grid\"";
    return false;
  }
  for (int64_t p : out.grid)
    if (p < 1) {
      err = "a grid peer whose \"grid\" extents are >= 1";
      return false;
    }
  if (out.periodic.empty())
    out.periodic.assign(out.grid.size(), false);
  return true;
}

bool Reader::getTag(od::value v, Tag &out) {
  od::json_type t;
  if (v.type().get(t)) {
    err = "an integer or a string";
    return false;
  }
  if (t == od::json_type::string) {
    std::string s;
    getString(v, s);
    out = std::move(s);
    return true;
  }
  int64_t i;
  if (t == od::json_type::number && getInt(v, i)) {
    out = i;
    return true;
  }
  err = "an integer or a string";
  return false;
}

// Reads a number or a (rectangular) nested list of numbers and booleans.
bool Reader::getConstant(od::value v, ConstantValue &out, unsigned depth,
                         Pos pos) {
  od::json_type t;
  if (v.type().get(t)) {
    err = "a number, a boolean or a nested list of them";
    return false;
  }
  if (t == od::json_type::array) {
    if (depth >= 32) {
      err = "nested at most 32 lists deep";
      return false;
    }
    od::array arr;
    if (v.get_array().get(arr))
      return false;
    int64_t count = 0;
    for (auto elem : arr) {
      od::value e;
      if (elem.get(e) || !getConstant(e, out, depth + 1, pos))
        return false;
      ++count;
    }
    // Rectangular: every list at one depth has the length of the first one
    // finished at that depth (inner lists finish before outer ones).
    if (out.shape.size() <= depth)
      out.shape.resize(depth + 1, -1);
    if (out.shape[depth] < 0) {
      out.shape[depth] = count;
    } else if (out.shape[depth] != count) {
      err = "a rectangular nested list (lists of one depth differ in length)";
      return false;
    }
    return true;
  }
  // Every number sits at the same depth.
  if (constScalarDepth < 0) {
    constScalarDepth = int(depth);
  } else if (constScalarDepth != int(depth)) {
    err = "a rectangular nested list (numbers and lists mixed at one depth)";
    return false;
  }
  Scalar s;
  if (t == od::json_type::boolean) {
    s.kind = Scalar::Bool;
    if (v.get_bool().get(s.b))
      return false;
  } else if (t == od::json_type::number) {
    od::number_type nt;
    if (v.get_number_type().get(nt))
      return false;
    if (nt == od::number_type::signed_integer) {
      s.kind = Scalar::Int;
      if (v.get_int64().get(s.i))
        return false;
    } else if (nt == od::number_type::floating_point_number) {
      s.kind = Scalar::Float;
      if (v.get_double().get(s.f))
        return false;
    } else {
      err = "numbers that fit in 64 bits";
      return false;
    }
  } else {
    err = "a number, a boolean or a nested list of them";
    return false;
  }
  out.elements.push_back(s);
  return true;
}

} // namespace rankc::dag
