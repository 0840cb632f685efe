//===- Cublas.h - cuBLAS's GEMMs, one more candidate of the tuner -*- C++ -*-===//
//
// cuBLAS's own API picks f32 GEMM kernels that cuBLASLt's heuristic does
// not offer (PyTorch's x W^T over 2048 x 1024 x 1024 runs an sm80 xmma
// kernel in 94 us; cuBLASLt's 8 best candidates take 111). CublasLt.cpp
// times this path beside cuBLASLt's for each shape and keeps the faster.
// Opened at run time beside cuBLASLt (the same folder, so the versions
// match), or $RANKC_CUBLAS; absent, the tuner simply has one less choice.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_CUBLAS_H
#define RANKC_RUNTIME_CUBLAS_H

#include <cstdint>
#include <string>

namespace rankc::rt::cublas {

/// Opens cuBLAS (once); false if it is not there. `ltPath` is where
/// cuBLASLt was opened from.
bool available(const std::string &ltPath);

/// Row-major C[b] = A[b] B[b] (+ C[b] when accumulate), exact f32 or f64,
/// with the conventions of rankc_rt_gemm, on `stream`.
void gemm(void *stream, bool f64, int64_t batch, int64_t m, int64_t n,
          int64_t k, int64_t a, int64_t b, int64_t c, bool accumulate,
          bool transA, bool transB, bool broadcastB);

} // namespace rankc::rt::cublas

#endif // RANKC_RUNTIME_CUBLAS_H
