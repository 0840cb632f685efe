/* Force-included (-include) into every file of the ASan builds
 * (RANKC_SANITIZE, RANKC_FUZZ).
 *
 * LLVM's header-only allocators (BumpPtrAllocator, behind MLIR's
 * StorageUniquer) poison the unused rest of each slab when the including
 * file is compiled with ASan. Debian's libLLVM and libMLIR are not, yet
 * they allocate from the same slabs through their own copies of that code,
 * which never unpoison: memory they hand out then reads as poisoned
 * (use-after-poison in mlir::FileLineColRange::get, from the fuzzer). So
 * our copies do not poison either: ASan still checks everything else. */
#ifndef RANKC_ASAN_WITH_UNINSTRUMENTED_LLVM_H
#define RANKC_ASAN_WITH_UNINSTRUMENTED_LLVM_H
#ifdef __cplusplus
#include "llvm/Support/Compiler.h"
#undef __asan_poison_memory_region
#undef __asan_unpoison_memory_region
#define __asan_poison_memory_region(p, size) ((void)(p), (void)(size))
#define __asan_unpoison_memory_region(p, size) ((void)(p), (void)(size))
#endif
#endif
