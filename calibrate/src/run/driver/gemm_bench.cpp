#include "driver/gemm_bench.h"

#include <fmt/core.h>

#include <cstring>

#include "pm2lat/calibrate/run/measurement_backend.h"

namespace pm2lat::calibrate::run::driver {
namespace {

constexpr int kMaxCandidates = 16;

cudaDataType operand_type(DType t) {
  switch (t) {
    case DType::kBf16: return CUDA_R_16BF;
    case DType::kFp16: return CUDA_R_16F;
    case DType::kFp8E4M3: return CUDA_R_8F_E4M3;
    default: return CUDA_R_32F;
  }
}

cudaDataType result_type(DType t) { return t == DType::kFp8E4M3 ? CUDA_R_16BF : operand_type(t); }

cublasComputeType_t compute_type(DType t) {
  return t == DType::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

std::size_t element_bytes(cudaDataType t) {
  switch (t) {
    case CUDA_R_16BF:
    case CUDA_R_16F: return 2;
    case CUDA_R_8F_E4M3: return 1;
    default: return 4;
  }
}

std::string lt_error(cublasStatus_t s, const char* what) {
  return fmt::format("{}: cublasStatus {}", what, static_cast<int>(s));
}

// The descriptors of one problem. Row-major C[m,n] = A[m,k] B[k,n] is the column-major
// C^T[n,m] = B^T A^T: cuBLAS's A is our B, its B our A, M = n, N = m.
class Descriptors {
 public:
  Descriptors(const CublasLtApi& lt, const GemmProblem& p) : lt_(lt) {
    const cudaDataType in = operand_type(p.dtype), out = result_type(p.dtype);
    const bool lt_trans_a = p.layout == GemmLayout::kLinear;      // our B stored [n, k]
    const bool lt_trans_b = p.layout == GemmLayout::kWeightGrad;  // our A stored [k, m]
    check(lt.desc_create(&desc, compute_type(p.dtype), CUDA_R_32F), "cublasLtMatmulDescCreate");
    const int32_t ta = lt_trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                  tb = lt_trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    check(lt.desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)),
          "CUBLASLT_MATMUL_DESC_TRANSA");
    check(lt.desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)),
          "CUBLASLT_MATMUL_DESC_TRANSB");
    const auto n = static_cast<std::uint64_t>(p.n), m = static_cast<std::uint64_t>(p.m),
               k = static_cast<std::uint64_t>(p.k);
    check(lt.layout_create(&a, in, lt_trans_a ? k : n, lt_trans_a ? n : k,
                           static_cast<int64_t>(lt_trans_a ? k : n)),
          "A layout");
    check(lt.layout_create(&b, in, lt_trans_b ? m : k, lt_trans_b ? k : m,
                           static_cast<int64_t>(lt_trans_b ? m : k)),
          "B layout");
    check(lt.layout_create(&c, out, n, m, static_cast<int64_t>(n)), "C layout");
    if (p.batch > 1) {
      const int32_t count = static_cast<int32_t>(p.batch);
      const int64_t sa = static_cast<int64_t>(n * k), sb = static_cast<int64_t>(k * m),
                    sc = static_cast<int64_t>(n * m);
      for (auto [l, stride] : {std::pair{a, sa}, std::pair{b, sb}, std::pair{c, sc}}) {
        check(lt.layout_set(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
              "batch count");
        check(
            lt.layout_set(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
            "batch stride");
      }
    }
    a_bytes = static_cast<std::size_t>(p.batch) * n * k * element_bytes(in);
    b_bytes = static_cast<std::size_t>(p.batch) * k * m * element_bytes(in);
    c_bytes = static_cast<std::size_t>(p.batch) * n * m * element_bytes(out);
  }
  ~Descriptors() {
    if (a) lt_.layout_destroy(a);
    if (b) lt_.layout_destroy(b);
    if (c) lt_.layout_destroy(c);
    if (desc) lt_.desc_destroy(desc);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;

  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  std::size_t a_bytes = 0, b_bytes = 0, c_bytes = 0;

 private:
  static void check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(lt_error(s, what));
  }
  const CublasLtApi& lt_;
};

template <typename T>
std::int32_t algo_attr(const CublasLtApi& lt, const cublasLtMatmulAlgo_t& algo,
                       cublasLtMatmulAlgoConfigAttributes_t a) {
  T v{};
  std::size_t written = 0;
  if (lt.algo_config_get(&algo, a, &v, sizeof(v), &written) != CUBLAS_STATUS_SUCCESS) return 0;
  return static_cast<std::int32_t>(v);
}

GemmAlgo describe(const CublasLtApi& lt, const cublasLtMatmulAlgo_t& algo, std::size_t workspace) {
  GemmAlgo g;
  static_assert(sizeof(algo.data) == sizeof(g.data), "cublasLtMatmulAlgo_t is 8 words");
  std::memcpy(g.data.data(), algo.data, sizeof(g.data));
  g.id = algo_attr<int32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_ID);
  g.tile = algo_attr<uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
  g.stages = algo_attr<uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  g.split_k = algo_attr<int32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  g.swizzle = algo_attr<uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  g.custom = algo_attr<uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  g.cluster = algo_attr<uint16_t>(lt, algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  g.workspace_bytes = workspace;
  return g;
}

struct Candidate {
  cublasLtMatmulAlgo_t algo;
  std::size_t workspace;
  int rank;
};

}  // namespace

