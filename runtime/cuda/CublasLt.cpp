//===- CublasLt.cpp - contractions on the GPU through cuBLASLt ------------===//
//
// rankc-gpu-library-calls replaces the CUDA program's matmuls and batched
// matmuls by calls of rankc_rt_gemm. cuBLASLt is opened at run time, as the
// driver is (CudaDriver.cpp): $RANKC_CUBLASLT (a path), else
// libcublasLt.so.13 from the loader's path (LD_LIBRARY_PATH, ldconfig: the
// CUDA toolkit, or PyTorch's nvidia-cublas wheel), else the toolkit's
// /usr/local/cuda/lib64. A program without a matmul never opens it.
//
// f32 is computed as exact f32 (CUBLAS_COMPUTE_32F, no TF32), as PyTorch
// does with TF32 off, unless the program was compiled with --precision
// tf32 or bf16; f64 as f64. The GEMM goes on the one stream that every
// kernel of the process uses (mgpuStreamCreate), so it is ordered with the
// kernels around it without the host waiting for it.
//
//===----------------------------------------------------------------------===//

#include "core/Buffers.h"
#include "cuda/Cublas.h"
#include "cuda/CudaDriver.h"
#include "tooling/KernelStats.h"
#include "rankc_runtime.h"

#include <cublasLt.h>

#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <tuple>

namespace {

using rankc::rt::fail;

#define RANKC_CUBLASLT_FUNCTIONS(X)                                            \
  X(cublasLtCreate) X(cublasLtGetVersion) X(cublasLtMatmulDescCreate)          \
  X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate)              \
  X(cublasLtMatrixLayoutSetAttribute) X(cublasLtMatmulPreferenceCreate)        \
  X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatmulAlgoGetHeuristic)    \
  X(cublasLtMatmul)

struct Lt {
#define RANKC_LT_MEMBER(name) decltype(&::name) name = nullptr;
  RANKC_CUBLASLT_FUNCTIONS(RANKC_LT_MEMBER)
#undef RANKC_LT_MEMBER
  cublasLtHandle_t handle = nullptr;
  void *workspace = nullptr;
  std::string path;
};
constexpr size_t kWorkspace = size_t(32) << 20;
constexpr int kMaxCandidates = 32;
/// Algorithms timed per GEMM shape: the heuristic's first 8, or
/// RANKC_GEMM_CANDIDATES (1 to 32).
int candidateCount() {
  static int n = [] {
    const char *v = std::getenv("RANKC_GEMM_CANDIDATES");
    int c = v ? std::atoi(v) : 8;
    return c < 1 ? 8 : c > kMaxCandidates ? kMaxCandidates : c;
  }();
  return n;
}

void check(cublasStatus_t s, const char *call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fail("cuBLASLt: %s failed (status %d)", call, int(s));
}

