//===- Blas.cpp - the CPU's GEMMs through a system BLAS -------------------===//
//
// rankc-cpu-library-calls replaces every contraction that is one (batched)
// GEMM by a call of rankc_rt_cpu_gemm. A tuned BLAS (OpenBLAS, BLIS) runs
// them several times faster than any loop nest the CPU pipeline generates,
// so the runtime opens one at run time, the way the CUDA runtime opens the
// driver: RANKC_BLAS names a library to use; otherwise Debian's OpenBLAS
// (libopenblas.so.0), then whatever provides libblas.so.3 (CBLAS is part
// of Debian's reference BLAS too). A threaded OpenBLAS is told to use one
// thread: MPI codes run a rank per core (rankc_rt_blas_threads changes
// that). Without any BLAS the GEMM runs in the loop below: correct, slow,
// and said once on stderr so that nobody benchmarks it unknowingly.
// RANKC_BLAS=none asks for that loop (tests compare the two).
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"

#include <cblas.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>

namespace {

struct Blas {
  decltype(&::cblas_sgemm) sgemm = nullptr;
  decltype(&::cblas_dgemm) dgemm = nullptr;
  void (*setThreads)(int) = nullptr; // openblas_set_num_threads, if any
  std::string name;
};

const Blas &blas() {
  static Blas b = [] {
    Blas l;
    const char *env = std::getenv("RANKC_BLAS");
    if (env && std::strcmp(env, "none") == 0)
      return l;
    for (const char *candidate :
         {env, "libopenblas.so.0", "libblis.so.4", "libblas.so.3"}) {
      if (!candidate || !*candidate)
        continue;
      void *h = dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        if (candidate == env)
          std::fprintf(stderr,
                       "warning: RANKC_BLAS=%s cannot be opened (%s); "
                       "looking for another BLAS\n",
                       env, dlerror());
        continue;
      }
      auto s = reinterpret_cast<decltype(l.sgemm)>(dlsym(h, "cblas_sgemm"));
      auto d = reinterpret_cast<decltype(l.dgemm)>(dlsym(h, "cblas_dgemm"));
      if (!s || !d) {
        dlclose(h);
        continue;
      }
      l.sgemm = s;
      l.dgemm = d;
      l.setThreads = reinterpret_cast<void (*)(int)>(
          dlsym(h, "openblas_set_num_threads"));
      if (l.setThreads)
        l.setThreads(1);
      l.name = candidate;
      return l;
    }
    std::fprintf(stderr, "warning: no BLAS found (libopenblas.so.0, "
                         "libblas.so.3; or set RANKC_BLAS): GEMMs run in "
                         "the runtime's own slow loop\n");
    return l;
  }();
  return b;
}

/// C = op(A) op(B) (+ C): the fallback, row-major, i-k-j order so that the
/// inner loop is contiguous in B and C.
template <typename T>
void loopGemm(const T *a, const T *b, T *c, int64_t m, int64_t n, int64_t k,
              bool accumulate, bool transA, bool transB) {
  for (int64_t i = 0; i < m; ++i) {
    T *row = c + i * n;
    if (!accumulate)
      std::memset(row, 0, sizeof(T) * n);
    for (int64_t p = 0; p < k; ++p) {
      T x = transA ? a[p * m + i] : a[i * k + p];
      if (transB)
        for (int64_t j = 0; j < n; ++j)
          row[j] += x * b[j * k + p];
      else
        for (int64_t j = 0; j < n; ++j)
          row[j] += x * b[p * n + j];
    }
  }
}

template <typename T, typename Gemm>
void gemms(Gemm gemm, const T *a, const T *b, T *c, int64_t batch, int64_t m,
           int64_t n, int64_t k, bool accumulate, bool transA, bool transB,
           bool broadcastB) {
  for (int64_t i = 0; i < batch; ++i) {
    const T *ai = a + i * m * k, *bi = b + (broadcastB ? 0 : i * k * n);
    T *ci = c + i * m * n;
    if (!gemm) {
      loopGemm(ai, bi, ci, m, n, k, accumulate, transA, transB);
      continue;
    }
    gemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
         transB ? CblasTrans : CblasNoTrans, int(m), int(n), int(k), T(1), ai,
         int(transA ? m : k), bi, int(transB ? k : n), T(accumulate ? 1 : 0),
         ci, int(n));
  }
}

} // namespace

extern "C" {

/// C[b] = A[b] B[b] (+ C[b] when accumulate), row-major, b < batch (B the
/// same for every batch when broadcastB): the arguments of the GPU's
/// rankc_rt_gemm (runtime/CublasLt.cpp) on host addresses, since both come
/// from one call builder (GemmMatch.cpp); dtype 6 (f32) or 7 (f64).
/// `precision` (TF32 or not) means nothing on the CPU: f32 is exact here.
void rankc_rt_cpu_gemm(int64_t a, int64_t b, int64_t c, int64_t batch,
                       int64_t m, int64_t n, int64_t k, int32_t dtype,
                       int32_t accumulate, int32_t transA, int32_t transB,
                       int32_t /*precision*/, int32_t broadcastB) {
  // CBLAS takes int dimensions; larger ones than that are split by the
  // frontend's size limits long before (2^31 rows of a matrix).
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
    rankc::rt::fail("a GEMM of %lld x %lld x %lld is beyond CBLAS's int "
                    "dimensions",
                    (long long)m, (long long)n, (long long)k);
  if (m == 0 || n == 0 || batch == 0)
    return;
  size_t elem = dtype == 7 ? 8 : 4;
  if (k == 0) { // a sum over nothing (CBLAS refuses a leading dimension 0)
    if (!accumulate)
      std::memset(reinterpret_cast<void *>(c), 0, size_t(batch * m * n) * elem);
    return;
  }
  const Blas &l = blas();
  if (dtype == 7)
    gemms(l.dgemm, reinterpret_cast<const double *>(a),
          reinterpret_cast<const double *>(b), reinterpret_cast<double *>(c),
          batch, m, n, k, accumulate, transA, transB, broadcastB);
  else
    gemms(l.sgemm, reinterpret_cast<const float *>(a),
          reinterpret_cast<const float *>(b), reinterpret_cast<float *>(c),
          batch, m, n, k, accumulate, transA, transB, broadcastB);
}

/// Threads of the BLAS (a threaded OpenBLAS; 1 unless asked).
void rankc_rt_blas_threads(int32_t threads) {
  if (const Blas &l = blas(); l.setThreads)
    l.setThreads(threads < 1 ? 1 : threads);
}

} // extern "C"
