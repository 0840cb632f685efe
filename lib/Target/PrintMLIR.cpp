//===- PrintMLIR.cpp - the module as `.mlir` text -------------------------===//
//
// MLIR's printer runs on one thread and walks the module twice (once to
// choose aliases, once to print): a 10^6-node module took 7 s of a 13 s
// `--emit mlir`. Top-level ops are isolated from above, so each can be
// printed with a local scope (its own SSA names, no aliases) on a thread of
// its own and the texts joined in module order.
//
//===----------------------------------------------------------------------===//

#include "rankc/Target/PrintMLIR.h"

#include "mlir/IR/Threading.h"

using namespace mlir;

namespace rankc {

static OpPrintingFlags printingFlags() {
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  // Verified after the passes already: printing would verify it again
  // (seconds at 10^6 nodes) to choose between the custom and generic form.
  flags.assumeVerified();
  return flags;
}

/// `text` with every line indented by two spaces, as nested in the module.
static std::string indented(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    if (!line.empty())
      out.append("  ").append(line.data(), line.size());
    out.push_back('\n');
    text = rest;
  }
  return out;
}

void printMLIR(ModuleOp module, llvm::raw_ostream &os) {
  int64_t ops = 0;
  module->walk([&](Operation *) { ++ops; });
  if (ops <= kParallelPrintOps) {
    module->print(os, printingFlags());
    return;
  }
  OpPrintingFlags flags = printingFlags();
  flags.useLocalScope();

  // The module's own line and its closing brace and location: an empty
  // copy of it, printed, split where its body would be.
  std::string shellText;
  {
    Operation *shell = module->cloneWithoutRegions();
    shell->getRegion(0).emplaceBlock();
    llvm::raw_string_ostream s(shellText);
    shell->print(s, flags);
    shell->erase();
  }
  // An attribute dictionary holds braces too: the body's are the last "}"
  // and the last "{\n" before it.
  size_t close = shellText.rfind('}');
  size_t open = llvm::StringRef(shellText).substr(0, close).rfind("{\n");

  std::vector<Operation *> body;
  for (Operation &op : module.getBody()->getOperations())
    body.push_back(&op);
  std::vector<std::string> texts(body.size());
  parallelFor(module.getContext(), 0, body.size(), [&](size_t i) {
    std::string text;
    llvm::raw_string_ostream s(text);
    body[i]->print(s, flags);
    s << "\n";
    texts[i] = indented(text);
  });
  os << llvm::StringRef(shellText).substr(0, open + 2);
  for (const std::string &text : texts)
    os << text;
  os << llvm::StringRef(shellText).substr(close);
}

} // namespace rankc
