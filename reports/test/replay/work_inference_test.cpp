// Work charged to a kernel from its operator must be work the kernel can have done: buffers a
// library op indexes into, composite ops of several kernels, 32-bit indexing splits, helper
// kernels and launches too small for their operator's tensors.
#include <gtest/gtest.h>

#include "pm2lat/classifier.h"
#include "pm2lat/reports/replay/kineto_trace.h"
#include "pm2lat/reports/replay/trace_op_context.h"
#include "pm2lat/reports/replay/trace_op_linker.h"
#include "pm2lat/reports/replay/trace_records.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

struct LinkedWithThreads {
  KinetoTrace trace;
  std::vector<double> op_threads;
  explicit LinkedWithThreads(const test::TraceJson& json)
      : trace(parse_kineto_trace(json.str(), "t.json")) {
    link_kernels_to_ops(trace);
    op_threads = launched_threads_per_op(trace);
  }
  OpContext context(std::size_t i) const {
    const TraceKernel& k = trace.kernels.at(i);
    return op_context_for_kernel(trace, k, classify_kernel(trace.strings[k.name]), nullptr,
                                 &op_threads);
  }
};

TEST(WorkInference, AScatterIntoAKvCacheMovesTheNewKeysNotTheCache) {
  // vLLM's reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, ...):
  // 888 new tokens of 8 KV heads x 128 (bf16) written into a 4.3 GB cache per tensor. One
  // block per token, 512 threads (csrc/cache_kernels.cu).
  LinkedWithThreads l(
      test::TraceJson()
          .op("_C_cache_ops::reshape_and_cache_flash", 0, 10,
              "[[888,8,128],[888,8,128],[16384,128,8,128],[16384,128,8,128],"
              "[888],[],[],[]]",
              R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16",)"
              R"("c10::BFloat16","long int","","Scalar","Scalar"])")
          .kernel("void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, "
                  "(vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, "
                  "__nv_bfloat16*, __nv_bfloat16*, long const*, long, long, long, long, int, "
                  "int, int, float const*, float const*)",
                  1, 100, 4.3, {888, 1, 1}, {512, 1, 1}));
  const OpContext op = l.context(0);
  const double keys = 2.0 * 888 * 8 * 128 * 2;  // key and value
  EXPECT_EQ(op.source, "aten");
  EXPECT_NEAR(op.vec.bytes_read, keys + 888 * 8, 1);
  EXPECT_NEAR(op.vec.bytes_written, op.vec.bytes_read, 1);
  EXPECT_LT(op.vec.bytes(), 1e7) << "never the 8.6 GB of the caches";
}

TEST(WorkInference, KernelsOfALibraryOpShareItsWorkByTheirThreads) {
  // fbgemm::permute_sparse_features runs a CUB scan (init, scan) and a permute kernel: none
  // of them moves the whole of the op's tensors.
  LinkedWithThreads l(
      test::TraceJson()
          .op("fbgemm::permute_sparse_features", 0, 50, "[[26],[26,4096],[28800000]]",
              R"(["long int","int","long int"])")
          .kernel("void cub::DeviceScanInitKernel<cub::ScanTileState<int, true> >("
                  "cub::ScanTileState<int, true>, int)",
                  1, 100, 3, {4, 1, 1}, {128, 1, 1})
          .kernel("void cub::DeviceScanKernel<cub::AgentScanPolicy<128, 15, int> >(int)", 2, 110,
                  10, {508, 1, 1}, {128, 1, 1})
          .kernel("void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int "
                  "const*, int*)",
                  3, 130, 14, {3916, 1, 1}, {256, 1, 1}));
  const double all = 4 * 128 + 508 * 128 + 3916 * 256;
  const OpContext init = l.context(0), scan = l.context(1), permute = l.context(2);
  EXPECT_NEAR(init.vec.bytes() / permute.vec.bytes(), 4.0 * 128 / (3916 * 256), 1e-6);
  EXPECT_NEAR((init.vec.bytes() + scan.vec.bytes() + permute.vec.bytes()) / all,
              permute.vec.bytes() / (3916 * 256), 1e-6)
      << "shares add up to the op's work";
  EXPECT_LT(init.vec.bytes(), 1e6);
}