std::vector<GemmRun> measure_gemm(GemmBenchContext& ctx, const MeasurementTask& task,
                                  const GemmAlgo* forced) {
  const GemmProblem& p = task.gemm;
  Descriptors d(ctx.lt, p);

  std::vector<Candidate> algos;
  std::vector<GemmRun> runs;
  if (forced != nullptr) {
    Candidate c{};
    std::memcpy(c.algo.data, forced->data.data(), sizeof(c.algo.data));
    c.rank = -1;
    cublasLtMatmulHeuristicResult_t check{};
    const cublasStatus_t s =
        ctx.lt.algo_check(ctx.handle, d.desc, d.a, d.b, d.c, d.c, &c.algo, &check);
    if (s != CUBLAS_STATUS_SUCCESS || check.workspaceSize > ctx.workspace_bytes) {
      GemmRun r;
      r.rank = -1;
      r.algo = *forced;
      r.error = s != CUBLAS_STATUS_SUCCESS ? lt_error(s, "cublasLtMatmulAlgoCheck")
                                           : "needs a larger workspace";
      return {r};
    }
    c.workspace = check.workspaceSize;
    algos.push_back(c);
  } else {
    cublasLtMatmulPreference_t pref = nullptr;
    if (ctx.lt.pref_create(&pref) != CUBLAS_STATUS_SUCCESS)
      throw BackendError("cublasLtMatmulPreferenceCreate failed");
    const std::uint64_t ws = ctx.workspace_bytes;
    ctx.lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    const int want =
        task.kind == TaskKind::kGemmCandidates ? std::clamp(task.candidates, 1, kMaxCandidates) : 1;
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(want));
    int found = 0;
    const cublasStatus_t s = ctx.lt.get_heuristic(ctx.handle, d.desc, d.a, d.b, d.c, d.c, pref,
                                                  want, results.data(), &found);
    ctx.lt.pref_destroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS || found <= 0) {
      GemmRun r;
      r.error = s != CUBLAS_STATUS_SUCCESS ? lt_error(s, "cublasLtMatmulAlgoGetHeuristic")
                                           : "no algorithm";
      return {r};
    }
    const int first = task.kind == TaskKind::kGemmCandidates ? 1 : 0;  // the pick is the survey's
    for (int i = first; i < found; ++i) {
      if (results[static_cast<std::size_t>(i)].state != CUBLAS_STATUS_SUCCESS) continue;
      algos.push_back(Candidate{results[static_cast<std::size_t>(i)].algo,
                                results[static_cast<std::size_t>(i)].workspaceSize, i});
    }
  }

  // Operand sets, consecutive in the pool's areas.
  const int sets = std::max(1, task.timing.rotation_sets);
  const std::size_t in_set = aligned(d.a_bytes) + aligned(d.b_bytes), out_set = aligned(d.c_bytes);
  ctx.pool.require(in_set * static_cast<std::size_t>(sets),
                   out_set * static_cast<std::size_t>(sets), p.dtype);
  const float alpha = 1.0f, beta = 0.0f;

  for (const Candidate& c : algos) {
    GemmRun run;
    run.rank = c.rank;
    run.algo = forced != nullptr ? *forced : describe(ctx.lt, c.algo, c.workspace);
    auto call = [&](int i) {
      const std::size_t set = static_cast<std::size_t>(i % sets);
      const CUdeviceptr lt_a = ctx.pool.inputs() + set * in_set;  // cuBLAS's A: our B
      const CUdeviceptr lt_b = lt_a + aligned(d.a_bytes);         // cuBLAS's B: our A
      const CUdeviceptr out = ctx.pool.outputs() + set * out_set;
      const cublasStatus_t s = ctx.lt.matmul(
          ctx.handle, d.desc, &alpha, reinterpret_cast<const void*>(lt_a), d.a,
          reinterpret_cast<const void*>(lt_b), d.b, &beta, reinterpret_cast<const void*>(out), d.c,
          reinterpret_cast<void*>(out), d.c, &c.algo, reinterpret_cast<void*>(ctx.workspace),
          ctx.workspace_bytes, reinterpret_cast<cudaStream_t>(ctx.stream));
      if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(lt_error(s, "cublasLtMatmul"));
    };
    bool tracing = false;
    try {
      call(0);  // first call: library and module loading stay out of what is profiled
      ctx.cu.check(ctx.cu.stream_synchronize(ctx.stream), "cuStreamSynchronize");
      ctx.trace.start();
      tracing = true;
      call(0);
      ctx.cu.check(ctx.cu.stream_synchronize(ctx.stream), "cuStreamSynchronize");
      tracing = false;
      run.kernels = ctx.trace.stop();
      run.timing = ctx.timer.time(task.timing, call, /*scrub=*/true);
    } catch (const BackendError&) {
      throw;
    } catch (const std::exception& e) {
      if (tracing) ctx.trace.stop();
      run.error = e.what();
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace pm2lat::calibrate::run::driver
