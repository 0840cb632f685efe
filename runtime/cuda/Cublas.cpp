//===- Cublas.cpp - cuBLAS's GEMMs, one more candidate of the tuner -------===//

#include "cuda/Cublas.h"
#include "core/Buffers.h"

#include <cublas_v2.h>

#include <cstdlib>
#include <dlfcn.h>

namespace rankc::rt::cublas {

namespace {
#define RANKC_CUBLAS_FUNCTIONS(X)                                              \
  X(cublasCreate_v2) X(cublasSetStream_v2) X(cublasSetMathMode)                \
  X(cublasSgemmStridedBatched) X(cublasDgemmStridedBatched)

struct Lib {
#define RANKC_CUBLAS_MEMBER(name) decltype(&::name) name = nullptr;
  RANKC_CUBLAS_FUNCTIONS(RANKC_CUBLAS_MEMBER)
#undef RANKC_CUBLAS_MEMBER
  cublasHandle_t handle = nullptr;
  bool ok = false;
};

Lib &lib() {
  static Lib l;
  return l;
}

void check(cublasStatus_t s, const char *call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fail("cuBLAS: %s failed (status %d)", call, int(s));
}
} // namespace

bool available(const std::string &ltPath) {
  static bool opened = [&] {
    Lib &l = lib();
    std::string beside;
    if (size_t slash = ltPath.rfind('/'); slash != std::string::npos)
      beside = ltPath.substr(0, slash + 1) + "libcublas.so.13";
    const char *env = std::getenv("RANKC_CUBLAS");
    void *h = nullptr;
    for (const std::string &c :
         {std::string(env ? env : ""), beside, std::string("libcublas.so.13")})
      if (!c.empty() && (h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!h)
      return false;
#define RANKC_CUBLAS_LOAD(name)                                                \
  l.name = reinterpret_cast<decltype(l.name)>(dlsym(h, #name));                \
  if (!l.name)                                                                 \
    return false;
    RANKC_CUBLAS_FUNCTIONS(RANKC_CUBLAS_LOAD)
#undef RANKC_CUBLAS_LOAD
    if (l.cublasCreate_v2(&l.handle) != CUBLAS_STATUS_SUCCESS)
      return false;
    // Exact f32: no TF32 tensor cores (PyTorch's default for matmul).
    check(l.cublasSetMathMode(l.handle, CUBLAS_DEFAULT_MATH),
          "cublasSetMathMode");
    l.ok = true;
    return true;
  }();
  return opened;
}

void gemm(void *stream, bool f64, int64_t batch, int64_t m, int64_t n,
          int64_t k, int64_t a, int64_t b, int64_t c, bool accumulate,
          bool transA, bool transB, bool broadcastB) {
  Lib &l = lib();
  check(l.cublasSetStream_v2(l.handle, static_cast<cudaStream_t>(stream)),
        "cublasSetStream");
  // Column-major: C^T (n x m) = op(B)^T (n x k) op(A)^T (k x m).
  cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                    opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  int ldb = transB ? k : n, lda = transA ? m : k, ldc = n;
  long long strideB = broadcastB ? 0 : k * n, strideA = m * k, strideC = m * n;
  if (f64) {
    double one = 1, beta = accumulate ? 1 : 0;
    check(l.cublasDgemmStridedBatched(
              l.handle, opB, opA, n, m, k, &one,
              reinterpret_cast<const double *>(b), ldb, strideB,
              reinterpret_cast<const double *>(a), lda, strideA, &beta,
              reinterpret_cast<double *>(c), ldc, strideC, batch),
          "cublasDgemmStridedBatched");
  } else {
    float one = 1, beta = accumulate ? 1 : 0;
    check(l.cublasSgemmStridedBatched(
              l.handle, opB, opA, n, m, k, &one,
              reinterpret_cast<const float *>(b), ldb, strideB,
              reinterpret_cast<const float *>(a), lda, strideA, &beta,
              reinterpret_cast<float *>(c), ldc, strideC, batch),
          "cublasSgemmStridedBatched");
  }
}

} // namespace rankc::rt::cublas
