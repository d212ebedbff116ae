// Operator shapes -> kernel op contexts, through the public path: trace JSON, parse, link.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "pm2lat/classifier.h"
#include "pm2lat/reports/replay/kineto_trace.h"
#include "pm2lat/reports/replay/trace_op_context.h"
#include "pm2lat/reports/replay/trace_op_linker.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

struct Linked {
  KinetoTrace trace;
  explicit Linked(const test::TraceJson& json) : trace(parse_kineto_trace(json.str(), "t.json")) {
    link_kernels_to_ops(trace);
  }
  OpContext context(std::size_t i = 0, std::vector<std::int64_t>* ints = nullptr) const {
    const TraceKernel& k = trace.kernels.at(i);
    return op_context_for_kernel(trace, k, classify_kernel(trace.strings[k.name]), ints);
  }
};

constexpr const char* kBf16x3 =
    R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"])";
constexpr const char* kGemmKernel =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_"
    "k_off_kernel__5x_cublas";

TEST(TraceOpLinker, PicksTheInnermostOperatorAroundTheLaunch) {
  Linked l(test::TraceJson()
               .op("ProfilerStep#3", 0, 1000, "", "", "", "", "user_annotation")
               .op("aten::linear", 10, 100, "[[4,8],[16,8],[16]]", R"(["float","float","float"])")
               .op("aten::addmm", 20, 50, "[[16],[4,8],[8,16],[],[]]",
                   R"(["float","float","float","Scalar","Scalar"])")
               .op("aten::relu", 200, 30, "[[4,16]]", R"(["float"])")
               .kernel("ampere_sgemm_32x32_sliced1x4_tn", 30, 300, 4)
               .kernel("vectorized_elementwise_kernel", 210, 310, 1)
               .kernel("orphan_kernel", 600, 320, 1));
  const auto& t = l.trace;
  ASSERT_GE(t.kernels[0].op, 0);
  EXPECT_EQ(t.strings[t.ops[static_cast<std::size_t>(t.kernels[0].op)].name], "aten::addmm");
  const auto chain = op_chain(t, t.kernels[0]);
  ASSERT_EQ(chain.size(), 2u) << "ProfilerStep is not an operator";
  EXPECT_EQ(t.strings[chain[1]->name], "aten::linear");
  EXPECT_EQ(t.strings[t.ops[static_cast<std::size_t>(t.kernels[1].op)].name], "aten::relu");
  EXPECT_EQ(t.kernels[2].op, -1) << "a launch outside every op links to none";
  EXPECT_TRUE(t.kernels[2].launched);
}

TEST(TraceOpLinker, GraphReplaysDoNotInheritTheSurroundingOp) {
  Linked l(test::TraceJson()
               .op("aten::mm", 0, 100, "[[4,8],[8,16]]", R"(["float","float"])")
               .kernel("ampere_sgemm_32x32_sliced1x4_nn", 10, 200, 3, {1, 1, 1}, {128, 1, 1}, 7,
                       "cudaGraphLaunch"));
  EXPECT_TRUE(l.trace.kernels[0].graph_launch);
  EXPECT_EQ(l.trace.kernels[0].op, -1);
}

TEST(TraceOpContext, AddmmGivesTheGemmWithLayoutsFromStrides) {
  Linked l(test::TraceJson()
               .op("aten::addmm", 0, 100, "[[512],[141,512],[512,2048],[],[]]", kBf16x3,
                   R"(["","","","1","1"])", "[[1],[512,1],[1,512],[],[]]")
               .kernel(kGemmKernel, 10, 200, 8, {30, 1, 1}, {384, 1, 1}));
  const OpContext op = l.context();
  EXPECT_EQ(op.kind, OpKind::kGemm);
  EXPECT_EQ(op.name, "aten::addmm");
  EXPECT_EQ(op.gemm.m, 141);
  EXPECT_EQ(op.gemm.n, 2048);
  EXPECT_EQ(op.gemm.k, 512);
  EXPECT_EQ(op.gemm.batch, 1);
  EXPECT_FALSE(op.gemm.trans_a);
  EXPECT_TRUE(op.gemm.trans_b) << "weight.t() is a transposed view";
  EXPECT_TRUE(op.gemm.has_bias);
  EXPECT_EQ(op.gemm.a, DType::kBf16);
  EXPECT_EQ(op.gemm.compute, DType::kFp32);
}

