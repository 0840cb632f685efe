//===- Blas.cpp - the CPU's GEMMs through a system BLAS -------------------===//
//
// rankc-cpu-library-calls replaces every contraction that is one (batched)
// GEMM by a call of rankc_rt_cpu_gemm. A tuned BLAS (OpenBLAS, BLIS) runs
// them several times faster than any loop nest the CPU pipeline generates,
// so the runtime opens one at run time, the way the CUDA runtime opens the
// driver: RANKC_BLAS names a library to use; otherwise Debian's OpenBLAS
// (libopenblas.so.0), then whatever provides libblas.so.3 (CBLAS is part
// of Debian's reference BLAS too). A threaded OpenBLAS is told to use one
// thread: MPI codes run a rank per core, and under --threads the rank's
// OpenMP threads share a GEMM by rows or columns (rankc_rt_cpu_gemm_block),
// each on a single-threaded BLAS. Without any BLAS the GEMM runs in the
// loop below:
// correct, slow, and said once on stderr so that nobody benchmarks it
// unknowingly.
// RANKC_BLAS=none asks for that loop (tests compare the two).
//
//===----------------------------------------------------------------------===//

#include "core/Buffers.h"
#include "rankc_runtime.h"

#include <cblas.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>

namespace {

struct Blas {
  decltype(&::cblas_sgemm) sgemm = nullptr;
  decltype(&::cblas_dgemm) dgemm = nullptr;
  void (*setThreads)(int) = nullptr; // openblas_set_num_threads, if any
  std::string name;
  /// Safe to call from several threads at once. A single-threaded OpenBLAS
  /// built without USE_LOCKING (Debian's libopenblas0-serial) is not: its
  /// callers share one table of work buffers, and concurrent GEMMs compute
  /// garbage now and then. BLIS, a threaded or locking OpenBLAS and the
  /// loop below are.
  bool reentrant = true;
};

/// `candidate` as a CBLAS, or a Blas without sgemm.
Blas open(const char *candidate) {
  Blas l;
  void *h = dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return l;
  auto s = reinterpret_cast<decltype(l.sgemm)>(dlsym(h, "cblas_sgemm"));
  auto d = reinterpret_cast<decltype(l.dgemm)>(dlsym(h, "cblas_dgemm"));
  if (!s || !d) {
    dlclose(h);
    return l;
  }
  l.sgemm = s;
  l.dgemm = d;
  l.setThreads =
      reinterpret_cast<void (*)(int)>(dlsym(h, "openblas_set_num_threads"));
  if (l.setThreads)
    l.setThreads(1);
  if (auto config = reinterpret_cast<const char *(*)()>(
          dlsym(h, "openblas_get_config"))) {
    const char *c = config();
    l.reentrant = !std::strstr(c, "SINGLE_THREADED") ||
                  std::strstr(c, "USE_LOCKING");
  }
  l.name = candidate;
  return l;
}

const Blas &blas() {
  static Blas b = [] {
    const char *env = std::getenv("RANKC_BLAS");
    if (env && std::strcmp(env, "none") == 0)
      return Blas();
    for (const char *candidate :
         {env, "libopenblas.so.0", "libblis.so.4", "libblas.so.3"}) {
      if (!candidate || !*candidate)
        continue;
      Blas l = open(candidate);
      if (l.sgemm)
        return l;
      if (candidate == env)
        std::fprintf(stderr,
                     "warning: RANKC_BLAS=%s cannot be opened as a CBLAS; "
                     "looking for another BLAS\n",
                     env);
    }
    std::fprintf(stderr, "warning: no BLAS found (libopenblas.so.0, "
                         "libblas.so.3; or set RANKC_BLAS): GEMMs run in "
                         "the runtime's own slow loop\n");
    return Blas();
  }();
  return b;
}

/// The BLAS that the threads of --threads call at once: blas() if it is
/// reentrant; else BLIS, if there is one and RANKC_BLAS chose nothing; else
/// blas() one call at a time (`serialized`), which a warning says once.
struct SharedBlas {
  const Blas *blas;
  bool serialized;
};
const SharedBlas &sharedBlas() {
  static Blas blis;
  static SharedBlas shared = []() -> SharedBlas {
    const Blas &first = blas();
    if (first.reentrant)
      return {&first, false};
    const char *env = std::getenv("RANKC_BLAS");
    if (!(env && *env)) {
      blis = open("libblis.so.4");
      if (blis.sgemm)
        return {&blis, false};
    }
    std::fprintf(stderr,
                 "warning: %s is a single-threaded OpenBLAS that is not safe "
                 "to call from several threads at once: the GEMMs of "
                 "--threads run one at a time; install BLIS (Debian's "
                 "libblis4-serial) or set RANKC_BLAS to a thread-safe BLAS\n",
                 first.name.c_str());
    return {&first, true};
  }();
  return shared;
}

/// C = op(A) op(B) (+ C): the fallback, row-major, i-k-j order so that the
/// inner loop is contiguous in B and C; rows of A, B and C `lda`, `ldb`
/// and `ldc` apart.
template <typename T>
void loopGemm(const T *a, const T *b, T *c, int64_t m, int64_t n, int64_t k,
              int64_t lda, int64_t ldb, int64_t ldc, bool accumulate,
              bool transA, bool transB) {
  for (int64_t i = 0; i < m; ++i) {
    T *row = c + i * ldc;
    if (!accumulate)
      std::memset(row, 0, sizeof(T) * n);
    for (int64_t p = 0; p < k; ++p) {
      T x = transA ? a[p * lda + i] : a[i * lda + p];
      if (transB)
        for (int64_t j = 0; j < n; ++j)
          row[j] += x * b[j * ldb + p];
      else
        for (int64_t j = 0; j < n; ++j)
          row[j] += x * b[p * ldb + j];
    }
  }
}

/// Block [m0, m1) x [n0, n1) of every batch's C: the whole GEMM, or one
/// thread's share of it (--threads: rankc-cpu-library-calls splits M or N
/// among the threads).
template <typename T, typename Gemm>
void gemms(Gemm gemm, const T *a, const T *b, T *c, int64_t batch, int64_t m,
           int64_t n, int64_t k, bool accumulate, bool transA, bool transB,
           bool broadcastB, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  int64_t rows = m1 - m0, cols = n1 - n0;
  int64_t lda = transA ? m : k, ldb = transB ? k : n;
  for (int64_t i = 0; i < batch; ++i) {
    // Row m0 of A is at m0 * k; of A stored transposed ([k, m]), column m0.
    // Column n0 of B is at n0; of B stored transposed ([n, k]), row n0.
    const T *ai = a + i * m * k + (transA ? m0 : m0 * k),
            *bi = b + (broadcastB ? 0 : i * k * n) + (transB ? n0 * k : n0);
    T *ci = c + i * m * n + m0 * n + n0;
    if (!gemm) {
      loopGemm(ai, bi, ci, rows, cols, k, lda, ldb, n, accumulate, transA,
               transB);
      continue;
    }
    gemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
         transB ? CblasTrans : CblasNoTrans, int(rows), int(cols), int(k),
         T(1), ai, int(lda), bi, int(ldb), T(accumulate ? 1 : 0), ci, int(n));
  }
}

} // namespace