Lt &lt() {
  static Lt *lib = [] {
    static Lt l;
    void *h = nullptr;
    std::string tried;
    std::string candidates[] = {
        std::getenv("RANKC_CUBLASLT") ? std::getenv("RANKC_CUBLASLT") : "",
        "libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.13"};
    for (const std::string &c : candidates) {
      if (c.empty())
        continue;
      if ((h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL))) {
        l.path = c;
        break;
      }
      tried += (tried.empty() ? "" : "; ") + std::string(dlerror());
    }
    if (!h)
      fail("no cuBLASLt for this program's matmuls (%s); set RANKC_CUBLASLT "
           "to libcublasLt.so.13 or add its folder to LD_LIBRARY_PATH",
           tried.c_str());
#define RANKC_LT_LOAD(name)                                                    \
  l.name = reinterpret_cast<decltype(l.name)>(dlsym(h, #name));                \
  if (!l.name)                                                                 \
    fail("%s lacks %s", l.path.c_str(), #name);
    RANKC_CUBLASLT_FUNCTIONS(RANKC_LT_LOAD)
#undef RANKC_LT_LOAD
    check(l.cublasLtCreate(&l.handle), "cublasLtCreate");
    l.workspace = rankc::rt::allocBuffer(kWorkspace, "cuBLASLt's workspace");
    return &l;
  }();
  return *lib;
}

using PlanKey = std::tuple<int32_t, int64_t, int64_t, int64_t, int64_t, bool,
                           bool, int32_t, bool>;

/// A GEMM's descriptors and algorithm, made once per shape.
struct Plan {
  PlanKey key;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a, b, c;
  cublasLtMatmulAlgo_t algo; // the one used
  cublasLtMatmulHeuristicResult_t candidates[kMaxCandidates];
  int found = 0;
  bool tuned = false;
  /// The shape as rankc_rt_gemm got it, for cuBLAS's API.
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool f64 = false, transA = false, transB = false, broadcastB = false,
       exact = true;
  bool bias = false;   // CUBLASLT_EPILOGUE_BIAS (rankc_rt_gemm_bias)
  bool legacy = false; // cuBLAS's API timed faster than cuBLASLt's choices
  int choice = 0;       // the candidate `algo` is
  std::string name; // for --kernel-stats
  bool named = false;
};

cublasLtMatrixLayout_t layout(cudaDataType type, int64_t rows, int64_t cols,
                              int64_t batch, int64_t stride) {
  cublasLtMatrixLayout_t m;
  check(lt().cublasLtMatrixLayoutCreate(&m, type, rows, cols, rows),
        "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    int32_t count = int32_t(batch);
    check(lt().cublasLtMatrixLayoutSetAttribute(
              m, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
          "cublasLtMatrixLayoutSetAttribute");
    check(lt().cublasLtMatrixLayoutSetAttribute(
              m, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
              sizeof stride),
          "cublasLtMatrixLayoutSetAttribute");
  }
  return m;
}

/// In a plan's key, beside RANKC_GEMM_NARROW_C: the bias epilogue
/// (rankc_rt_gemm_bias), another descriptor.
constexpr int32_t kBiasKey = 0x10000;

std::map<PlanKey, Plan> plans;
/// Choices a checkpoint carried (restoreLibraryChoices): cuBLAS's API, or
/// cuBLASLt's algorithm as its bytes.
struct Choice {
  bool legacy;
  int index; // among the heuristic's candidates, which are the same list
             // for the same GPU and library
  cublasLtMatmulAlgo_t algo;
};
std::map<PlanKey, Choice> seeded;

Plan &planFor(int32_t dtype, int64_t batch, int64_t m, int64_t n, int64_t k,
              bool transA, bool transB, int32_t precision, bool broadcastB) {
  auto key = std::make_tuple(dtype, batch, m, n, k, transA, transB, precision,
                             broadcastB);
  auto it = plans.find(key);
  if (it != plans.end())
    return it->second;
  // (The key keeps the flags: a narrow C, a bias, are other plans.)
  bool narrowC = dtype & RANKC_GEMM_NARROW_C;
  bool bias = dtype & kBiasKey;
  dtype &= ~(RANKC_GEMM_NARROW_C | kBiasKey);
  bool f64 = dtype == RANKC_F64;
  // bf16 (f16) A and B go with an f32 C, accumulated in f32, or with a C
  // of their own type rounded from that accumulator.
  bool narrow = dtype == RANKC_BF16 || dtype == RANKC_F16;
  cudaDataType type = f64 ? CUDA_R_64F : CUDA_R_32F;
  cudaDataType inputs = dtype == RANKC_BF16  ? CUDA_R_16BF
                        : dtype == RANKC_F16 ? CUDA_R_16F
                                             : type;
  Plan p;
  p.key = key;
  p.batch = batch, p.m = m, p.n = n, p.k = k, p.f64 = f64, p.transA = transA,
  p.transB = transB, p.broadcastB = broadcastB, p.bias = bias,
  p.exact = precision == 0 && !narrow; // (cuBLAS's API: f32 and f64 only)
  // --precision: f32 exactly, or on tensor cores through TF32 or BF16
  // with f32 accumulation (what PyTorch's float32_matmul_precision "high"
  // and "medium" select); f64 is always f64.
  cublasComputeType_t compute = f64              ? CUBLAS_COMPUTE_64F
                                : narrow         ? CUBLAS_COMPUTE_32F
                                : precision == 1 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                : precision == 2 ? CUBLAS_COMPUTE_32F_FAST_16BF
                                : precision == 3 ? CUBLAS_COMPUTE_32F_FAST_16F
                                                 : CUBLAS_COMPUTE_32F;
  check(lt().cublasLtMatmulDescCreate(&p.desc, compute, type),
        "cublasLtMatmulDescCreate");
  // Row-major C[m, n] = A[m, k] B[k, n] is column-major C^T = B^T A^T: the
  // column-major GEMM of B's (n x k) by A's (k x m). A row-major [k, n]
  // buffer is a column-major n x k matrix; one stored as [n, k] is k x n,
  // used transposed (and likewise for A).
  cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                    opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  check(lt().cublasLtMatmulDescSetAttribute(
            p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opB, sizeof opB),
        "cublasLtMatmulDescSetAttribute");
  check(lt().cublasLtMatmulDescSetAttribute(
            p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opA, sizeof opA),
        "cublasLtMatmulDescSetAttribute");
  if (bias) {
    // D = A B + bias, the bias (of the inputs' type, one per column of the
    // row-major C: a row of cuBLASLt's column-major C^T) added to the f32
    // sum before its one rounding; the same vector for every batch (a bias
    // batch stride of 0, cuBLASLt's default). Its address is set per call.
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    check(lt().cublasLtMatmulDescSetAttribute(p.desc,
                                              CUBLASLT_MATMUL_DESC_EPILOGUE,
                                              &epilogue, sizeof epilogue),
          "cublasLtMatmulDescSetAttribute");
    int32_t biasType = inputs;
    check(lt().cublasLtMatmulDescSetAttribute(
              p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &biasType,
              sizeof biasType),
          "cublasLtMatmulDescSetAttribute");
  }
  // (broadcastB: the same B for every batch, a batch stride of 0.)
  int64_t strideB = broadcastB ? 0 : k * n;
  p.a = transB ? layout(inputs, k, n, batch, strideB)
               : layout(inputs, n, k, batch, strideB);
  p.b = transA ? layout(inputs, m, k, batch, m * k)
               : layout(inputs, k, m, batch, m * k);
  p.c = layout(narrow && narrowC ? inputs : type, n, m, batch, m * n);
  cublasLtMatmulPreference_t pref;
  check(lt().cublasLtMatmulPreferenceCreate(&pref),
        "cublasLtMatmulPreferenceCreate");
  size_t ws = kWorkspace;
  check(lt().cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
        "cublasLtMatmulPreferenceSetAttribute");
  if (narrow && narrowC) {
    // One rounding of the f32 sum: a split-K algorithm may reduce its
    // partial sums in f32 in the workspace, not in place or in the output
    // type (bf16 partials, each rounded: results that depend on the
    // algorithm the timing picks; the GPU check's lenet saw them).
    uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    check(lt().cublasLtMatmulPreferenceSetAttribute(
              pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
              sizeof schemes),
          "cublasLtMatmulPreferenceSetAttribute");
  }
  int found = 0;
  check(lt().cublasLtMatmulAlgoGetHeuristic(lt().handle, p.desc, p.a, p.b, p.c,
                                            p.c, pref, candidateCount(),
                                            p.candidates, &found),
        "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    fail("cuBLASLt has no algorithm for a %lld x %lld x %lld GEMM (batch %lld)",
         (long long)m, (long long)n, (long long)k, (long long)batch);
  p.found = found;
  p.algo = p.candidates[0].algo;
  if (const char *v = std::getenv("RANKC_GEMM_TUNE"))
    if (std::string(v) == "0")
      p.found = 0; // the heuristic's first choice, no timing
  return plans.emplace(key, p).first->second;
}

void matmul(const Plan &p, const cublasLtMatmulAlgo_t &algo, int64_t a,
            int64_t b, int64_t c, int64_t bias, const void *alpha,
            const void *beta, CUstream stream) {
  if (p.legacy) {
    bool accumulate = p.f64 ? *static_cast<const double *>(beta) != 0
                            : *static_cast<const float *>(beta) != 0;
    rankc::rt::cublas::gemm(stream, p.f64, p.batch, p.m, p.n, p.k, a, b, c,
                            accumulate, p.transA, p.transB, p.broadcastB);
    return;
  }
  if (p.bias) {
    // (Read when the call is enqueued: plans of one shape share the
    // descriptor, each call sets its own vector.)
    const void *vector = reinterpret_cast<const void *>(bias);
    check(lt().cublasLtMatmulDescSetAttribute(p.desc,
                                              CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                              &vector, sizeof vector),
          "cublasLtMatmulDescSetAttribute");
  }
  check(lt().cublasLtMatmul(lt().handle, p.desc, alpha,
                            reinterpret_cast<void *>(b), p.a,
                            reinterpret_cast<void *>(a), p.b, beta,
                            reinterpret_cast<void *>(c), p.c,
                            reinterpret_cast<void *>(c), p.c, &algo,
                            lt().workspace, kWorkspace,
                            reinterpret_cast<cudaStream_t>(stream)),
        "cublasLtMatmul");
}

/// The heuristic's first choice is not always the fastest: for a GEMM with
/// few output tiles (a 1024 x 1024 weight gradient over K = 2048) it can
/// leave half the SMs idle where a split-K algorithm would not. The first
/// call of each shape times the candidates on the real operands into a
/// scratch C (the program's C is not touched) and keeps the fastest; for
/// exact f32 and f64 cuBLAS's own API is one more candidate (Cublas.h).
/// The host waits for that once per shape; RANKC_GEMM_TUNE=0 skips it.
void tune(Plan &p, int64_t a, int64_t b, int64_t bias, size_t cBytes,
          const void *alpha, const void *beta, CUstream stream) {
  p.tuned = true;
  if (p.found == 0) // RANKC_GEMM_TUNE=0
    return;
  bool legacy = p.exact && rankc::rt::cublas::available(lt().path);
  // A resumed run takes the choices of the run it continues, so that its
  // results are the same bits (timing could choose another algorithm, and
  // another algorithm rounds differently).
  if (auto s = seeded.find(p.key); s != seeded.end()) {
    if (s->second.legacy && legacy) {
      p.legacy = true;
      return;
    }
    // The same algorithm, else the same place in the heuristic's list.
    const Choice &c = s->second;
    int same = -1;
    for (int i = 0; i < p.found && same < 0 && !c.legacy; ++i)
      if (!std::memcmp(&p.candidates[i].algo, &c.algo, sizeof c.algo))
        same = i;
    if (same < 0 && !c.legacy && c.index >= 0 && c.index < p.found)
      same = c.index;
    if (same >= 0) {
      p.algo = p.candidates[same].algo;
      p.choice = same;
      return;
    }
    // (Another GPU or library: not among the candidates; time them.)
  }
  if (p.found < 2 && !legacy)
    return;
  CUdeviceptr scratch = 0;
  if (rankc::rt::cuda::driver().cuMemAlloc(&scratch, cBytes) != CUDA_SUCCESS)
    return; // no room to try: keep the first choice
  RANKC_CU(cuMemsetD8Async(scratch, 0, cBytes, stream));
  CUevent start, end;
  RANKC_CU(cuEventCreate(&start, CU_EVENT_DEFAULT));
  RANKC_CU(cuEventCreate(&end, CU_EVENT_DEFAULT));
  float best = 0;
  for (int i = 0; i < p.found; ++i) {
    const cublasLtMatmulAlgo_t &algo = p.candidates[i].algo;
    if (p.candidates[i].state != CUBLAS_STATUS_SUCCESS ||
        p.candidates[i].workspaceSize > kWorkspace)
      continue;
    matmul(p, algo, a, b, int64_t(scratch), bias, alpha, beta,
           stream); // warm-up
    RANKC_CU(cuEventRecord(start, stream));
    for (int r = 0; r < 3; ++r)
      matmul(p, algo, a, b, int64_t(scratch), bias, alpha, beta, stream);
    RANKC_CU(cuEventRecord(end, stream));
    RANKC_CU(cuEventSynchronize(end));
    float ms = 0;
    RANKC_CU(cuEventElapsedTime(&ms, start, end));
    if (i == 0 || ms < best) {
      best = ms;
      p.algo = algo;
      p.choice = i;
    }
  }
  if (legacy) {
    p.legacy = true; // matmul() takes cuBLAS's path while this is set
    matmul(p, p.algo, a, b, int64_t(scratch), bias, alpha, beta, stream);
    RANKC_CU(cuEventRecord(start, stream));
    for (int r = 0; r < 3; ++r)
      matmul(p, p.algo, a, b, int64_t(scratch), bias, alpha, beta, stream);
    RANKC_CU(cuEventRecord(end, stream));
    RANKC_CU(cuEventSynchronize(end));
    float ms = 0;
    RANKC_CU(cuEventElapsedTime(&ms, start, end));
    p.legacy = ms < best;
  }
  RANKC_CU(cuEventDestroy(start));
  RANKC_CU(cuEventDestroy(end));
  RANKC_CU(cuStreamSynchronize(stream));
  RANKC_CU(cuMemFree(scratch));
}

} // namespace

namespace rankc::rt {

std::string libraryChoices() {
  std::ostringstream out;
  for (const auto &[key, p] : plans) {
    if (!p.tuned || p.found == 0)
      continue;
    auto [dtype, batch, m, n, k, tA, tB, precision, bB] = key;
    out << dtype << ' ' << batch << ' ' << m << ' ' << n << ' ' << k << ' '
        << tA << ' ' << tB << ' ' << precision << ' ' << bB << ' '
        << (p.legacy ? "cublas" : "cublasLt") << ' ' << p.choice;
    const unsigned char *bytes =
        reinterpret_cast<const unsigned char *>(&p.algo);
    char hex[3];
    for (size_t i = 0; i < sizeof p.algo; ++i) {
      std::snprintf(hex, sizeof hex, "%02x", bytes[i]);
      out << (i ? "" : " ") << hex;
    }
    out << '\n';
  }
  return out.str();
}

void restoreLibraryChoices(const std::string &text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream l(line);
    int32_t dtype, precision;
    int64_t batch, m, n, k;
    bool tA, tB, bB;
    std::string api, hex;
    int index;
    if (!(l >> dtype >> batch >> m >> n >> k >> tA >> tB >> precision >> bB >>
          api >> index >> hex) ||
        hex.size() != 2 * sizeof(cublasLtMatmulAlgo_t))
      continue;
    Choice c{api == "cublas", index, {}};
    unsigned char *bytes = reinterpret_cast<unsigned char *>(&c.algo);
    for (size_t i = 0; i < sizeof c.algo; ++i)
      bytes[i] = uint8_t(std::strtoul(hex.substr(2 * i, 2).c_str(), nullptr, 16));
    seeded[std::make_tuple(dtype, batch, m, n, k, tA, tB, precision, bB)] = c;
  }
}

} // namespace rankc::rt

namespace {

/// rankc_rt_gemm, with a bias epilogue where `bias` is an address.
void runGemm(int64_t a, int64_t b, int64_t c, int64_t bias, int64_t batch,
             int64_t m, int64_t n, int64_t k, int32_t dtype, int32_t accumulate,
             int32_t transA, int32_t transB, int32_t precision,
             int32_t broadcastB) {
  CUstream stream = rankc::rt::cuda::processStream();
  if (m == 0 || n == 0 || batch == 0)
    return;
  // The plan's key keeps the flags; the rest reads A's type.
  int32_t key = dtype | (bias ? kBiasKey : 0);
  bool narrowC = dtype & RANKC_GEMM_NARROW_C;
  dtype &= ~RANKC_GEMM_NARROW_C;
  if (narrowC && (accumulate || (dtype != RANKC_BF16 && dtype != RANKC_F16)))
    rankc::rt::fail("rankc_rt_gemm: a narrow C needs bf16 or f16 inputs and "
                    "no accumulation (dtype %d, accumulate %d)",
                    int(dtype), int(accumulate));
  size_t elem = narrowC ? 2 : dtype == RANKC_F64 ? 8 : 4;
  if (k == 0) { // a sum over nothing
    if (bias)   // (rankc-gpu-library-calls keeps such a bias in a kernel)
      rankc::rt::fail("rankc_rt_gemm_bias: K is 0");
    if (!accumulate)
      RANKC_CU(cuMemsetD8Async(CUdeviceptr(c), 0, batch * m * n * elem, stream));
    return;
  }
  Plan &p = planFor(key, batch, m, n, k, transA, transB, precision,
                    broadcastB);
  double one = 1, zero = 0;
  float onef = 1, zerof = 0;
  const void *alpha = dtype == RANKC_F64 ? static_cast<const void *>(&one) : &onef;
  const void *beta = accumulate ? alpha
                     : dtype == RANKC_F64 ? static_cast<const void *>(&zero)
                                  : &zerof;
  if (!p.tuned)
    tune(p, a, b, bias, size_t(batch) * m * n * elem, alpha, beta, stream);
  // --kernel-stats lists each GEMM shape as one more "kernel".
  CUfunction gemm = reinterpret_cast<CUfunction>(&p);
  if (rankc::rt::kernels::timing() && !p.named) {
    std::string name = "cublasLt gemm " + std::to_string(batch) + "x" +
                       std::to_string(m) + "x" + std::to_string(n) + "x" +
                       std::to_string(k) + (transA ? " tA" : "") +
                       (transB ? " tB" : "") + (broadcastB ? " bB" : "") +
                       (dtype == RANKC_BF16  ? " bf16 inputs"
                        : dtype == RANKC_F16 ? " f16 inputs"
                        : precision == 1     ? " tf32"
                        : precision == 2     ? " bf16"
                        : precision == 3     ? " f16"
                                             : "") +
                       (narrowC ? " narrow out" : "") + (bias ? " bias" : "") +
                       (p.legacy ? " (cuBLAS)" : "");
    p.name = name;
    rankc::rt::kernels::named(gemm, p.name.c_str());
    p.named = true;
  }
  const intptr_t none[3] = {0, 0, 0};
  CUevent end = rankc::rt::kernels::beforeLaunch(gemm, stream, none, none);
  matmul(p, p.algo, a, b, c, bias, alpha, beta, stream);
  rankc::rt::kernels::afterLaunch(end, stream);
}

} // namespace

extern "C" {

/// C[b] = A[b] B[b] (+ C[b] when accumulate), row-major, b < batch: C is
/// m x n; A is m x k (stored k x m when transA), B k x n (stored n x k
/// when transB); dtype is rankc_dtype of A and B (f32 or f64, C the same;
/// or bf16 or f16, C f32, accumulated in f32; with RANKC_GEMM_NARROW_C, C
/// bf16 or f16 rounded from that f32 sum); precision 0 (exact),
/// 1 (TF32), 2 (BF16) or 3 (F16) for f32 (2 and 3 are exact on inputs
/// that are bf16 or f16 values: rankc-gpu-narrow-contractions); broadcastB: one
/// B for every b. Device addresses.
void rankc_rt_gemm(int64_t a, int64_t b, int64_t c, int64_t batch, int64_t m,
                   int64_t n, int64_t k, int32_t dtype, int32_t accumulate,
                   int32_t transA, int32_t transB, int32_t precision,
                   int32_t broadcastB) {
  runGemm(a, b, c, 0, batch, m, n, k, dtype, accumulate, transA, transB,
          precision, broadcastB);
}

/// rankc_rt_gemm with a narrow C (RANKC_GEMM_NARROW_C in dtype, no
/// accumulation) and `bias`, n values of A's type, added to every row of
/// the f32 sum before its rounding (cuBLASLt's bias epilogue): an autocast
/// linear layer's bf16 output as PyTorch's addmm gives it.
void rankc_rt_gemm_bias(int64_t a, int64_t b, int64_t c, int64_t batch,
                        int64_t m, int64_t n, int64_t k, int32_t dtype,
                        int32_t accumulate, int32_t transA, int32_t transB,
                        int32_t precision, int32_t broadcastB, int64_t bias) {
  if (!(dtype & RANKC_GEMM_NARROW_C) || accumulate || !bias)
    rankc::rt::fail("rankc_rt_gemm_bias: needs a narrow C, no accumulation "
                    "and a bias (dtype %d, accumulate %d)",
                    int(dtype), int(accumulate));
  runGemm(a, b, c, bias, batch, m, n, k, dtype, accumulate, transA, transB,
          precision, broadcastB);
}

} // extern "C"
