//===- DagReading.h - the JSON reader's state, shared by its files -*- C++ -*-===//
//
// DagReader.cpp reads the document, its programs and outputs;
// DagReaderNodes.cpp a node; DagReaderValues.cpp typed values (integers,
// lists, peers, tags, constants); DagReaderOptions.cpp `data_parallel` and
// its optimizer. All of them are compiled for the machine's vector unit
// (lib/Frontend/CMakeLists.txt): simdjson's inline parser must be the same
// in every file that uses it.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_FRONTEND_DAGREADING_H
#define RANKC_FRONTEND_DAGREADING_H

#include "rankc/Frontend/DagDiagnostics.h"
#include "rankc/Frontend/DagReader.h"

#include "mlir/IR/Diagnostics.h"

#include <simdjson.h>

#include "JsonSyntax.h"

namespace rankc::dag {

namespace od = simdjson::ondemand;
using mlir::FailureOr;
using mlir::MLIRContext;
using llvm::StringRef;
using llvm::Twine;

/// Reads one document; on the first problem emits an error naming where it
/// is and fails (every read* and get* returns false from then on).
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
  /// A setting of an object whose valid keys depend on its "kind", which
  /// may come last (the optimizer, an lr_schedule phase): read whatever it
  /// holds first, checked once the kind is known.
  struct OptionField {
    std::string key;
    Pos pos;
    double number = 0;
    int64_t integer = 0;
    bool flag = false;
    std::vector<double> list;
    bool isNumber = false, isInt = false, isBool = false, isList = false;
  };
  bool readOptionValue(od::value v, OptionField &f);
  bool readOptimizer(od::value v, Optimizer &opt);
  bool readLrSchedule(od::value v, Optimizer &opt);
  bool readClip(od::value v, Optimizer &opt);
  bool readState(od::value v, Program &prog);
  /// Remembers the first use of a feature of version 2 or 3: whether it is
  /// allowed depends on "version", which may come anywhere in the document.
  void noteVersion(int version, const Twine &what, Pos pos,
                   StringRef node = {}) {
    FeatureUse &use = uses[version == 3];
    if (use.what.empty())
      use = {what.str(), pos, programIndex, node.str()};
  }
  void noteV2(const Twine &what, Pos pos, StringRef node = {}) {
    noteVersion(2, what, pos, node);
  }
  bool checkVersion(Document &d);

  // Typed readers (DagReaderValues.cpp): on a wrong type they set `err` to
  // what was expected.
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
  struct FeatureUse {
    std::string what; // "'state'", "op 'take'", ...
    Pos pos;
    int program = -1;
    std::string node;
  } uses[2]; // the first of version 2, of version 3
  int programIndex = -1; // of the program being read
  // Forward cursor for posOf.
  const char *cursor = nullptr;
  uint32_t cursorLine = 1;
  const char *cursorLineStart = nullptr;
};

// The error code of a simdjson_result, or of an on-demand operation.
#define RANKC_TRY(expr, pos)                                                   \
  do {                                                                         \
    if (auto _e = (expr); _e != simdjson::SUCCESS)                             \
      return failJson(_e, pos);                                                \
  } while (0)

template <typename Vec> inline bool Reader::getIntList(od::value v, Vec &out) {
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

} // namespace rankc::dag

#endif // RANKC_FRONTEND_DAGREADING_H