TEST(WorkInference, ReductionsOverTensorsPast32BitIndexingRunInPieces) {
  // The bias gradient of a VGG layer: sum over N, H, W of a 512x64x224x224 fp32 gradient
  // (6.6 GB). TensorIterator halves it twice: four launches of a quarter each.
  LinkedWithThreads l(
      test::TraceJson()
          .op("aten::sum", 0, 10, "[[512,64,224,224],[],[],[]]",
              R"(["float","ScalarList","Scalar",""])", R"(["","[0, 2, 3]","False",""])")
          .kernel("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
                  "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
                  "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
                  "unsigned int, float, 4> >(int)",
                  1, 100, 601, {64, 49, 1}, {32, 16, 1}));
  const OpContext op = l.context(0);
  EXPECT_EQ(op.kind, OpKind::kReduction);
  EXPECT_DOUBLE_EQ(op.vec.bytes_read, 512.0 * 64 * 224 * 224 * 4 / 4);
  EXPECT_EQ(op.vec.rows, 64) << "one output per channel";
}

TEST(WorkInference, ALaunchTooSmallForItsOperatorIsNotChargedIt) {
  // nll_loss_backward's 2-D reduce kernel (one warp) writes the gradient at the targets
  // only; the op's inputs describe the whole [512, 1000] gradient.
  LinkedWithThreads l(
      test::TraceJson()
          .op("aten::nll_loss_backward", 0, 10, "[[],[512,1000],[512],[],[],[],[]]",
              R"(["float","float","long int","","Scalar","Scalar","float"])")
          .kernel("void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_"
                  "kernel_2d<float, long>(float*, float const*, long const*, float const*, "
                  "float const*, bool, int, int, long, long)",
                  1, 100, 5, {1, 1, 1}, {32, 1, 1}));
  const OpContext op = l.context(0);
  EXPECT_EQ(op.source, kRejectedWorkSource);
  EXPECT_EQ(op.vec.bytes(), 0);
  EXPECT_EQ(op.name, "aten::nll_loss_backward");
}

TEST(WorkInference, ALaunchFarLargerThanItsShareOfALibraryOpIsNotChargedIt) {
  // FBGEMM's embedding backward: the autograd node states only its gradient, [8192, 8720]
  // floats; its radix sort and its warp-per-row update (500M threads) share it by threads,
  // about 1 B a thread. The sort's 1.6M threads each do more than that: its share is rejected,
  // and the sort is charged what its launch states (one tile of CUB's Policy800 per block: 384
  // threads x 10 long keys and int values, read and scattered once).
  LinkedWithThreads l(
      test::TraceJson()
          .op("torch::autograd::CppNode<SplitLookupFunction_rowwise_adagrad_Op>", 0, 500,
              "[[8192,8720]]", R"(["float"])")
          .kernel("void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, "
                  "int, int>::Policy800, false, long, int, int, unsigned int>(int*, int*, "
                  "long*, long const*, int*, int const*, int, int, int)",
                  1, 100, 443, {4117, 1, 1}, {384, 1, 1})
          .kernel("void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_"
                  "warp_per_row_1<float, float, float, 2ul>(int)",
                  2, 600, 1201, {15812500, 1, 1}, {32, 1, 1}));
  const OpContext sort = l.context(0);
  EXPECT_EQ(sort.source, kRejectedWorkSource);
  EXPECT_DOUBLE_EQ(sort.vec.bytes(), 2 * 4117.0 * 384 * 10 * (8 + 4));
  EXPECT_EQ(sort.name, "torch::autograd::CppNode<SplitLookupFunction_rowwise_adagrad_Op>");
}

