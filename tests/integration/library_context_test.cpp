// Kernels launched inside cuBLAS, cuBLASLt and cuDNN calls carry their call's context:
// GEMM shape, types, transposes, cuBLASLt's algorithm, convolution shape. A call's kernels
// (GEMM + split-K reduction) share one context, and cuBLAS calling cuBLASLt counts once. A
// GEMM kernel's record adds the configuration the kernel ran.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "run_program.h"

namespace pm2lat::test {
namespace {

class LibraryContext : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    result_ = new RunResult(run({{program("library_calls")}, {}}));
    records_ = new Records(read_records(result_->dir + "/records.jsonl"));
    fake_ = new FakeLog(read_fake_log(result_->dir + "/fake.log"));
  }
  static void TearDownTestSuite() {
    delete result_;
    delete records_;
    delete fake_;
  }

  // Records of calls to `api`, grouped by call id, in call order.
  static std::vector<std::vector<nlohmann::json>> calls(const std::string& api) {
    std::map<std::uint64_t, std::vector<nlohmann::json>> by_call;
    for (const auto& k : records_->kernels) {
      if (k.contains("op") && k["op"].value("name", "") == api) {
        by_call[k.at("runtime").at("call").get<std::uint64_t>()].push_back(k);
      }
    }
    std::vector<std::vector<nlohmann::json>> out;
    out.reserve(by_call.size());
    for (auto& [id, ks] : by_call) out.push_back(ks);
    return out;
  }

  static RunResult* result_;
  static Records* records_;
  static FakeLog* fake_;
};

RunResult* LibraryContext::result_ = nullptr;
Records* LibraryContext::records_ = nullptr;
FakeLog* LibraryContext::fake_ = nullptr;

TEST_F(LibraryContext, EveryKernelIsRecordedMeasuredAndAttributedToItsCall) {
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  ASSERT_EQ(records_->kernels.size(), fake_->executions.size());
  for (const auto& k : records_->kernels) {
    EXPECT_TRUE(k.at("measured_us").is_number()) << k.dump();
    ASSERT_TRUE(k.contains("op")) << "no library context: " << k.dump();
    EXPECT_GT(k.at("runtime").at("call").get<std::uint64_t>(), 0u);
  }
  // One call id per top-level library call the program made, nested calls included.
  std::set<std::uint64_t> ids;
  for (const auto& k : records_->kernels)
    ids.insert(k.at("runtime").at("call").get<std::uint64_t>());
  const auto summary = nlohmann::json::parse(read_file(result_->dir + "/summary.json"));
  const auto n = result_->out.find("calls ");
  ASSERT_NE(n, std::string::npos);
  const int made = std::stoi(result_->out.substr(n + 6));
  EXPECT_EQ(static_cast<int>(ids.size()), made);
  EXPECT_EQ(summary.at("counters").at("library_calls").get<int>(), made);
}

TEST_F(LibraryContext, Fp32GemmShapesTypesAndSplitKReductions) {
  const auto sgemm = calls("cublasSgemm_v2");
  ASSERT_EQ(sgemm.size(), 3u);
  const auto& plain = sgemm[0].at(0).at("op");
  EXPECT_EQ(plain.at("m"), 512);
  EXPECT_EQ(plain.at("n"), 256);
  EXPECT_EQ(plain.at("k"), 128);
  EXPECT_EQ(plain.at("dtype"), "fp32");
  EXPECT_EQ(plain.at("compute"), "fp32");
  EXPECT_EQ(plain.at("source"), "cublas");
  // The long reduction: a GEMM and its split-K reduction, one call's context; the GEMM's
  // record adds the configuration its kernel ran (4 slices of K along grid z), and the
  // reduction's the slices it sums.
  ASSERT_EQ(sgemm[1].size(), 2u);
  nlohmann::json gemm_call = sgemm[1][0].at("op");
  EXPECT_EQ(gemm_call.at("algo_split_k"), 4);
  EXPECT_EQ(sgemm[1][1].at("op").at("algo_split_k"), 4);
  for (const char* algo : {"algo_tile", "algo_stages"}) gemm_call.erase(algo);
  EXPECT_EQ(gemm_call, sgemm[1][1].at("op"));
  EXPECT_EQ(sgemm[1][0].at("op").at("k"), 8192);
  EXPECT_EQ(sgemm[1][1].at("name"), "splitKreduce_kernel");
  // TF32 allowed by the handle's math mode.
  EXPECT_EQ(sgemm[2].at(0).at("op").at("compute"), "tf32");
  EXPECT_EQ(sgemm[2].at(0).at("op").at("trans_a"), true);

  const auto batched = calls("cublasSgemmStridedBatched");
  ASSERT_EQ(batched.size(), 1u);
  EXPECT_EQ(batched[0].at(0).at("op").at("b"), 3);
  EXPECT_EQ(batched[0].at(0).at("op").at("trans_b"), true);
  EXPECT_EQ(calls("cublasGemmEx_64").at(0).at(0).at("op").at("compute"), "tf32");
  EXPECT_EQ(calls("cublasGemmBatchedEx").at(0).at(0).at("op").at("b"), 5);
}