extern "C" {

/// Block [m0, m1) x [n0, n1) of rankc_rt_cpu_gemm's C (of every batch;
/// bounds past the matrix are clamped): what one thread computes under
/// --threads.
void rankc_rt_cpu_gemm_block(int64_t a, int64_t b, int64_t c, int64_t batch,
                             int64_t m, int64_t n, int64_t k, int32_t dtype,
                             int32_t accumulate, int32_t transA, int32_t transB,
                             int32_t /*precision*/, int32_t broadcastB,
                             int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  // CBLAS takes int dimensions; larger ones than that are split by the
  // frontend's size limits long before (2^31 rows of a matrix).
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
    rankc::rt::fail("a GEMM of %lld x %lld x %lld is beyond CBLAS's int "
                    "dimensions",
                    (long long)m, (long long)n, (long long)k);
  m1 = m1 < m ? m1 : m;
  n1 = n1 < n ? n1 : n;
  if (m0 >= m1 || n0 >= n1 || batch == 0)
    return;
  size_t elem = dtype == RANKC_F64 ? 8 : 4;
  if (k == 0) { // a sum over nothing (CBLAS refuses a leading dimension 0)
    if (!accumulate)
      for (int64_t i = 0; i < batch; ++i)
        for (int64_t r = m0; r < m1; ++r)
          std::memset(reinterpret_cast<char *>(c) +
                          ((i * m + r) * n + n0) * elem,
                      0, size_t(n1 - n0) * elem);
    return;
  }
  // Blocks of a GEMM that --threads shares come in concurrently; the whole
  // GEMM comes from one thread.
  bool whole = m0 == 0 && m1 == m && n0 == 0 && n1 == n;
  const SharedBlas shared =
      whole ? SharedBlas{&blas(), false} : sharedBlas();
  const Blas &l = *shared.blas;
  static std::mutex oneAtATime;
  std::unique_lock<std::mutex> lock(oneAtATime, std::defer_lock);
  if (shared.serialized)
    lock.lock();
  if (dtype == RANKC_F64)
    gemms(l.dgemm, reinterpret_cast<const double *>(a),
          reinterpret_cast<const double *>(b), reinterpret_cast<double *>(c),
          batch, m, n, k, accumulate, transA, transB, broadcastB, m0, m1, n0,
          n1);
  else
    gemms(l.sgemm, reinterpret_cast<const float *>(a),
          reinterpret_cast<const float *>(b), reinterpret_cast<float *>(c),
          batch, m, n, k, accumulate, transA, transB, broadcastB, m0, m1, n0,
          n1);
}

/// C[b] = A[b] B[b] (+ C[b] when accumulate), row-major, b < batch (B the
/// same for every batch when broadcastB): the arguments of the GPU's
/// rankc_rt_gemm (runtime/cuda/CublasLt.cpp) on host addresses, since both come
/// from one call builder (GemmMatch.cpp); dtype 6 (f32) or 7 (f64).
/// `precision` (TF32 or not) means nothing on the CPU: f32 is exact here.
void rankc_rt_cpu_gemm(int64_t a, int64_t b, int64_t c, int64_t batch,
                       int64_t m, int64_t n, int64_t k, int32_t dtype,
                       int32_t accumulate, int32_t transA, int32_t transB,
                       int32_t precision, int32_t broadcastB) {
  rankc_rt_cpu_gemm_block(a, b, c, batch, m, n, k, dtype, accumulate, transA,
                          transB, precision, broadcastB, 0, m, 0, n);
}

} // extern "C"