TEST(TraceOpContext, LinearWithoutStridesStillUsesTheTransposedWeight) {
  Linked l(
      test::TraceJson()
          .op("aten::linear", 0, 100, "[[8,128,1024],[4096,1024],[4096]]",
              R"(["float","float","float"])")
          .op("aten::addmm", 10, 50, "[[4096],[1024,1024],[1024,4096],[],[]]",
              R"(["float","float","float","Scalar","Scalar"])")
          .kernel("cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4", 20, 200, 30, {8, 32, 1}));
  const OpContext op = l.context();
  EXPECT_EQ(op.gemm.m, 1024);
  EXPECT_EQ(op.gemm.n, 4096);
  EXPECT_EQ(op.gemm.k, 1024);
  EXPECT_TRUE(op.gemm.trans_b);
  EXPECT_EQ(op.gemm.compute, DType::kTf32) << "FP32 data on a tensor-core kernel runs as TF32";
}

TEST(TraceOpContext, BatchedAndBroadcastMatmuls) {
  Linked l(test::TraceJson()
               .op("aten::bmm", 0, 10, "[[96,3137,64],[96,64,3137]]",
                   R"(["c10::BFloat16","c10::BFloat16"])")
               .op("aten::matmul", 20, 10, "[[4,16,32],[32,8]]", R"(["float","float"])")
               .op("aten::baddbmm", 40, 10, "[[12,1,1],[12,5,7],[12,7,9],[],[]]",
                   R"(["float","float","float","Scalar","Scalar"])")
               .kernel("cutlass_80_tensorop_bf16_s16816gemm_bf16_128x128_32x4_nn_align8", 1, 100, 5)
               .kernel("volta_sgemm_32x32_sliced1x4_nn", 21, 200, 5)
               .kernel("volta_sgemm_32x32_sliced1x4_nn", 41, 300, 5));
  const OpContext bmm = l.context(0), mm = l.context(1), baddbmm = l.context(2);
  EXPECT_EQ(bmm.gemm.batch, 96);
  EXPECT_EQ(bmm.gemm.m, 3137);
  EXPECT_EQ(bmm.gemm.n, 3137);
  EXPECT_EQ(bmm.gemm.k, 64);
  EXPECT_EQ(mm.gemm.batch, 1) << "a 2-D right operand folds the batch into m";
  EXPECT_EQ(mm.gemm.m, 64);
  EXPECT_EQ(mm.gemm.n, 8);
  EXPECT_EQ(mm.gemm.k, 32);
  EXPECT_EQ(baddbmm.gemm.batch, 12);
  EXPECT_EQ(baddbmm.gemm.k, 7);
}

TEST(TraceOpContext, ConvolutionsForwardBackwardAndImplicitGemm) {
  const char* conv_types =
      R"(["float","float","ScalarList","ScalarList","ScalarList","Scalar","Scalar","Scalar","Scalar"])";
  const char* conv_vals = R"(["","","[1, 1]","[2, 2]","[1, 1]","1","False","False","True"])";
  Linked l(
      test::TraceJson()
          .op("aten::cudnn_convolution", 0, 100,
              "[[32,64,56,56],[128,64,3,3],[],[],[],[],[],[],[]]", conv_types, conv_vals)
          .op("aten::convolution_backward", 200, 100,
              "[[32,128,28,28],[32,64,56,56],[128,64,3,3],[],[],[],[],[],[],[],[]]",
              R"(["float","float","float","ScalarList","ScalarList","ScalarList","ScalarList","Scalar","ScalarList","Scalar","ScalarList"])",
              R"(["","","","[128]","[2, 2]","[1, 1]","[1, 1]","False","[0, 0]","1","[True, True, False]"])")
          .kernel(
              "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_"
              "stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel__5x_cudnn",
              10, 400, 50)
          .kernel("cutlass_80_tensorop_s1688gemm_128x64_16x4_nn_align4", 20, 500, 20, {196, 1, 1})
          .kernel(
              "sm80_xmma_wgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_"
              "stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel__5x_cudnn",
              210, 600, 60)
          .kernel("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, "
                  "(cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, "
                  "float*)",
                  220, 700, 9, {98, 2, 32}, {256, 1, 1}));
  const OpContext fprop = l.context(0);
  ASSERT_EQ(fprop.kind, OpKind::kConv);
  EXPECT_EQ(fprop.conv.batch, 32);
  EXPECT_EQ(fprop.conv.in_channels, 64);
  EXPECT_EQ(fprop.conv.out_channels, 128);
  EXPECT_EQ(fprop.conv.stride_h, 2);
  EXPECT_EQ(fprop.conv.pad_w, 1);
  EXPECT_EQ(fprop.conv.out_h(), 28);
  const OpContext gemm = l.context(1);
  ASSERT_EQ(gemm.kind, OpKind::kGemm)
      << "a GEMM kernel inside a convolution models its implicit GEMM";
  EXPECT_EQ(gemm.gemm.m, 32 * 28 * 28);
  EXPECT_EQ(gemm.gemm.n, 128);
  EXPECT_EQ(gemm.gemm.k, 64 * 9);
  const OpContext wgrad = l.context(2);
  ASSERT_EQ(wgrad.kind, OpKind::kConv);
  EXPECT_EQ(wgrad.name, "aten::convolution_backward");
  EXPECT_EQ(wgrad.conv.in_channels, 64);
  EXPECT_EQ(wgrad.conv.out_channels, 128);
  const OpContext transform = l.context(3);
  EXPECT_EQ(transform.kind, OpKind::kCopy);
  EXPECT_DOUBLE_EQ(transform.vec.bytes_read, 32.0 * 64 * 56 * 56 * 4)
      << "the input is the tensor the launch covers";
}