TEST_F(LibraryContext, CublasCallingCublasLtIsOneCallWithTheCublasContext) {
  const auto ex = calls("cublasGemmEx");
  ASSERT_EQ(ex.size(), 1u);
  ASSERT_EQ(ex[0].size(), 1u);
  const auto& k = ex[0][0];
  EXPECT_EQ(k.at("op").at("source"), "cublas");
  EXPECT_EQ(k.at("op").at("dtype"), "bf16");
  EXPECT_EQ(k.at("op").at("m"), 4096);
  EXPECT_EQ(k.at("op").at("n"), 4096);
  EXPECT_EQ(k.at("op").at("k"), 1024);
  // The Hopper kernel cuBLASLt chose, launched with a cluster through cuLaunchKernelEx.
  EXPECT_EQ(k.at("cluster"), (nlohmann::json{1, 2, 1}));
  EXPECT_EQ(k.at("runtime").at("api"), "cuLaunchKernelEx");
  // No kernel is attributed to cuBLASLt on its own for that call.
  for (const auto& lt : calls("cublasLtMatmul")) {
    EXPECT_NE(lt.at(0).at("runtime").at("call"), k.at("runtime").at("call"));
  }
  const auto strided = calls("cublasGemmStridedBatchedEx");
  ASSERT_EQ(strided.size(), 1u);
  EXPECT_EQ(strided[0].at(0).at("op").at("b"), 8);
  EXPECT_EQ(strided[0].at(0).at("op").at("dtype"), "fp16");
  EXPECT_EQ(calls("cublasHgemm").at(0).at(0).at("op").at("compute"), "fp16");
}

TEST_F(LibraryContext, CublasLtReportsItsAlgorithm) {
  const auto lt = calls("cublasLtMatmul");
  ASSERT_EQ(lt.size(), 2u);     // BF16 with its algorithm, then FP8 block-scaled
  ASSERT_EQ(lt[0].size(), 2u);  // GEMM + split-K reduction
  const auto& op = lt[0][0].at("op");
  EXPECT_EQ(op.at("source"), "cublasLt");
  EXPECT_EQ(op.at("m"), 512);
  EXPECT_EQ(op.at("n"), 256);
  EXPECT_EQ(op.at("k"), 4096);
  EXPECT_EQ(op.at("trans_a"), true);
  EXPECT_EQ(op.at("algo_tile"), (nlohmann::json{128, 128}));
  EXPECT_EQ(op.at("algo_stages"), 3);
  EXPECT_EQ(op.at("algo_split_k"), 4);
  EXPECT_EQ(lt[0][1].at("op"), op);
}

TEST_F(LibraryContext, CublasLtFp8OperandsSayTheirTypeAndScaleBlocks) {
  const auto lt = calls("cublasLtMatmul");
  ASSERT_EQ(lt.size(), 2u);
  const auto& op = lt[1].at(0).at("op");
  EXPECT_EQ(op.at("dtype"), "fp8_e4m3");
  EXPECT_EQ(op.at("scaling"), "block128");
  EXPECT_EQ(op.at("m"), 256);
  EXPECT_EQ(op.at("n"), 1024);
  EXPECT_EQ(op.at("k"), 2048);
  // The BF16 call has no scale factors to state.
  EXPECT_FALSE(lt[0].at(0).at("op").contains("scaling"));
}

TEST_F(LibraryContext, CudnnConvolutionShapes) {
  const auto legacy = calls("cudnnConvolutionForward");
  ASSERT_EQ(legacy.size(), 1u);
  const auto& op = legacy[0].at(0).at("op");
  EXPECT_EQ(op.at("kind"), "conv");
  EXPECT_EQ(op.at("n"), 8);
  EXPECT_EQ(op.at("c"), 64);
  EXPECT_EQ(op.at("h"), 56);
  EXPECT_EQ(op.at("k"), 128);
  EXPECT_EQ(op.at("r"), 3);
  EXPECT_EQ(op.at("pad"), (nlohmann::json{1, 1}));

  const auto graph = calls("cudnnBackendExecute");
  ASSERT_EQ(graph.size(), 2u);  // executed twice: the cached plan gives the same shape
  for (const auto& call : graph) {
    const auto& g = call.at(0).at("op");
    EXPECT_EQ(g.at("kind"), "conv");
    EXPECT_EQ(g.at("n"), 16);
    EXPECT_EQ(g.at("c"), 32);
    EXPECT_EQ(g.at("k"), 64);
    EXPECT_EQ(g.at("r"), 5);
    EXPECT_EQ(g.at("stride"), (nlohmann::json{2, 2}));
    EXPECT_EQ(g.at("pad"), (nlohmann::json{2, 2}));
    EXPECT_EQ(g.at("dtype"), "fp16");
  }
}

}  // namespace
}  // namespace pm2lat::test
