//===- Outputs.cpp - what the driver writes, and how it reports -----------===//
//
// Every file rankc writes goes through here: OUT's rule (cli.md, "OUT is
// rankc's"), whole-or-nothing writes, the depfile; and every diagnostic is
// printed as `error: FILE:LINE:COL: program [r], node 'x': message`.
//
//===----------------------------------------------------------------------===//

#include "rankc/Driver/Commands.h"
#include "rankc/Support/DagLocations.h"
#include "rankc/Target/Executable.h"
#include "rankc/Target/OutputFolder.h"
#include "rankc/Target/PrintMLIR.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace rankc;

/// Prints diagnostics as `error: FILE:LINE:COL: program [r], node 'x': msg`.
LogicalResult rankc::printDiagnostic(Diagnostic &diag) {
  auto print = [](Diagnostic &d, llvm::StringRef severity) {
    llvm::errs() << severity << ": ";
    if (auto file = d.getLocation()->findInstanceOf<FileLineColLoc>()) {
      llvm::errs() << file.getFilename().getValue();
      if (file.getLine())
        llvm::errs() << ":" << file.getLine() << ":" << file.getColumn();
      llvm::errs() << ": ";
    }
    std::string where = dag::describeDagLoc(d.getLocation());
    if (!where.empty())
      llvm::errs() << where << ": ";
    llvm::errs() << d.str() << "\n";
  };
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error: print(diag, "error"); break;
  case DiagnosticSeverity::Warning: print(diag, "warning"); break;
  case DiagnosticSeverity::Note: print(diag, "note"); break;
  case DiagnosticSeverity::Remark: print(diag, "remark"); break;
  }
  for (Diagnostic &note : diag.getNotes())
    print(note, "note");
  return success();
}

/// Writes OUT (or standard output for "-") whole, or not at all: into a
/// temporary file beside it, renamed over OUT once complete, so that a
/// failed write leaves an earlier OUT as it was.
int rankc::writeOutput(const DriverOptions &o,
                llvm::function_ref<LogicalResult(llvm::raw_ostream &)> write) {
  std::string why = whyNotOutputFile(o.output);
  if (!why.empty()) {
    llvm::errs() << "error: " << why << "\n";
    return 1;
  }
  bool wrote = true;
  llvm::Error err = llvm::writeToOutput(o.output, [&](llvm::raw_ostream &os) {
    wrote = succeeded(write(os));
    // A failure is already reported; the temporary file is then dropped.
    return wrote ? llvm::Error::success()
                 : llvm::createStringError(std::errc::io_error, "");
  });
  if (err) {
    std::string text = llvm::toString(std::move(err));
    if (wrote)
      llvm::errs() << "error: cannot write '" << o.output << "': " << text
                   << "\n";
    return 1;
  }
  return 0;
}

/// The output rule of cli.md ("OUT is rankc's"), checked before any work:
/// a refused OUT (or depfile) is named and left exactly as it was.
bool rankc::outputAllowed(const DriverOptions &o) {
  std::string why;
  if (o.command == "compile" && (o.emit == "exe" || o.emit == "lib"))
    why = whyNotOutputFolder(o.output, o.input);
  else if (o.command != "check")
    why = whyNotOutputFile(o.output);
  if (why.empty() && !o.depfile.empty())
    why = whyNotOutputFile(o.depfile);
  if (!why.empty())
    llvm::errs() << "error: " << why << "\n";
  return why.empty();
}

/// The files `rankc compile` writes with these options.
std::vector<std::string> rankc::outputsOf(ModuleOp module, const DriverOptions &o) {
  if (o.emit == "exe" || o.emit == "lib")
    return programOutputs(
        module, o.output, o.emit == "lib" ? Emit::Lib : Emit::Exe);
  return {o.output};
}

static std::string absolute(llvm::StringRef path) {
  llvm::SmallString<256> p(path);
  llvm::sys::fs::make_absolute(p);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return p.str().str();
}

/// --depfile: a Make rule "first-output: every file this compile read",
/// for Ninja's and Make's dependency tracking (CMake's DEPFILE).
int rankc::writeDepfile(const DriverOptions &o, llvm::ArrayRef<std::string> outputs,
                 llvm::ArrayRef<std::string> read) {
  auto escape = [](llvm::StringRef path) {
    std::string s;
    for (char c : path) {
      if (c == ' ' || c == '#' || c == '\\')
        s += '\\';
      if (c == '$')
        s += '$';
      s += c;
    }
    return s;
  };
  std::string text = escape(absolute(outputs.front())) + ":";
  for (const std::string &f : read)
    text += " \\\n  " + escape(absolute(f));
  text += "\n";
  DriverOptions file = o;
  file.output = o.depfile;
  return writeOutput(file, [&](llvm::raw_ostream &os) {
    os << text;
    return success();
  });
}

int rankc::emitMLIR(ModuleOp module, const DriverOptions &o) {
  return writeOutput(o, [&](llvm::raw_ostream &os) {
    printMLIR(module, os);
    return success();
  });
}