TEST(TraceOpContext, AttentionShapesFromFlashAndSdpaOperators) {
  Linked l(
      test::TraceJson()
          .op("aten::_flash_attention_forward", 0, 100,
              "[[16,559,16,64],[16,559,2,64],[16,559,2,64],[],[],[],[],[],[],[],[]]",
              R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","","","Scalar","Scalar","Scalar","Scalar","Scalar","Scalar"])",
              R"(["","","","","","559","559","0.","True","False","0.125"])")
          .op("aten::_scaled_dot_product_efficient_attention", 200, 100,
              "[[2,8,128,64],[2,8,256,64],[2,8,256,64],[],[],[],[],[]]",
              R"(["c10::Half","c10::Half","c10::Half","","Scalar","Scalar","Scalar",""])",
              R"(["","","","","False","0.","False",""])")
          .kernel("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, "
                  "128, 128, 4, false, false, cutlass::bfloat16_t>, false, "
                  "true>(pytorch_flash::Flash_fwd_params)",
                  10, 300, 40)
          .kernel("fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<"
                  "cutlass::half_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
                  210, 400, 40));
  const OpContext fa = l.context(0);
  ASSERT_EQ(fa.kind, OpKind::kAttention);
  EXPECT_EQ(fa.attention.batch, 16);
  EXPECT_EQ(fa.attention.seqlen_q, 559);
  EXPECT_EQ(fa.attention.heads, 16);
  EXPECT_EQ(fa.attention.kv_heads, 2);
  EXPECT_EQ(fa.attention.head_dim, 64);
  EXPECT_TRUE(fa.attention.causal);
  EXPECT_EQ(fa.attention.dtype, DType::kBf16);
  const OpContext me = l.context(1);
  ASSERT_EQ(me.kind, OpKind::kAttention);
  EXPECT_EQ(me.attention.heads, 8) << "SDPA operators are [batch, heads, seq, dim]";
  EXPECT_EQ(me.attention.seqlen_q, 128);
  EXPECT_EQ(me.attention.seqlen_kv, 256);
  EXPECT_FALSE(me.attention.causal);
}

