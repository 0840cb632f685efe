//===- DagReaderNodes.cpp - one node of a program ===//

#include "DagReading.h"
#include "rankc/Dialect/Comm/Comm.h"

using namespace mlir;

namespace rankc::dag {

bool Reader::readNode(od::value v, Program &prog, Node &node) {
  node.pos = posOf(v);
  od::object obj;
  if (v.get_object().get(obj))
    return fail(node.pos, "a node must be an object", &prog);
  // Problems are reported once the node's id is known, whatever the key order.
  std::string problem;
  Pos problemPos;
  bool sawId = false, sawOp = false;
  // The first use of a later version's feature in this node: noted once the
  // node's id is known.
  std::string laterWhat;
  int laterVersion = 0;
  Pos laterPos;
  auto later = [&](int version, Pos pos, const Twine &what) {
    if (laterVersion < version) {
      laterVersion = version;
      laterWhat = what.str();
      laterPos = pos;
    }
  };
  auto note = [&](Pos pos, const Twine &msg) {
    if (problem.empty()) {
      problem = msg.str();
      problemPos = pos;
    }
  };
  for (auto field : obj) {
    std::string_view key;
    od::value fv;
    RANKC_TRY(field.unescaped_key().get(key), node.pos);
    RANKC_TRY(field.value().get(fv), node.pos);
    llvm::StringRef k(key.data(), key.size());
    // Past a problem only the id is still read: the error names the node
    // whatever the order of its keys.
    if (!problem.empty() && (k != "id" || sawId))
      continue;
    Pos pos = posOf(fv);
    err.clear();
    if (k == "id" || k == "op") {
      bool &saw = k == "id" ? sawId : sawOp;
      if (saw) {
        note(pos, "duplicate key '" + k + "'");
        continue;
      }
      saw = true;
      std::string s;
      if (!getString(fv, s)) {
        note(pos, "'" + k + "' must be a string");
        continue;
      }
      if (k == "id") {
        node.id = std::move(s);
        node.idName = prog.intern(node.id);
      } else if (auto op = parseOp(s)) {
        node.op = *op;
        if (opClass(*op) == OpClass::Indexing ||
            opClass(*op) == OpClass::Window) // version 2's
          later(2, pos, "op '" + s + "'");
        else if (*op == Op::Step || *op == Op::Rem) // version 3's
          later(3, pos, "op '" + s + "'");
      } else {
        note(pos, "unknown op '" + s + "'");
      }
      continue;
    }
    std::optional<NodeKey> known = parseNodeKey(k);
    uint32_t bit = known ? *known : 0;
    if (!bit) {
      note(pos, "unknown key '" + k + "'");
      continue;
    }
    if (node.keys & bit) {
      note(pos, "duplicate key '" + k + "'");
      continue;
    }
    node.keys |= bit;
    bool ok = true;
    std::string s;
    switch (NodeKey(bit)) {
    case K_args: {
      od::array arr;
      ok = !fv.get_array().get(arr);
      if (ok)
        for (auto elem : arr) {
          od::value e;
          if (elem.get(e) || !getString(e, s)) {
            ok = false;
            break;
          }
          node.args.push_back(prog.intern(s));
        }
      err = "a list of node ids";
      break;
    }
    case K_shape: ok = getIntList(fv, node.shape); break;
    case K_axes: ok = getIntList(fv, node.rare().axes); break;
    case K_perm: ok = getIntList(fv, node.rare().perm); break;
    case K_begin: ok = getIntList(fv, node.rare().begin); break;
    case K_end: ok = getIntList(fv, node.rare().end); break;
    case K_step: ok = getIntList(fv, node.rare().step); break;
    case K_axis: ok = getInt(fv, node.axis); break;
    case K_stride: ok = getIntList(fv, node.rare().stride); break;
    case K_dilation: ok = getIntList(fv, node.rare().dilation); break;
    case K_input_dilation:
      ok = getIntList(fv, node.rare().inputDilation);
      break;
    case K_window: ok = getIntList(fv, node.rare().window); break;
    case K_groups: ok = getInt(fv, node.rare().groups); break;
    case K_padding: ok = getPadding(fv, node.rare().padding); break;
    case K_spec: ok = getString(fv, node.rare().spec); break;
    case K_dest:
    case K_src:
      ok = getPeer(fv, node.rare().peer);
      if (ok && node.rare().peer.isGrid())
        later(3, pos, "a grid peer");
      break;
    case K_fill: {
      // A number (or a boolean, for a bool receive): the checker matches it
      // to the dtype.
      ConstantValue value;
      constScalarDepth = -1;
      ok = getConstant(fv, value, 0, pos) && value.shape.empty() &&
           value.elements.size() == 1;
      if (ok)
        node.rare().fill = value.elements[0];
      err = "a number";
      later(3, pos, "'fill'");
      break;
    }
    case K_tag: ok = getTag(fv, node.rare().tag); break;
    case K_value:
      constScalarDepth = -1;
      ok = getConstant(fv, node.rare().value, 0, pos);
      if (ok && constScalarDepth >= 0 &&
          size_t(constScalarDepth) != node.rare().value.shape.size()) {
        ok = false;
        err = "a rectangular nested list (numbers and lists mixed at one depth)";
      }
      break;
    case K_keepdims:
      ok = !fv.get_bool().get(node.keepdims);
      err = "a boolean";
      break;
    case K_dtype:
      if ((ok = getString(fv, s))) {
        if (auto t = parseDType(s)) {
          node.dtype = *t;
          if (dtypeVersion(*t) > 1)
            later(dtypeVersion(*t), pos, "dtype '" + s + "'");
        } else {
          note(pos, "unknown dtype '" + s +
                        "' (expected bool, i8, i32, i64, f16, bf16, f32, f64, "
                        "u8, u16 or u32)");
          continue;
        }
      }
      break;
    case K_reduce:
      if ((ok = getString(fv, s))) {
        if (auto r = parseReduce(s)) {
          node.reduce = *r;
        } else {
          note(pos, "unknown reduction '" + s +
                        "' (expected sum, prod, max, min, mean or argmax)");
          continue;
        }
      }
      break;
    }
    if (!ok && syntaxError()) // not a wrong value: no JSON at all
      return failSyntax(pos, "");
    if (!ok)
      note(pos, "'" + k + "' must be " + (err.empty() ? "valid" : err));
  }
  if (problem.empty() && !sawId)
    note(node.pos, "node has no 'id'");
  if (problem.empty() && !sawOp)
    note(node.pos, "node has no 'op'");
  // Inputs are read from IN/rank<r>/<id>.npy: one path component.
  if (problem.empty() && node.id.size() + 4 > 255)
    note(node.pos, "node id '" + node.id.substr(0, 32) + "...' has " +
                       std::to_string(node.id.size()) +
                       " characters; a file name holds at most 251 before "
                       "'.npy'");
  if (problem.empty() && !comm::isValidNodeId(node.id))
    note(node.pos, "invalid node id '" + node.id +
                       "' (expected [A-Za-z_][A-Za-z0-9_.:-]*)");
  if (!problem.empty())
    return fail(problemPos, problem, &prog, sawId ? StringRef(node.id) : "");
  if (laterVersion) // (once the node is read: its id may come last)
    noteVersion(laterVersion, laterWhat, laterPos, node.id);
  return true;
}

} // namespace rankc::dag
