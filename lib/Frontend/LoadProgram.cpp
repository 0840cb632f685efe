//===- LoadProgram.cpp - a rankc input file as a module -------------------===//

#include "rankc/Frontend/LoadProgram.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Frontend/DagImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

/// `[` integers separated by commas `]`, with whitespace anywhere between.
static bool isIntegerList(StringRef s) {
  s = s.ltrim();
  if (!s.consume_front("["))
    return false;
  s = s.ltrim();
  if (s.consume_front("]"))
    return true;
  while (true) {
    s.consume_front("-");
    size_t digits = s.find_first_not_of("0123456789");
    if (digits == 0 || digits == StringRef::npos)
      return false;
    s = s.drop_front(digits).ltrim();
    if (s.consume_front("]"))
      return true;
    if (!s.consume_front(","))
      return false;
    s = s.ltrim();
  }
}

/// The JSON checker's limit on a value's size (DagChecker::checkBytes),
/// for the tensors of an .mlir input: more than 2^47 bytes is more than a
/// process can address.
static LogicalResult checkValueSizes(ModuleOp module) {
  constexpr __int128 kMaxBytes = __int128(1) << 47;
  auto tooLarge = [&](Type type, Location loc) {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || !t.hasStaticShape() || !t.getElementType().isIntOrIndexOrFloat())
      return false;
    unsigned bits = t.getElementType().isIndex()
                        ? 64
                        : t.getElementType().getIntOrFloatBitWidth();
    __int128 bytes = (bits + 7) / 8;
    for (int64_t d : t.getShape())
      if ((bytes *= d) > kMaxBytes)
        break;
    if (bytes <= kMaxBytes)
      return false;
    emitError(loc) << "a value of type " << type
                   << " takes more bytes than a process can address (2^47)";
    return true;
  };
  WalkResult walk = module.walk([&](Operation *op) {
    for (Value v : op->getResults())
      if (tooLarge(v.getType(), op->getLoc()))
        return WalkResult::interrupt();
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (BlockArgument a : b.getArguments())
          if (tooLarge(a.getType(), op->getLoc()))
            return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// `array<i64>` or `array<i64: ` integers separated by commas `>`.
static bool isI64Array(StringRef s) {
  if (!s.consume_front("array<i64"))
    return false;
  s = s.ltrim();
  if (s.consume_front(">"))
    return true;
  if (!s.consume_front(":"))
    return false;
  // The same integers as a list, between ':' and '>'.
  size_t end = s.find('>');
  return end != StringRef::npos &&
         isIntegerList(("[" + s.take_front(end) + "]").str());
}

LogicalResult rankc::refuseParserHazards(MLIRContext *ctx, StringRef text,
                                         StringRef file) {
  unsigned line = 1;
  for (StringRef rest = text; !rest.empty(); ++line) {
    auto [current, next] = rest.split('\n');
    rest = next;
    StringRef code = current.take_front(current.find("//"));
    for (StringRef keyword : {"permutation", "dimensions"}) {
      for (size_t at = code.find(keyword); at != StringRef::npos;
           at = code.find(keyword, at + 1)) {
        bool word = (at == 0 || !(llvm::isAlnum(code[at - 1]) ||
                                  code[at - 1] == '_')) &&
                    (at + keyword.size() == code.size() ||
                     !(llvm::isAlnum(code[at + keyword.size()]) ||
                       code[at + keyword.size()] == '_'));
        StringRef after = code.drop_front(at + keyword.size()).ltrim();
        if (!word || !after.consume_front("="))
          continue;
        // The value may continue on the next lines: up to the closing ].
        StringRef value = text.drop_front(after.data() - text.data()).ltrim();
        if (value.starts_with("array<") ? isI64Array(value)
                                        : isIntegerList(value.take_front(
                                              value.find(']') + 1)))
          continue;
        emitError(FileLineColLoc::get(ctx, file, line, at + 1))
            << "malformed '" << keyword << "': expected [i, j, ...] (MLIR's "
            << "parser would crash on it)";
        return failure();
      }
    }
  }
  return success();
}

/// The document's fingerprint (a hash of its text), which checkpoints carry:
/// a run resumes only from a checkpoint of the same document. A module
/// rankc printed keeps the fingerprint of the document it came from.
static void setFingerprint(ModuleOp module, StringRef text) {
  if (module->hasAttr("rankc.fingerprint"))
    return;
  std::string hex;
  llvm::raw_string_ostream os(hex);
  os << llvm::format_hex_no_prefix(llvm::xxh3_64bits(text), 16);
  module->setAttr("rankc.fingerprint", StringAttr::get(module.getContext(), hex));
}

OwningOpRef<ModuleOp> rankc::loadProgram(MLIRContext *ctx, StringRef path,
                                         llvm::SourceMgr &sourceMgr,
                                         TimingScope &timing) {
  if (!path.ends_with(".mlir")) {
    OwningOpRef<ModuleOp> module = dag::translateDagToMLIR(ctx, path, timing);
    if (module)
      if (auto text = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true))
        setFingerprint(*module, (*text)->getBuffer());
    return module;
  }

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    emitError(UnknownLoc::get(ctx))
        << "cannot read '" << path << "': " << ec.message();
    return {};
  }
  if (failed(refuseParserHazards(ctx, (*buffer)->getBuffer(), path)))
    return {};
  StringRef text = (*buffer)->getBuffer();
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  TimingScope parseTimer = timing.nest("parse MLIR");
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, ctx);
  parseTimer.stop();
  if (!module)
    return {};
  if (!module->getOperation()->hasAttr(comm::CommDialect::kWorldSize)) {
    emitError(module->getLoc())
        << "not a rankc module: the module has no 'comm.world_size'";
    return {};
  }
  if (failed(checkValueSizes(*module)))
    return {};
  setFingerprint(*module, text);
  return module;
}
