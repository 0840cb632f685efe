//===- CompileCache.h - finished builds kept by content --------*- C++ -*-===//
//
// `rankc compile --cache-dir DIR` (or $RANKC_CACHE_DIR): a build system that
// recompiles an unchanged DAG (a fresh build tree, another checkout, CI)
// gets the outputs of the first build copied instead of built again. An
// entry is keyed by a SHA-256 of everything the outputs depend on: rankc's
// own executable, the runtime it links, the input's bytes and name, and
// every option; the outputs never depend on OUT's path or the machine's
// cores (test/Target/parallel-build.test), so a copy is the build.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_DRIVER_COMPILECACHE_H
#define RANKC_DRIVER_COMPILECACHE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SHA256.h"

#include <string>
#include <vector>

namespace rankc {

class CompileCache {
public:
  explicit CompileCache(std::string dir) : dir(std::move(dir)) {}

  /// Adds a named value to the key.
  void add(llvm::StringRef name, llvm::StringRef value);
  /// Adds the bytes of `path` (or that it is absent) to the key.
  void addFile(llvm::StringRef name, llvm::StringRef path);

  /// The entry's folder: DIR/<hex of the key>. Fixes the key.
  const std::string &entry();

  /// A hit: the entry's tree copied to `out` (a folder, swapped in whole, or
  /// a file) and its outputs (paths relative to `out`) returned in
  /// `outputs`. False on a miss or any failure to read the entry.
  bool restore(llvm::StringRef out, std::vector<std::string> &outputs);

  /// Keeps `out` (just built) and its `outputs` as the entry. The cache is
  /// an optimization: a failure to store is a warning, not an error.
  void store(llvm::StringRef out, llvm::ArrayRef<std::string> outputs);

private:
  std::string dir, entryDir;
  llvm::SHA256 hash;
};

} // namespace rankc

#endif // RANKC_DRIVER_COMPILECACHE_H