TEST(WorkInference, AConvolutionsSplitKReductionSumsFilterPartials) {
  // cuDNN's wgrad with split-K: the main kernel, then a short reduction of the partial
  // filters (K x C x R x S floats), named after it.
  LinkedWithThreads l(
      test::TraceJson()
          .op("aten::convolution_backward", 0, 30,
              "[[512,64,224,224],[512,64,224,224],[64,64,3,3],[],[],[],[],[],[],[],[]]",
              R"(["float","float","float","","ScalarList","ScalarList","ScalarList",)"
              R"("Scalar","ScalarList","Scalar",""])",
              R"(["","","","","[1, 1]","[1, 1]","[1, 1]","False","[0, 0]","1",""])")
          .kernel("sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_"
                  "tilesize64x64x32_warpgroupsize1x1x1_g1_execute_split_k_kernel_cudnn_train",
                  1, 100, 6, {126, 1, 1}, {128, 1, 1}));
  const KernelClass cls = classify_kernel(l.trace.strings[l.trace.kernels[0].name]);
  EXPECT_EQ(cls.family, KernelFamily::kSplitKReduce);
  const OpContext op = l.context(0);
  const double filter = 64.0 * 64 * 3 * 3;
  EXPECT_DOUBLE_EQ(op.vec.bytes_written, filter * 4);
  EXPECT_DOUBLE_EQ(op.vec.bytes_read, 2 * filter * 4) << "partials of at least two slices";
}

TEST(WorkInference, ASplitKReductionSumsTheSlicesItsGemmKernelRan) {
  // cuBLAS's FP32 product [100, 1024] x [1024, 256] on an A100: a CUTLASS kernel of 64x64
  // tiles over 8 slices of K (grid z), then the reduction of their partial outputs.
  const std::string gemm =
      "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>(Params)";
  const std::string reduce =
      "void splitKreduce_kernel<float, float, float, float, true, true, false>("
      "cublasSplitKParams<float>, float const*, float const*, float*, float const*, "
      "float const*, float const*, float const*, float*, void*, long, float*, int*)";
  KinetoTrace trace = parse_kineto_trace(
      test::TraceJson("NVIDIA A100-SXM4-40GB")
          .op("aten::mm", 0, 50, "[[100,1024],[1024,256]]", R"(["float","float"])")
          .kernel(gemm, 1, 100, 9, {8, 1, 8}, {128, 1, 1})
          .kernel(reduce, 2, 110, 4, {8, 7, 1}, {32, 1, 1})
          .op("aten::mm", 60, 50, "[[100,1024],[1024,256]]", R"(["float","float"])")
          .kernel(reduce, 61, 200, 4, {8, 7, 1}, {32, 1, 1})
          .str(),
      "t.json");
  KernelClassCache classes;
  const TraceRecords out = records_from_trace(trace, classes);
  ASSERT_EQ(out.records.size(), 3u);
  const double partials = 100.0 * 256 * 4;
  const OpContext& op = out.records[1].op;
  ASSERT_EQ(out.classes[1]->family, KernelFamily::kSplitKReduce);
  EXPECT_EQ(op.gemm.algo_split_k, 8);
  EXPECT_DOUBLE_EQ(op.vec.bytes_read, 8 * partials) << "each of the 8 slices' partials";
  EXPECT_DOUBLE_EQ(op.vec.bytes_written, partials);
  // A reduction whose operator launched no GEMM kernel the trace holds: the fewest slices.
  EXPECT_EQ(out.records[2].op.gemm.algo_split_k, 0);
  EXPECT_DOUBLE_EQ(out.records[2].op.vec.bytes_read, 2 * partials);
}

TEST(WorkInference, AHelperFarSmallerThanEveryOperandMovesWhatItsLaunchCovers) {
  // A scaling helper of 8 blocks x 128 threads inside a convolution over 100M-element
  // tensors: about four elements a thread, not a 400 MB operand.
  LinkedWithThreads l(test::TraceJson()
                          .op("aten::cudnn_convolution", 0, 30,
                              "[[256,256,56,56],[256,256,3,3],[],[],[],[],[],[],[]]",
                              R"(["float","float","ScalarList","ScalarList","ScalarList","Scalar",)"
                              R"("Scalar","Scalar","Scalar"])",
                              R"(["","","[1, 1]","[1, 1]","[1, 1]","1","False","False","True"])")
                          .kernel("void cudnn::ops::scalePackedTensor_kernel<float, float>("
                                  "cudnnTensor4dStruct, float*, float)",
                                  1, 100, 5, {8, 1, 1}, {128, 1, 1}));
  const OpContext op = l.context(0);
  EXPECT_DOUBLE_EQ(op.vec.bytes_read, 8.0 * 128 * 4 * 4);
  EXPECT_DOUBLE_EQ(op.vec.bytes_written, op.vec.bytes_read);
}

}  // namespace
}  // namespace pm2lat::reports