TEST(TraceOpContext, MemoryBoundOperatorsMoveTheBytesTheyShould) {
  Linked l(
      test::TraceJson()
          .op("aten::add", 0, 10, "[[64,1024],[1024],[]]", R"(["float","float","Scalar"])")
          .op("aten::copy_", 20, 10, "[[64,1024],[64,1024],[]]",
              R"(["c10::BFloat16","float","Scalar"])")
          .op("aten::_softmax", 40, 10, "[[8,12,128,128],[],[]]", R"(["float","Scalar","Scalar"])",
              R"(["","-1","False"])")
          .op("aten::native_layer_norm", 60, 10, "[[4,128,768],[],[768],[768],[]]",
              R"(["c10::BFloat16","ScalarList","c10::BFloat16","c10::BFloat16","Scalar"])",
              R"(["","[768]","","",""])")
          .op("aten::index_select", 80, 10, "[[30522,512],[],[141]]",
              R"(["float","Scalar","long int"])", R"(["","0",""])")
          .op("aten::sum", 100, 10, "[[32,1000],[],[],[]]", R"(["float","ScalarList","Scalar",""])",
              R"(["","[0]","False",""])")
          .op("aten::max_pool2d_with_indices", 120, 10, "[[8,64,112,112],[],[],[],[],[]]",
              R"(["float","ScalarList","ScalarList","ScalarList","ScalarList","Scalar"])",
              R"(["","[2, 2]","[2, 2]","[0, 0]","[1, 1]","False"])")
          .kernel("void at::native::vectorized_elementwise_kernel<4, "
                  "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, "
                  "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
                  1, 200, 2, {128, 1, 1})
          .kernel(
              "void "
              "at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda>(int)",
              21, 210, 2, {128, 1, 1})
          .kernel("void (anonymous namespace)::softmax_warp_forward<float, float, float, 7, false, "
                  "false>(float*, float const*, int, int, int, bool const*, int, bool)",
                  41, 220, 2, {1536, 1, 1}, {32, 4, 1})
          .kernel(
              "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, "
              "float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 "
              "const*, float*, float*, c10::BFloat16*)",
              61, 230, 2)
          .kernel("void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, "
                  "unsigned int, 2, 2, -2, true>(int)",
                  81, 240, 2)
          .kernel("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
                  "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, "
                  "float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned "
                  "int, float, 4> >(int)",
                  101, 250, 2)
          .kernel(
              "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int)",
              121, 260, 2, {6272, 1, 1}, {256, 1, 1}));
  const OpContext add = l.context(0);
  EXPECT_EQ(add.kind, OpKind::kElementwise);
  EXPECT_DOUBLE_EQ(add.vec.bytes_read, (64 * 1024 + 1024) * 4.0)
      << "the bias is read once, broadcast";
  EXPECT_DOUBLE_EQ(add.vec.bytes_written, 64 * 1024 * 4.0);
  EXPECT_EQ(add.vec.rows, 64);
  EXPECT_EQ(add.vec.cols, 1024);
  const OpContext cast = l.context(1);
  EXPECT_EQ(cast.kind, OpKind::kCopy);
  EXPECT_DOUBLE_EQ(cast.vec.bytes_read, 64 * 1024 * 4.0);
  EXPECT_DOUBLE_EQ(cast.vec.bytes_written, 64 * 1024 * 2.0)
      << "copy_ writes self (bf16) from src (fp32)";
  const OpContext sm = l.context(2);
  EXPECT_EQ(sm.kind, OpKind::kSoftmax);
  EXPECT_EQ(sm.vec.cols, 128);
  EXPECT_EQ(sm.vec.rows, 8 * 12 * 128);
  const OpContext ln = l.context(3);
  EXPECT_EQ(ln.kind, OpKind::kLayerNorm);
  EXPECT_EQ(ln.vec.cols, 768);
  EXPECT_EQ(ln.vec.rows, 512);
  const OpContext gather = l.context(4);
  EXPECT_EQ(gather.kind, OpKind::kEmbedding);
  EXPECT_DOUBLE_EQ(gather.vec.bytes_written, 141 * 512 * 4.0)
      << "only the selected rows are copied";
  const OpContext sum = l.context(5);
  EXPECT_EQ(sum.kind, OpKind::kReduction);
  EXPECT_EQ(sum.vec.rows, 1000) << "sum over dim 0 of [32, 1000] has 1000 outputs";
  EXPECT_EQ(sum.vec.cols, 32);
  const OpContext pool = l.context(6);
  EXPECT_DOUBLE_EQ(pool.vec.bytes_read, 8.0 * 64 * 112 * 112 * 4);
  EXPECT_DOUBLE_EQ(pool.vec.bytes_written, 8.0 * 64 * 56 * 56 * (4 + 8))
      << "output and int64 indices";
}

TEST(TraceOpContext, BigTensorsSplitIntoSeveralLaunchesShareTheBytes) {
  // 512x64x224x224 floats exceed 32-bit indexing: ATen runs four launches of a quarter each.
  Linked l(test::TraceJson()
               .op("aten::add_", 0, 10, "[[512,64,224,224],[1,64,1,1],[]]",
                   R"(["float","float","Scalar"])")
               .kernel("void at::native::elementwise_kernel<128, 2, "
                       "at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float> "
                       ">(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> "
                       "const&)::{lambda(int)#1}>(int)",
                       1, 100, 1394, {1605632, 1, 1}, {128, 1, 1}));
  const OpContext op = l.context();
  const double quarter = 512.0 * 64 * 224 * 224 / 4 * 4;
  EXPECT_NEAR(op.vec.bytes_written, quarter, quarter * 1e-6);
}

