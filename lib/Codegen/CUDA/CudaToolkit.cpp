//===- CudaToolkit.cpp - where the CUDA toolkit is, what PTX it takes -----===//
//
// The one place the compiler looks at the disk for CUDA: the pipeline itself
// takes the toolkit as an option (CudaOptions::toolkit).
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

std::string rankc::CudaOptions::findToolkit(std::string &why) {
  auto hasPtxas = [](llvm::StringRef dir) {
    llvm::SmallString<128> ptxas(dir);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    return llvm::sys::fs::can_execute(ptxas);
  };
  // The variables NVVM::getCUDAToolkitPath() reads: a toolkit named there
  // is the user's choice, so a wrong one is an error, not a fallback.
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(var); v && *v) {
      if (hasPtxas(v))
        return v;
      why = std::string(var) + "=" + v + " has no bin/ptxas";
      return "";
    }
  if (hasPtxas("/usr/local/cuda"))
    return "/usr/local/cuda";
  if (auto ptxas = llvm::sys::findProgramByName("ptxas"))
    return llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
        .str();
  why = "no ptxas in /usr/local/cuda/bin or on PATH; set CUDA_HOME";
  return "";
}

std::string rankc::CudaOptions::defaultFeatures(llvm::StringRef chip) {
  // The PTX ISA that CUDA 13's ptxas takes for the chip: 8.0 up to Hopper,
  // 8.7 for Blackwell (sm_100 and later).
  unsigned number = 0;
  if (chip.starts_with("sm_"))
    (void)chip.drop_front(3).take_while(llvm::isDigit).getAsInteger(10, number);
  return number >= 100 ? "+ptx87" : "+ptx80";
}

