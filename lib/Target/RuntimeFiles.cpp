//===- RuntimeFiles.cpp - where rankc finds what it links with ------------===//

#include "rankc/Target/RuntimeFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

namespace rankc {

RuntimeFiles findRuntime(llvm::StringRef dir, const char *argv0, void *anchor,
                         std::string &why) {
  RuntimeFiles files;
  llvm::SmallString<256> folder(dir);
  std::string from = "--runtime-dir";
  if (folder.empty()) {
    if (const char *env = std::getenv("RANKC_RUNTIME_DIR"); env && *env) {
      folder = env;
      from = "RANKC_RUNTIME_DIR";
    } else {
      // The real path of the running executable (symbolic links resolved,
      // as clang does): a link to bin/rankc elsewhere still finds lib/.
      std::string exe = llvm::sys::fs::getMainExecutable(argv0, anchor);
      folder = llvm::sys::path::parent_path(exe);
      llvm::sys::path::append(folder, RANKC_RUNTIME_RELATIVE_DIR);
      llvm::sys::path::remove_dots(folder, /*remove_dot_dot=*/true);
      from = "beside rankc (" + exe + ")";
    }
  }
  files.dir = folder.str().str();
  auto inFolder = [&](llvm::StringRef name) {
    llvm::SmallString<256> path(folder);
    llvm::sys::path::append(path, name);
    return llvm::sys::fs::exists(path) ? path.str().str() : std::string();
  };
  files.host = inFolder("librankc_runtime.a");
  files.cuda = inFolder("librankc_runtime_cuda.a");
  if (files.host.empty())
    why = "no librankc_runtime.a in '" + files.dir + "' (" + from +
          "); pass --runtime-dir DIR or set RANKC_RUNTIME_DIR to the folder "
          "of rankc's runtime libraries";
  // MPICH as found when rankc was built (a system path); the variable
  // serves machines that keep it elsewhere.
  const char *mpich = std::getenv("RANKC_MPICH_LIBRARY");
  files.mpich = mpich && *mpich ? mpich : RANKC_MPICH_LIBRARY;
  // The same for LLVM's OpenMP runtime, which --threads programs need (set
  // and empty: none).
  const char *openmp = std::getenv("RANKC_OPENMP_LIBRARY");
  files.openmp = openmp ? openmp : RANKC_OPENMP_LIBRARY;
  return files;
}

} // namespace rankc
