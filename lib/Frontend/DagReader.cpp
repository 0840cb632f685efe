//===- DagReader.cpp - JSON text to Document ------------------------------===//
//
// simdjson's On-Demand API reads the document in one forward pass without
// building a DOM (a 60 MB document parses in well under a second; see
// bench/). Every value is checked for its JSON type as it is read; any key
// that the format does not define is an error, so typos never pass.
//
//===----------------------------------------------------------------------===//

#include "rankc/Frontend/DagReader.h"
#include "rankc/Frontend/DagDiagnostics.h"
#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <simdjson.h>

#include "JsonSyntax.h"

#include <cmath>

using namespace mlir;
namespace od = simdjson::ondemand;

namespace rankc::dag {
namespace {

class Reader {
public:
  Reader(MLIRContext *ctx, StringRef file, StringRef text)
      : ctx(ctx), file(file), base(text.data()), size(text.size()) {}

  FailureOr<Document> read(od::document &doc);

private:
  // Positions: byte offsets become (line, column) through a cursor that only
  // moves forward, so converting every node's offset is linear overall.
  Pos posOf(const char *p);
  Pos posOf(od::value &v) {
    auto loc = v.current_location();
    return loc.error() ? Pos{} : posOf(loc.value_unsafe());
  }

  // Emits `msg` at `pos` (in `program`, at `node` if given); always false.
  bool fail(Pos pos, const Twine &msg, const Program *program = nullptr,
            StringRef node = {}) {
    if (!failed)
      emitError(makeLoc(ctx, file, pos, program, node)) << msg;
    failed = true;
    return false;
  }
public:
  // simdjson says that the text is malformed, not always where: the strict
  // scan of JsonSyntax.h names the first wrong byte when it finds one.
  bool failJson(simdjson::error_code err, Pos pos) {
    return failSyntax(pos, simdjson::error_message(err));
  }
  bool failSyntax(Pos pos, const Twine &fallback) {
    if (const std::optional<JsonSyntaxError> &syntax = syntaxError())
      return fail(posOf(base + syntax->offset),
                  "malformed JSON: " + syntax->message);
    return fail(pos, "malformed JSON: " + fallback);
  }
  /// The text's first syntax error, scanned for once (error paths only).
  const std::optional<JsonSyntaxError> &syntaxError() {
    if (!scanned)
      scanned = findJsonSyntaxError(StringRef(base, size));
    return *scanned;
  }

private:

  bool readProgram(od::value v, Program &prog);
  bool readNode(od::value v, Program &prog, Node &node);
  bool readOutputs(od::value v, Program &prog);
  bool readDataParallel(od::value v, DataParallel &dp);
  bool readOptimizer(od::value v, Optimizer &opt);
  bool readState(od::value v, Program &prog);
  /// Remembers the first use of a version 2 feature: whether it is allowed
  /// depends on "version", which may come anywhere in the document.
  void noteV2(const Twine &what, Pos pos, StringRef node = {}) {
    if (!v2Use.what.empty())
      return;
    v2Use = {what.str(), pos, programIndex, node.str()};
  }
  bool checkVersion(Document &d);

  // Typed readers: on a wrong type they set `err` to what was expected.
  bool getInt(od::value v, int64_t &out);
  template <typename Vec> bool getIntList(od::value v, Vec &out);
  /// A list of [lo, hi] pairs, flattened.
  bool getPadding(od::value v, std::vector<int64_t> &out);
  bool getString(od::value v, std::string &out);
  bool getNumber(od::value v, double &out);
  bool getPeer(od::value v, Peer &out);
  bool getTag(od::value v, Tag &out);
  bool getConstant(od::value v, ConstantValue &out, unsigned depth,
                   Pos pos);

