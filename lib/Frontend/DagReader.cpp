//===- DagReader.cpp - JSON text to Document ------------------------------===//
//
// simdjson's On-Demand API reads the document in one forward pass without
// building a DOM (a 60 MB document parses in well under a second; see
// bench/). Every value is checked for its JSON type as it is read; any key
// that the format does not define is an error, so typos never pass.
//
//===----------------------------------------------------------------------===//

#include "DagReading.h"
#include "rankc/Dialect/Comm/Comm.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

namespace rankc::dag {

Pos Reader::posOf(const char *p) {
  if (!cursor || p < cursor) {
    cursor = cursorLineStart = base;
    cursorLine = 1;
  }
  for (const char *nl; (nl = static_cast<const char *>(
                            memchr(cursor, '\n', p - cursor)));) {
    ++cursorLine;
    cursor = cursorLineStart = nl + 1;
  }
  cursor = p;
  return Pos{cursorLine, uint32_t(p - cursorLineStart + 1)};
}

bool Reader::readOutputs(od::value v, Program &prog) {
  Pos pos = posOf(v);
  od::object obj;
  if (v.get_object().get(obj))
    return fail(pos, "'outputs' must be an object", &prog);
  for (auto field : obj) {
    std::string_view key;
    od::value fv;
    RANKC_TRY(field.unescaped_key().get(key), pos);
    RANKC_TRY(field.value().get(fv), pos);
    Output out;
    out.name.assign(key);
    out.pos = posOf(fv);
    od::json_type t;
    RANKC_TRY(fv.type().get(t), out.pos);
    if (t == od::json_type::string) {
      getString(fv, out.nodeName);
    } else if (t == od::json_type::object) {
      od::object o;
      RANKC_TRY(fv.get_object().get(o), out.pos);
      bool sawNode = false;
      for (auto f : o) {
        std::string_view k;
        od::value x;
        RANKC_TRY(f.unescaped_key().get(k), out.pos);
        RANKC_TRY(f.value().get(x), out.pos);
        std::string s;
        if (k == "node" && !sawNode && getString(x, s)) {
          out.nodeName = s;
          sawNode = true;
        } else if (k == "grad_of" && !out.gradOf && getString(x, s)) {
          out.gradOf = s;
        } else if (k == "node" || k == "grad_of") {
          return fail(out.pos, "output '" + out.name + "': '" + Twine(k) +
                                   "' must be given once, as a string",
                      &prog);
        } else {
          return fail(out.pos, "output '" + out.name + "': unknown key '" +
                                   Twine(k) + "'",
                      &prog);
        }
      }
      if (!sawNode)
        return fail(out.pos, "output '" + out.name + "' has no 'node'", &prog);
    } else {
      return fail(out.pos,
                  "output '" + out.name +
                      "' must be a node id or {\"node\": ..., \"grad_of\": ...}",
                  &prog);
    }
    prog.outputs.push_back(std::move(out));
  }
  return true;
}

bool Reader::readProgram(od::value v, Program &prog) {
  prog.pos = posOf(v);
  od::object obj;
  if (v.get_object().get(obj))
    return fail(prog.pos, "a program must be an object");
  bool sawRanks = false, sawNodes = false, sawOutputs = false,
       sawState = false;
  for (auto field : obj) {
    std::string_view key;
    od::value fv;
    RANKC_TRY(field.unescaped_key().get(key), prog.pos);
    RANKC_TRY(field.value().get(fv), prog.pos);
    Pos pos = posOf(fv);
    if (key == "ranks") {
      if (sawRanks)
        return fail(pos, "duplicate key 'ranks'");
      sawRanks = true;
      std::string s;
      od::json_type t;
      RANKC_TRY(fv.type().get(t), pos);
      if (t == od::json_type::string && getString(fv, s) && s == "all") {
        prog.allRanks = true;
      } else if (t != od::json_type::array || !getIntList(fv, prog.ranks) ||
                 prog.ranks.empty()) {
        return fail(pos, "'ranks' must be \"all\" or a non-empty list of ranks");
      }
    } else if (key == "nodes") {
      if (sawNodes)
        return fail(pos, "duplicate key 'nodes'", &prog);
      sawNodes = true;
      od::array arr;
      if (fv.get_array().get(arr))
        return fail(pos, "'nodes' must be a list", &prog);
      for (auto elem : arr) {
        od::value e;
        RANKC_TRY(elem.get(e), pos);
        prog.nodes.emplace_back();
        if (!readNode(e, prog, prog.nodes.back()))
          return false;
      }
    } else if (key == "outputs") {
      if (sawOutputs)
        return fail(pos, "duplicate key 'outputs'", &prog);
      sawOutputs = true;
      if (!readOutputs(fv, prog))
        return false;
    } else if (key == "state") {
      if (sawState)
        return fail(pos, "duplicate key 'state'", &prog);
      sawState = true;
      if (!readState(fv, prog))
        return false;
    } else {
      return fail(pos, "unknown key '" + Twine(key) + "' in a program");
    }
  }
  if (!sawRanks)
    return fail(prog.pos, "program has no 'ranks'");
  if (!sawNodes)
    return fail(prog.pos, "program has no 'nodes'", &prog);
  return true;
}

FailureOr<Document> Reader::read(od::document &doc) {
  Document d;
  d.file = file.str();
  Pos top{1, 1};
  od::object obj;
  if (auto e = doc.get_object().get(obj)) {
    if (e == simdjson::INCORRECT_TYPE)
      return (fail(top, "the document must be a JSON object"), failure());
    return (failJson(e, top), failure());
  }
  bool sawWorld = false, sawPrograms = false;
  unsigned seen = 0;
  for (auto field : obj) {
    std::string_view key;
    od::value fv;
    if (auto e = field.unescaped_key().get(key))
      return (failJson(e, top), failure());
    if (auto e = field.value().get(fv))
      return (failJson(e, top), failure());
    Pos pos = posOf(fv);
    unsigned bit = llvm::StringSwitch<unsigned>(llvm::StringRef(key.data(), key.size()))
                       .Case("format", 1).Case("version", 2)
                       .Case("world_size", 4).Case("data_parallel", 8)
                       .Case("programs", 16).Default(0);
    if (!bit)
      return (fail(pos, "unknown key '" + Twine(key) + "' in the document"),
              failure());
    if (seen & bit)
      return (fail(pos, "duplicate key '" + Twine(key) + "'"), failure());
    seen |= bit;
    std::string s;
    int64_t i;
    switch (bit) {
    case 1:
      if (!getString(fv, s) || s != "rankc-dag")
        return (fail(pos, "'format' must be \"rankc-dag\""), failure());
      break;
    case 2:
      if (!getInt(fv, i) || i < 1 || i > 3)
        return (fail(pos, "unsupported 'version' (this compiler reads versions "
                          "1, 2 and 3)"),
                failure());
      d.version = i;
      break;
    case 4:
      if (!getInt(fv, d.worldSize) || d.worldSize < 1 || d.worldSize > (1 << 24))
        return (fail(pos, "'world_size' must be an integer in [1, 2^24]"),
                failure());
      sawWorld = true;
      break;
    case 8:
      d.dataParallel.emplace();
      if (!readDataParallel(fv, *d.dataParallel))
        return failure();
      break;
    case 16: {
      od::array arr;
      if (fv.get_array().get(arr))
        return (fail(pos, "'programs' must be a list"), failure());
      for (auto elem : arr) {
        od::value e;
        if (auto err = elem.get(e))
          return (failJson(err, pos), failure());
        programIndex = d.programs.size();
        d.programs.emplace_back();
        if (!readProgram(e, d.programs.back()))
          return failure();
      }
      programIndex = -1;
      sawPrograms = true;
      break;
    }
    }
  }
  if (failed)
    return failure();
  // Anything after the root object (a second document, stray text) is an
  // error too: on-demand parsing stops reading at the root's end otherwise.
  if (!doc.current_location().error())
    return (failSyntax(top, "trailing content after the document"),
            failure());
  if (!sawWorld)
    return (fail(top, "the document has no 'world_size'"), failure());
  if (!sawPrograms || d.programs.empty())
    return (fail(top, "the document has no 'programs'"), failure());
  if (!checkVersion(d))
    return failure();
  return d;
}

bool Reader::checkVersion(Document &d) {
  for (int version : {2, 3}) {
    const FeatureUse &use = uses[version == 3];
    if (use.what.empty() || d.version >= version)
      continue;
    const Program *prog = use.program >= 0 ? &d.programs[use.program] : nullptr;
    return fail(use.pos,
                use.what + " needs \"version\": " + Twine(version) +
                    " (this document is version " + Twine(d.version) + ")",
                prog, use.node);
  }
  return true;
}

static FailureOr<Document> parsePadded(MLIRContext *ctx, StringRef file,
                                       const simdjson::padded_string &padded) {
  od::parser parser;
  od::document doc;
  Reader reader(ctx, file, StringRef(padded.data(), padded.size()));
  if (auto e = parser.iterate(padded).get(doc))
    return (reader.failJson(e, Pos{1, 1}), failure());
  return reader.read(doc);
}

FailureOr<Document> readDag(MLIRContext *ctx, StringRef file, StringRef text) {
  return parsePadded(ctx, file,
                     simdjson::padded_string(text.data(), text.size()));
}

FailureOr<Document> readDagFile(MLIRContext *ctx, StringRef path) {
  if (path == "-") {
    auto buffer = llvm::MemoryBuffer::getSTDIN();
    if (!buffer)
      return (emitError(UnknownLoc::get(ctx))
                  << "cannot read standard input: "
                  << buffer.getError().message(),
              failure());
    return readDag(ctx, "<stdin>", (*buffer)->getBuffer());
  }
  simdjson::padded_string padded;
  if (auto e = simdjson::padded_string::load(std::string(path)).get(padded)) {
    std::error_code ec = llvm::sys::fs::access(path, llvm::sys::fs::AccessMode::Exist);
    return (emitError(UnknownLoc::get(ctx))
                << "cannot read '" << path << "': "
                << (ec ? ec.message() : simdjson::error_message(e)),
            failure());
  }
  return parsePadded(ctx, path, padded);
}

} // namespace rankc::dag
