//===- Link.cpp - object files to executables and shared libraries --------===//

#include "Link.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <utility>
#include <vector>

using namespace mlir;

namespace rankc {

namespace {
/// The driver's -fuse-ld flag for the fastest linker found, or none (the
/// system's ld). A program of 1,000 nodes, linked with the runtime and
/// MPICH: ld.bfd 50-70 ms, gold 20 ms, lld 14 30 ms; at 10^3 nodes the
/// link was a third of each program's build. The output is the same
/// program whichever links it.
llvm::StringRef fastLinkerFlag() {
  static const std::string flag = [] {
    for (auto [tool, option] :
         {std::pair{"ld.gold", "-fuse-ld=gold"}, {"ld.lld", "-fuse-ld=lld"}})
      if (llvm::sys::findProgramByName(tool))
        return std::string(option);
    return std::string();
  }();
  return flag;
}

LogicalResult runLinker(MLIRContext *ctx, llvm::StringRef output,
                        llvm::ArrayRef<std::string> flags) {
  auto cxx = llvm::sys::findProgramByName("c++");
  if (!cxx)
    return emitError(UnknownLoc::get(ctx))
           << "cannot link: no C++ compiler ('c++') on PATH";
  std::vector<llvm::StringRef> args = {*cxx};
  if (!fastLinkerFlag().empty())
    args.push_back(fastLinkerFlag());
  for (const std::string &f : flags)
    args.push_back(f);
  std::string errors;
  int rc = llvm::sys::ExecuteAndWait(*cxx, args, std::nullopt, {}, 0, 0,
                                     &errors);
  if (rc != 0)
    return emitError(UnknownLoc::get(ctx))
           << "linking '" << output << "' failed (" << rc << "): " << errors;
  return success();
}

/// The OpenMP runtime's link flags: the library, and its folder as an
/// rpath (it is seldom in the loader's default paths: /usr/lib/llvm-N/lib).
void addOpenMP(std::vector<std::string> &flags, llvm::StringRef openmp) {
  if (openmp.empty())
    return;
  flags.push_back(openmp.str());
  flags.push_back("-Wl,-rpath," + llvm::sys::path::parent_path(openmp).str());
}
} // namespace

llvm::ArrayRef<const char *> libraryFunctions() {
  // Runtime/Library.cpp defines each as rankc_lib_<name>.
  static const char *names[] = {
      "init",          "step",         "finalize",      "last_error",
      "rank",          "world_size",   "steps_done",    "num_inputs",
      "num_outputs",   "input_name",   "input_dtype",   "input_rank",
      "input_shape",   "input_is_state", "output_name", "output_alias",
      "output_dtype",  "output_rank",  "output_shape", "step_count",
      "save",          "load"};
  return names;
}

LogicalResult linkExecutable(MLIRContext *ctx,
                             llvm::ArrayRef<std::string> objects,
                             llvm::StringRef archive, llvm::StringRef mpich,
                             llvm::StringRef exe, llvm::StringRef openmp) {
  // The CUDA runtime opens the driver itself (dlopen).
  std::vector<std::string> flags(objects.begin(), objects.end());
  flags.insert(flags.end(), {archive.str(), mpich.str()});
  addOpenMP(flags, openmp);
  flags.insert(flags.end(), {"-lm", "-ldl", "-o", exe.str()});
  return runLinker(ctx, exe, flags);
}

LogicalResult linkLibrary(MLIRContext *ctx, llvm::ArrayRef<std::string> objects,
                          llvm::StringRef archive, llvm::StringRef mpich,
                          llvm::StringRef program, llvm::StringRef so,
                          llvm::StringRef openmp) {
  std::string prefix = "rankc_" + program.str() + "_";
  // A version script keeps the API global and every other symbol local.
  llvm::SmallString<256> script(so);
  script += ".map";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(script, ec);
    if (ec)
      return emitError(UnknownLoc::get(ctx))
             << "cannot write '" << script << "': " << ec.message();
    os << "{ global: " << prefix << "*; local: *; };\n";
  }
  std::string soname = llvm::sys::path::filename(so).str();
  std::vector<std::string> flags = {
      "-shared", "-o", so.str()};
  flags.insert(flags.end(), objects.begin(), objects.end());
  flags.insert(flags.end(), {
      // Library.o of the runtime holds the API: pull it in.
      "-Wl,-u,rankc_lib_init", archive.str(), mpich.str(), "-lm", "-ldl",
      "-Wl,-soname," + soname, "-Wl,--version-script," + script.str().str(),
      "-Wl,--no-undefined"});
  addOpenMP(flags, openmp);
  for (const char *f : libraryFunctions())
    flags.push_back("-Wl,--defsym," + prefix + f + "=rankc_lib_" + f);
  LogicalResult linked = runLinker(ctx, so, flags);
  llvm::sys::fs::remove(script);
  return linked;
}

} // namespace rankc