  MLIRContext *ctx;
  StringRef file;
  const char *base;
  size_t size;
  std::optional<std::optional<JsonSyntaxError>> scanned;
  bool failed = false;
  std::string err; // set by the typed readers
  int constScalarDepth = -1; // depth of the numbers of the constant being read
  struct V2Use {
    std::string what; // "'state'", "op 'take'", ...
    Pos pos;
    int program = -1;
    std::string node;
  } v2Use;
  int programIndex = -1; // of the program being read
  // Forward cursor for posOf.
  const char *cursor = nullptr;
  uint32_t cursorLine = 1;
  const char *cursorLineStart = nullptr;
};

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

// The error code of a simdjson_result, or of an on-demand operation.
#define RANKC_TRY(expr, pos)                                                   \
  do {                                                                         \
    if (auto _e = (expr); _e != simdjson::SUCCESS)                             \
      return failJson(_e, pos);                                                \
  } while (0)

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

template <typename Vec> bool Reader::getIntList(od::value v, Vec &out) {
  od::array arr;
  out.clear();
  if (v.get_array().get(arr)) {
    err = "a list of integers";
    return false;
  }
  for (auto elem : arr) {
    od::value e;
    int64_t i;
    if (elem.get(e) || !getInt(e, i)) {
      err = "a list of integers";
      return false;
    }
    out.push_back(i);
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
  od::json_type t;
  if (v.type().get(t)) {
    err = "a rank or {\"offset\": k}";
    return false;
  }
  if (t == od::json_type::number) {
    out.relative = false;
    if (!getInt(v, out.value)) {
      err = "a rank or {\"offset\": k}";
      return false;
    }
    return true;
  }
  od::object obj;
  bool sawOffset = false;
  if (t == od::json_type::object && !v.get_object().get(obj)) {
    for (auto field : obj) {
      std::string_view key;
      od::value fv;
      if (field.unescaped_key().get(key) || key != "offset" || sawOffset ||
          field.value().get(fv) || !getInt(fv, out.value))
        break;
      sawOffset = true;
      out.relative = true;
    }
    if (sawOffset && out.relative && err.empty())
      return true;
  }
  err = "a rank or {\"offset\": k} with only the key \"offset\"";
  return false;
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

bool Reader::readDataParallel(od::value v, DataParallel &dp) {
  dp.pos = posOf(v);
  od::object obj;
  if (v.get_object().get(obj))
    return fail(dp.pos, "'data_parallel' must be an object");
  unsigned seen = 0;
  for (auto field : obj) {
    std::string_view key;
    od::value fv;
    RANKC_TRY(field.unescaped_key().get(key), dp.pos);
    RANKC_TRY(field.value().get(fv), dp.pos);
    Pos pos = posOf(fv);
    unsigned bit = llvm::StringSwitch<unsigned>(llvm::StringRef(key.data(), key.size()))
                       .Case("bucket_cap_mb", 1)
                       .Case("first_bucket_cap_mb", 2)
                       .Case("order", 4)
                       .Case("ignore", 8)
                       .Case("optimizer", 16)
                       .Default(0);
    if (!bit)
      return fail(pos, "unknown key '" + Twine(key) + "' in 'data_parallel'");
    if (seen & bit)
      return fail(pos, "duplicate key '" + Twine(key) + "' in 'data_parallel'");
    seen |= bit;
    std::string s;
    switch (bit) {
    case 1:
    case 2: {
      double &cap = bit == 1 ? dp.bucketCapMb : dp.firstBucketCapMb;
      if (!getNumber(fv, cap) || !(cap > 0) || cap > 1e12)
        return fail(pos, "'" + Twine(key) + "' must be a positive number of MiB");
      break;
    }
    case 4:
      if (!getString(fv, s) || (s != "ready" && s != "ddp-initial"))
        return fail(pos, "'order' must be \"ready\" or \"ddp-initial\"");
      dp.ddpInitialOrder = s == "ddp-initial";
      break;
    case 8: {
      od::array arr;
      if (fv.get_array().get(arr))
        return fail(pos, "'ignore' must be a list of parameter ids");
      for (auto elem : arr) {
        od::value e;
        if (elem.get(e) || !getString(e, s))
          return fail(pos, "'ignore' must be a list of parameter ids");
        dp.ignore.push_back(s);
      }
      break;
    }
    case 16:
      noteV2("'optimizer'", pos);
      dp.optimizer.emplace();
      if (!readOptimizer(fv, *dp.optimizer))
        return false;
      break;
    }
  }
  return true;
}

bool Reader::readOptimizer(od::value v, Optimizer &opt) {
  opt.pos = posOf(v);
  od::object obj;
  if (v.get_object().get(obj))
    return fail(opt.pos, "'optimizer' must be an object");
  // The fields that are valid depend on "kind", which may come last: read
  // everything first, then check against the kind.
  struct Field {
    std::string key;
    Pos pos;
    double number = 0;
    bool flag = false;
    std::vector<double> list;
    bool isNumber = false, isBool = false, isList = false;
  };
  std::vector<Field> fields;
  std::string kind;
  bool sawKind = false;
  for (auto field : obj) {
    std::string_view key;
    od::value fv;
    RANKC_TRY(field.unescaped_key().get(key), opt.pos);
    RANKC_TRY(field.value().get(fv), opt.pos);
    Pos pos = posOf(fv);
    Field f;
    f.key.assign(key);
    f.pos = pos;
    for (const Field &g : fields)
      if (g.key == f.key)
        return fail(pos, "duplicate key '" + Twine(f.key) + "' in 'optimizer'");
    if (f.key == "kind") {
      if (sawKind)
        return fail(pos, "duplicate key 'kind' in 'optimizer'");
      sawKind = true;
      if (!getString(fv, kind) ||
          (kind != "sgd" && kind != "adam" && kind != "adamw"))
        return fail(pos, "optimizer 'kind' must be \"sgd\", \"adam\" or \"adamw\"");
      continue;
    }
    od::json_type t;
    RANKC_TRY(fv.type().get(t), pos);
    if (t == od::json_type::number) {
      f.isNumber = getNumber(fv, f.number);
    } else if (t == od::json_type::boolean) {
      f.isBool = !fv.get_bool().get(f.flag);
    } else if (t == od::json_type::array) {
      od::array arr;
      f.isList = !fv.get_array().get(arr);
      if (f.isList)
        for (auto elem : arr) {
          od::value e;
          double x;
          if (elem.get(e) || !getNumber(e, x)) {
            f.isList = false;
            break;
          }
          f.list.push_back(x);
        }
    }
    fields.push_back(std::move(f));
  }
  if (!sawKind)
    return fail(opt.pos, "'optimizer' has no 'kind' (\"sgd\", \"adam\" or \"adamw\")");
  opt.kind = kind == "sgd" ? Optimizer::Sgd
             : kind == "adam" ? Optimizer::Adam : Optimizer::AdamW;
  if (opt.kind == Optimizer::AdamW)
    opt.weightDecay = 0.01; // torch.optim.AdamW's default
  bool sawLr = false;
  auto number = [&](const Field &f, double &out, const char *rule,
                    auto valid) {
    if (!f.isNumber || !valid(f.number))
      return fail(f.pos, "optimizer '" + Twine(f.key) + "' must be " + rule);
    out = f.number;
    return true;
  };
  auto nonNegative = [](double x) { return x >= 0 && x < 1e300; };
  for (const Field &f : fields) {
    bool sgd = opt.kind == Optimizer::Sgd, ok = true;
    if (f.key == "lr") {
      sawLr = true;
      ok = number(f, opt.lr, "a number > 0",
                  [](double x) { return x > 0 && x < 1e300; });
    } else if (f.key == "weight_decay") {
      ok = number(f, opt.weightDecay, "a number >= 0", nonNegative);
    } else if (sgd && f.key == "momentum") {
      ok = number(f, opt.momentum, "a number >= 0", nonNegative);
    } else if (sgd && f.key == "dampening") {
      ok = number(f, opt.dampening, "a number",
                  [](double x) { return std::abs(x) < 1e300; });
    } else if (sgd && f.key == "nesterov") {
      if (!f.isBool)
        return fail(f.pos, "optimizer 'nesterov' must be a boolean");
      opt.nesterov = f.flag;
    } else if (!sgd && f.key == "eps") {
      ok = number(f, opt.eps, "a number >= 0", nonNegative);
    } else if (!sgd && f.key == "betas") {
      if (!f.isList || f.list.size() != 2 ||
          !llvm::all_of(f.list, [](double b) { return b >= 0 && b < 1; }))
        return fail(f.pos, "optimizer 'betas' must be a list of two numbers "
                           "in [0, 1)");
      opt.beta1 = f.list[0];
      opt.beta2 = f.list[1];
    } else if (f.key == "maximize" || f.key == "amsgrad") {
      return fail(f.pos, "optimizer '" + Twine(f.key) + "' is not supported");
    } else {
      return fail(f.pos, "unknown key '" + Twine(f.key) + "' for the " +
                             optimizerName(opt.kind) + " optimizer");
    }
    if (!ok)
      return false;
  }
  if (!sawLr)
    return fail(opt.pos, "'optimizer' has no 'lr'");
  if (opt.nesterov && (opt.momentum <= 0 || opt.dampening != 0))
    return fail(opt.pos, "Nesterov momentum needs 'momentum' > 0 and "
                         "'dampening' 0 (as torch.optim.SGD)");
  return true;
}

bool Reader::readState(od::value v, Program &prog) {
  prog.statePos = posOf(v);
  noteV2("'state'", prog.statePos);
  od::object obj;
  if (v.get_object().get(obj))
    return fail(prog.statePos,
                "'state' must be an object {\"input-id\": \"output-name\"}",
                &prog);
  for (auto field : obj) {
    std::string_view key;
    od::value fv;
    RANKC_TRY(field.unescaped_key().get(key), prog.statePos);
    RANKC_TRY(field.value().get(fv), prog.statePos);
    StatePair pair;
    pair.inputId.assign(key);
    pair.pos = posOf(fv);
    if (!getString(fv, pair.outputName))
      return fail(pair.pos, "state of '" + pair.inputId +
                                "' must name an output (a string)",
                  &prog, pair.inputId);
    for (const StatePair &other : prog.state)
      if (other.inputId == pair.inputId)
        return fail(pair.pos, "'state' names input '" + pair.inputId +
                                  "' twice", &prog, pair.inputId);
    prog.state.push_back(std::move(pair));
  }
  return true;
}

bool Reader::readNode(od::value v, Program &prog, Node &node) {
  node.pos = posOf(v);
  od::object obj;
  if (v.get_object().get(obj))
    return fail(node.pos, "a node must be an object", &prog);
  // Problems are reported once the node's id is known, whatever the key order.
  std::string problem;
  Pos problemPos;
  bool sawId = false, sawOp = false;
  std::string v2OpName;
  Pos v2OpPos;
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
            opClass(*op) == OpClass::Window) { // version 2's
          v2OpName = s;
          v2OpPos = pos;
        }
      } else {
        note(pos, "unknown op '" + s + "'");
      }
      continue;
    }
    uint32_t bit = llvm::StringSwitch<uint32_t>(k)
                       .Case("args", K_args).Case("shape", K_shape)
                       .Case("dtype", K_dtype).Case("value", K_value)
                       .Case("axis", K_axis).Case("axes", K_axes)
                       .Case("keepdims", K_keepdims).Case("spec", K_spec)
                       .Case("perm", K_perm).Case("begin", K_begin)
                       .Case("end", K_end).Case("step", K_step)
                       .Case("dest", K_dest).Case("src", K_src)
                       .Case("tag", K_tag).Case("reduce", K_reduce)
                       .Case("stride", K_stride).Case("padding", K_padding)
                       .Case("dilation", K_dilation)
                       .Case("input_dilation", K_input_dilation)
                       .Case("groups", K_groups).Case("window", K_window)
                       .Default(0);
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
    case K_src: ok = getPeer(fv, node.rare().peer); break;
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
        } else {
          note(pos, "unknown dtype '" + s +
                        "' (expected bool, i8, i32, i64, f16, bf16, f32 or f64)");
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
  if (!v2OpName.empty()) {
    // (Once the node is read: its id may come after its op.)
    noteV2("op '" + v2OpName + "'", v2OpPos, node.id);
    v2OpName.clear();
  }
  return true;
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
      if (!getInt(fv, i) || (i != 1 && i != 2))
        return (fail(pos, "unsupported 'version' (this compiler reads versions "
                          "1 and 2)"),
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
  if (v2Use.what.empty())
    return true;
  const Program *prog =
      v2Use.program >= 0 ? &d.programs[v2Use.program] : nullptr;
  if (d.version < 2)
    return fail(v2Use.pos,
                v2Use.what + " needs \"version\": 2 (this document is "
                             "version 1)",
                prog, v2Use.node);
  return true;
}

} // namespace

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
