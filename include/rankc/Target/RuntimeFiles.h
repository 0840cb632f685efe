//===- RuntimeFiles.h - where rankc finds what it links with ----*- C++ -*-===//
//
// Generated programs are linked with the runtime archives (and MPICH). rankc
// finds them relative to its own executable, as clang finds its resource
// directory: <bin>/../lib/rankc, which is where both the build tree and an
// installed tree put them, wherever that tree was moved. --runtime-dir or
// $RANKC_RUNTIME_DIR name another folder.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TARGET_RUNTIMEFILES_H
#define RANKC_TARGET_RUNTIMEFILES_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace rankc {

struct RuntimeFiles {
  std::string dir;   ///< the folder searched
  std::string host;  ///< librankc_runtime.a
  std::string cuda;  ///< librankc_runtime_cuda.a, or empty: not built
  std::string mpich; ///< MPICH's shared library
  /// LLVM's OpenMP runtime (libomp.so.5), for --threads; empty: none known.
  std::string openmp;
};

/// The runtime of this rankc: `dir` if not empty, else $RANKC_RUNTIME_DIR,
/// else <folder of the running rankc>/../lib/rankc. `argv0` and `anchor`
/// (any function of the executable) locate it. On failure `why` says what
/// is missing and the result's `host` is empty.
RuntimeFiles findRuntime(llvm::StringRef dir, const char *argv0, void *anchor,
                         std::string &why);

} // namespace rankc

#endif // RANKC_TARGET_RUNTIMEFILES_H