TEST(TraceOpContext, PointwiseOperatorsStateTheReuseOfTheOperandsTheyBroadcast) {
  // ATen's vectorized kernel: 4 elements per thread, 128 threads per block.
  const auto blocks = [](double elements) { return static_cast<std::uint32_t>(elements / 512); };
  Linked l(test::TraceJson()
               // An attention-mask add over the heads: the mask is used again every head,
               // 12 MiB later (a head of the scores, of the output and of the mask itself).
               .op("aten::add", 0, 10, "[[8,16,1024,1024],[8,1,1024,1024]]", R"(["float","float"])")
               // A causal select with a bool mask over every sample and head: 1 MiB of the mask
               // and 4 MiB of each float tensor between uses.
               .op("aten::where", 20, 10, "[[1,1,1024,1024],[8,20,1024,1024],[]]",
                   R"(["bool","float","float"])")
               // A bias over the rows: used again every row, 8 KiB later.
               .op("aten::add", 40, 10, "[[4096,1024],[1024]]", R"(["float","float"])")
               .kernel("vectorized_elementwise_kernel", 1, 100, 1, {blocks(128.0 * 1048576), 1, 1},
                       {128, 1, 1})
               .kernel("vectorized_elementwise_kernel", 21, 110, 1, {blocks(160.0 * 1048576), 1, 1},
                       {128, 1, 1})
               .kernel("vectorized_elementwise_kernel", 41, 120, 1, {blocks(4096.0 * 1024), 1, 1},
                       {128, 1, 1}));
  constexpr double kMiB = 1024.0 * 1024.0;
  const OpContext mask = l.context(0);
  EXPECT_DOUBLE_EQ(mask.vec.bytes_read, 17.0 * 8 * kMiB * 4) << "the mask counted once";
  EXPECT_DOUBLE_EQ(mask.vec.broadcast_reuse_bytes, 12 * kMiB);
  EXPECT_DOUBLE_EQ(mask.vec.broadcast_reread_bytes, 15.0 * 8 * kMiB * 4);
  const OpContext select = l.context(1);
  EXPECT_DOUBLE_EQ(select.vec.broadcast_reuse_bytes, 9 * kMiB) << "a byte per mask element";
  EXPECT_DOUBLE_EQ(select.vec.broadcast_reread_bytes, (160.0 - 1) * kMiB);
  const OpContext bias = l.context(2);
  EXPECT_DOUBLE_EQ(bias.vec.bytes_read, (4096.0 + 1) * 1024 * 4);
  EXPECT_EQ(bias.vec.broadcast_reread_bytes, 0) << "any L2 holds a row of bias";
}

TEST(TraceOpContext, LaunchGeometryStandsInWhenShapesWereNotRecorded) {
  Linked l(
      test::TraceJson()
          .op("aten::mul", 0, 10, "", "")
          .op("aten::_foreach_lerp_", 20, 10, "[[],[],[]]",
              R"(["TensorList","TensorList","Scalar"])")
          .kernel(
              "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, "
              "float, float, at::native::binary_internal::MulFunctor<float> >, "
              "at::detail::Array<char*, 3> >(int)",
              1, 100, 5, {1000, 1, 1}, {128, 1, 1})
          .kernel("void at::native::(anonymous "
                  "namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
                  "namespace)::TensorListMetadata<2>, at::native::(anonymous "
                  "namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::lerp>(int)",
                  21, 200, 50, {320, 1, 1}, {512, 1, 1}));
  const OpContext mul = l.context(0);
  EXPECT_EQ(mul.source, "geometry");
  EXPECT_DOUBLE_EQ(mul.vec.bytes_written, 1000.0 * 512 * 4);
  EXPECT_DOUBLE_EQ(mul.vec.bytes_read, 2 * 1000.0 * 512 * 4);
  const OpContext lerp = l.context(1);
  EXPECT_EQ(lerp.source, "geometry");
  EXPECT_EQ(lerp.name, "aten::_foreach_lerp_");
  EXPECT_DOUBLE_EQ(lerp.vec.bytes_read, 320.0 * 65536 * 4 * 2) << "two lists read";
  EXPECT_DOUBLE_EQ(lerp.vec.bytes_written, 320.0 * 65536 * 4) << "the first list updated in place";
}

