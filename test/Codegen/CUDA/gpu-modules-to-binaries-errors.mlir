// RUN: rankc-opt %s -split-input-file -verify-diagnostics -rankc-gpu-modules-to-binaries="format=isa"
// RUN: not rankc-opt %s -rankc-gpu-modules-to-binaries="format=cubin" 2>&1 | FileCheck %s --check-prefix=FORMAT

// FORMAT: error: unknown GPU binary format 'cubin' (llvm, isa, bin or fatbin)

module attributes {gpu.container_module} {
  // expected-error @below {{gpu.module @untargeted has no target attribute to compile it for}}
  gpu.module @untargeted {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

// A module that does not translate to LLVM IR (an op left unlowered)
// fails, named, beside the translation's own error; its sibling is fine.
module attributes {gpu.container_module} {
  gpu.module @good [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
  // expected-error @below {{Failed creating the llvm::Module}}
  // expected-error @below {{cannot serialize gpu.module @bad for #nvvm.target}}
  gpu.module @bad [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
      // expected-error @below {{cannot be converted to LLVM IR}}
      %c = arith.constant 1 : i32
      llvm.return
    }
  }
}
