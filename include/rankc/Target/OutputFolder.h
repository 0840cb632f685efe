//===- OutputFolder.h - what rankc may replace, and how --------*- C++ -*-===//
//
// `rankc compile -o OUT` owns OUT only when an earlier compile wrote it
// (cli.md, "OUT is rankc's"): every folder a compile writes carries a
// marker file, and a compile replaces only a folder with that marker, or an
// empty one, or nothing. A file, a folder of someone else's, the current
// folder (or one above it) and a folder that holds the input are refused
// and left exactly as they were.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TARGET_OUTPUTFOLDER_H
#define RANKC_TARGET_OUTPUTFOLDER_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <system_error>

namespace rankc {

/// The marker file in every folder `rankc compile` writes.
inline constexpr llvm::StringLiteral kOutputMarker = ".rankc-out";

/// Whether a compile may put a folder (--emit exe|lib) at `out`, reading
/// `input`: an empty string if so, otherwise why not (a sentence naming
/// OUT, for an `error:` line).
std::string whyNotOutputFolder(llvm::StringRef out, llvm::StringRef input);

/// Whether a compile may write a file (--emit mlir|plan|dot|ptx, a
/// depfile) at `out`: a regular file is replaced, a folder never.
std::string whyNotOutputFile(llvm::StringRef out);

/// Writes the marker into `folder` (a build being staged).
std::error_code writeOutputMarker(llvm::StringRef folder);

/// Makes a fresh folder beside `out` (same file system, so that the swap is
/// a rename) to stage a build in: `<out>.rankc-tmp-XXXXXX`.
std::error_code makeStageBeside(llvm::StringRef out, std::string &stage);

/// Puts the folder `stage` at `out` in one step: a rename when nothing is
/// at `out`, otherwise an atomic exchange (Linux's renameat2) after which
/// the old folder, rankc's by the check above, is removed. A reader sees
/// the old OUT or the new one, never none.
std::error_code swapIntoPlace(llvm::StringRef stage, llvm::StringRef out);

} // namespace rankc

#endif // RANKC_TARGET_OUTPUTFOLDER_H