TEST(TraceOpContext, CollectivePayloadFromKernelArgsOrTheCommsOps) {
  Linked l(
      test::TraceJson()
          .op("record_param_comms", 0, 100, "", "")
          .op("nccl:all_reduce", 5, 90, "[[1024,1024]]", R"(["c10::BFloat16"])", "", "",
              "user_annotation")
          .op("nccl:all_to_all", 200, 90, "[[8,1024,100]]", R"(["float"])", "", "",
              "user_annotation")
          .kernel(
              "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
              10, 300, 40, {24, 1, 1}, {640, 1, 1}, 20, "cudaLaunchKernel",
              R"(,"Collective name":"allreduce","In msg nelems":4096,"Out msg nelems":4096,"Group size":8,"dtype":"BFloat16")")
          .kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", 210, 400, 40,
                  {24, 1, 1}, {640, 1, 1}, 20));
  const OpContext ar = l.context(0);
  EXPECT_EQ(ar.kind, OpKind::kCollective);
  EXPECT_DOUBLE_EQ(ar.collective.bytes, 4096 * 2.0);
  EXPECT_EQ(ar.collective.ranks, 8);
  const OpContext a2a = l.context(1);
  EXPECT_DOUBLE_EQ(a2a.collective.bytes, 8.0 * 1024 * 100 * 4);
}

// c10d names the payload's type its own way ("Long", "Short", "Byte"...): each is read at its
// element size, whether op inputs spell it too ("Long") or only c10d does ("Byte").
TEST(TraceOpContext, CollectivePayloadsOfEveryC10dTypeHaveTheirElementSize) {
  const std::pair<const char*, double> types[] = {
      {"Float", 4}, {"Double", 8},       {"Long", 8},          {"Int", 4},        {"Short", 2},
      {"Half", 2},  {"BFloat16", 2},     {"Char", 1},          {"Byte", 1},       {"Bool", 1},
      {"", 4},      {"ComplexFloat", 8}, {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}};
  for (const auto& [dtype, bytes] : types) {
    Linked l(test::TraceJson()
                 .op("record_param_comms", 0, 100, "", "")
                 .kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, "
                         "ncclWork*)",
                         10, 300, 40, {24, 1, 1}, {640, 1, 1}, 20, "cudaLaunchKernel",
                         std::string(R"(,"Collective name":"allreduce","In msg nelems":1000,)") +
                             R"("Out msg nelems":1000,"Group size":2,"dtype":")" + dtype + "\""));
    EXPECT_DOUBLE_EQ(l.context(0).collective.bytes, 1000 * bytes) << dtype;
  }
}

TEST(TraceOpContext, TritonKernelsGetTheirElementCounts) {
  Linked l(test::TraceJson()
               .op("triton_poi_fused_add_cos_sin_0", 0, 100, "[[10,10],[10,10],[10,10],[]]",
                   R"(["float","float","float","Scalar"])", R"(["","","","100"])",
                   "[[10,1],[10,1],[10,1],[]]")
               .kernel("triton_poi_fused_add_cos_sin_0", 50, 200, 2, {1, 1, 1}, {128, 1, 1}, 7,
                       "cuLaunchKernel"));
  std::vector<std::int64_t> ints;
  const OpContext op = l.context(0, &ints);
  EXPECT_EQ(op.vec.rows, 100);
  EXPECT_DOUBLE_EQ(op.vec.bytes_read, 800);
  EXPECT_DOUBLE_EQ(op.vec.bytes_written, 400);
  EXPECT_EQ(ints, (std::vector<std::int64_t>{100}));
}

TEST(TraceOpContext, CudnnSetUpKernelsAreNotTheConvolution) {
  Linked l(
      test::TraceJson()
          .op("aten::cudnn_convolution", 0, 100,
              "[[512,256,56,56],[256,256,3,3],[],[],[],[],[],[],[]]",
              R"(["float","float","ScalarList","ScalarList","ScalarList","Scalar","Scalar","Scalar","Scalar"])",
              R"(["","","[1, 1]","[1, 1]","[1, 1]","1","False","False","True"])")
          .kernel("void "
                  "cask_plugin_cudnn_infer::xmma_cudnn_infer::init_device_workspace_kernel<cask_"
                  "plugin_cudnn_infer::Grid_constant_params>(int)",
                  10, 200, 3, {1, 1, 1}, {1, 1, 1}));
  const OpContext op = l.context();
  EXPECT_NE(op.kind, OpKind::kConv);
  EXPECT_NE(op.kind, OpKind::kGemm);
  EXPECT_GT(op.vec.bytes(), 0);
  EXPECT_LT(op.vec.bytes(), 1e7) << "a one-thread kernel moves a small tensor at most";
}

}  // namespace
}  // namespace pm2lat::reports
