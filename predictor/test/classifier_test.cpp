// The kernel classifier, name by name. Every kernel name of the public measurements is checked
// by calibrate/test/measured_kernel_names_test.cpp (when the measurements are available).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pm2lat/classifier.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/models/conv_model.h"

namespace pm2lat {
namespace {

TEST(Classifier, LegacyCublasNames) {
  auto c = classify_kernel("ampere_sgemm_64x32_sliced1x4_tn");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_EQ(c.gemm.scheme, GemmNameScheme::kLegacyCublas);
  EXPECT_EQ(c.gemm.tile_m, 64);
  EXPECT_EQ(c.gemm.tile_n, 32);
  EXPECT_EQ(c.gemm.slices, 4);
  EXPECT_EQ(c.gemm.layout, "tn");
  EXPECT_FALSE(c.gemm.tensor_core);
  EXPECT_EQ(c.gemm.a, DType::kFp32);

  c = classify_kernel("turing_fp16_s1688gemm_fp16_256x128_ldg8_f2f_stages_32x1_tn");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_TRUE(c.gemm.tensor_core);
  EXPECT_EQ(c.gemm.a, DType::kFp16);
  EXPECT_EQ(c.gemm.accumulate, DType::kFp32);
  EXPECT_EQ(c.gemm.tile_m, 256);
  EXPECT_EQ(c.gemm.tile_n, 128);
  EXPECT_EQ(c.gemm.tile_k, 32);
  EXPECT_EQ(c.gemm.stages, 1);

  c = classify_kernel("ampere_bf16_s16816gemm_bf16_64x64_sliced1x2_ldg8_relu_f2f_stages_64x6_tn");
  EXPECT_EQ(c.gemm.a, DType::kBf16);
  EXPECT_EQ(c.gemm.tile_k, 64);
  EXPECT_EQ(c.gemm.stages, 6);
  EXPECT_EQ(c.gemm.slices, 2);
}

TEST(Classifier, XmmaNames) {
  auto c = classify_kernel(
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
      "execute_segment_k_off_kernel__5x_cublas");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_EQ(c.gemm.scheme, GemmNameScheme::kXmma);
  EXPECT_EQ(c.gemm.arch, "sm90");
  EXPECT_TRUE(c.gemm.tensor_core);
  EXPECT_EQ(c.gemm.a, DType::kBf16);
  EXPECT_EQ(c.gemm.c, DType::kBf16);
  EXPECT_EQ(c.gemm.accumulate, DType::kFp32);
  EXPECT_EQ(c.gemm.layout, "tn");

  c = classify_kernel(
      "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_"
      "aligna4_alignc4_execute_kernel__5x_cublas");
  EXPECT_FALSE(c.gemm.tensor_core);
  EXPECT_EQ(c.gemm.stages, 3);
  EXPECT_EQ(c.gemm.warps_n, 4);

  c = classify_kernel(
      "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_"
      "execute_segment_k_off_kernel__5x_cublas");
  EXPECT_TRUE(c.gemm.tensor_core);
  EXPECT_EQ(c.gemm.a, DType::kFp32);

  c = classify_kernel(
      "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x256x32_"
      "cgasize2x1x1_warpgroupsize2x1x1_g1_execute_segment_k_off_kernel_cudnn_infer");
  EXPECT_EQ(c.family, KernelFamily::kConv);
  EXPECT_EQ(c.gemm.cluster_m, 2);
}

TEST(Classifier, NvjetNames) {
  auto c = classify_kernel("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_EQ(c.gemm.scheme, GemmNameScheme::kNvjet);
  EXPECT_EQ(c.gemm.tile_m, 128);
  EXPECT_EQ(c.gemm.tile_n, 256);
  EXPECT_EQ(c.gemm.tile_k, 64);
  EXPECT_EQ(c.gemm.stages, 4);
  EXPECT_EQ(c.gemm.cluster_n, 2);
  EXPECT_EQ(c.gemm.layout, "tn");
  EXPECT_FALSE(c.gemm.split_k);
  c = classify_kernel("nvjet_sm100_tst_64x16_64x16_2x1_v_bz_splitK_TNT");
  EXPECT_TRUE(c.gemm.split_k);
  EXPECT_EQ(c.gemm.arch, "sm100");
}

TEST(Classifier, CutlassNamesInsideTheLauncherTemplate) {
  const auto c = classify_kernel(
      "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4>"
      "(cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4::Params)");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_EQ(c.config, "cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4");
  EXPECT_TRUE(c.gemm.tensor_core);  // TF32
  EXPECT_EQ(c.gemm.stages, 3);
  EXPECT_EQ(c.gemm.align, 4);
  const auto three = classify_kernel(
      "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, "
      "int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::"
      "MainloopSm90TmaGmmaWarpSpecialized<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1>>>, "
      "cute::tuple<cute::C<128>, cute::C<256>, cute::C<64>>, cutlass::bfloat16_t>>>(Params)");
  EXPECT_EQ(three.family, KernelFamily::kGemm);
  EXPECT_TRUE(three.gemm.tensor_core);
  EXPECT_EQ(three.gemm.a, DType::kBf16);
  // The tile, not the dispatch policy's cluster shape that comes before it.
  EXPECT_EQ(three.gemm.tile_m, 128);
  EXPECT_EQ(three.gemm.tile_n, 256);
  EXPECT_EQ(three.gemm.tile_k, 64);
}

TEST(Classifier, SplitKReduceBelongsToTheGemm) {
  EXPECT_EQ(classify_kernel("void splitKreduce_kernel<float, float, float, float, true, false, "
                            "false>(cublasSplitKParams<float>, float const*)")
                .family,
            KernelFamily::kSplitKReduce);
}

TEST(Classifier, AtenFamilies) {
  auto c = classify_kernel(
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3>)");
  EXPECT_EQ(c.family, KernelFamily::kElementwise);
  EXPECT_EQ(c.vector_width, 4);
  EXPECT_EQ(c.dtype, DType::kFp32);
  c = classify_kernel(
      "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, "
      "false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)");
  EXPECT_EQ(c.family, KernelFamily::kSoftmax);
  EXPECT_EQ(c.log2_row_elements, 10);
  EXPECT_EQ(c.dtype, DType::kBf16);
  EXPECT_EQ(classify_kernel("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel"
                            "<float, float>(int, float, float const*, float const*, float const*, "
                            "float*, float*, float*)")
                .family,
            KernelFamily::kLayerNorm);
  EXPECT_EQ(classify_kernel("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
                            "at::native::func_wrapper_t<float, at::native::sum_functor<float, "
                            "float, float>::operator()(at::TensorIterator&)::{lambda(float, "
                            "float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float>)")
                .family,
            KernelFamily::kReduction);
}

// A fill writes only its output; masked_fill reads the tensor and its mask too (ATen launches
// it with three tensors), so it is priced as an elementwise kernel, not as a memset.
TEST(Classifier, MaskedFillIsElementwiseNotAFill) {
  EXPECT_EQ(classify_kernel("void at::native::vectorized_elementwise_kernel<4, "
                            "at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, "
                            "at::native::FillFunctor<float>, std::array<char*, 1ul>)")
                .family,
            KernelFamily::kMemset);
  EXPECT_EQ(classify_kernel("void at::native::vectorized_elementwise_kernel<4, at::native::"
                            "(anonymous namespace)::masked_fill_kernel(at::TensorIterator&, "
                            "c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#7}"
                            "::operator()() const::{lambda(float, bool)#1}, std::array<char*, "
                            "3ul> >(int, ...)")
                .family,
            KernelFamily::kElementwise);
  EXPECT_EQ(classify_kernel("void at::native::elementwise_kernel<128, 4, at::native::"
                            "gpu_kernel_impl_nocast<at::native::index_fill_kernel_impl<at::native::"
                            "OpaqueType<4> >(at::TensorIterator&, long, long, long, long)::"
                            "{lambda(char*)#1}>(at::TensorIteratorBase&)::{lambda(int)#1}>(int)")
                .family,
            KernelFamily::kElementwise);
}

TEST(Classifier, OtherFamilies) {
  EXPECT_EQ(classify_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, "
                            "ncclWork*)")
                .family,
            KernelFamily::kCollective);
  EXPECT_EQ(classify_kernel("triton_poi_fused_add_cos_sin_0").family,
            KernelFamily::kTritonPointwise);
  EXPECT_EQ(classify_kernel("triton_per_fused_add_embedding_mean_mul_pow_rsqrt_6").family,
            KernelFamily::kTritonReduction);
  EXPECT_EQ(classify_kernel("triton_tem_fused_mm_0").family, KernelFamily::kTritonTemplate);
  EXPECT_EQ(classify_kernel("fmha_cutlassF_f16_aligned_64x64_rf_sm80").family,
            KernelFamily::kAttention);
  EXPECT_EQ(classify_kernel("cudnn_infer_volta_scudnn_128x64_relu_small_nn_v1").family,
            KernelFamily::kConv);
}

// cuDNN's own kernels name the generation they were built for, as cuBLAS's legacy ones do:
// what an uncalibrated kernel's efficiency on another GPU depends on (shapeless_tile_model.h).
TEST(Classifier, CudnnKernelsSayWhichGenerationTheyWereBuiltFor) {
  const KernelClass volta = classify_kernel("cudnn_infer_volta_scudnn_128x64_relu_small_nn_v1");
  EXPECT_EQ(volta.gemm.arch, "volta");
  EXPECT_EQ(volta.gemm.tile_m, 128);
  EXPECT_EQ(classify_kernel("cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1").gemm.arch,
            "ampere");
  EXPECT_EQ(classify_kernel("volta_sgemm_128x64_nn").gemm.arch, "volta");
  EXPECT_TRUE(classify_kernel("implicit_convolve_sgemm").gemm.arch.empty());
}

// cuDNN's tensor-core convolutions write their MMA shape into the "cudnn" word
// (volta_fp16_s884cudnn_...), its direct kernels say dgrad2d / wgrad2d: convolutions, priced by
// the convolution model from their call's shape instead of a roofline at the GPU's peak.
TEST(Classifier, CudnnTensorCoreAndDirectConvolutions) {
  const KernelClass fp16 =
      classify_kernel("volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1");
  EXPECT_EQ(fp16.family, KernelFamily::kConv);
  EXPECT_EQ(fp16.gemm.arch, "volta");
  EXPECT_EQ(fp16.gemm.tile_m, 256);
  EXPECT_EQ(fp16.gemm.tile_n, 128);
  for (const char* name :
       {"volta_h884cudnn_256x64_ldg8_relu_exp_small_nhwc_tn_v1",
        "turing_fp16_s1688cudnn_fp16_256x128_ldg8_relu_f2f_exp_interior_nhwc_tn_v1",
        "ampere_s16816cudnn_256x64_ldg8_relu_exp_small_nhwc_tn_v1",
        "void cudnn::detail::dgrad2d_alg1_1<float, 0, 6, 7, 5, 4, 5, true, true>(int)",
        "void cudnn::cnn::wgrad2d_grouped_direct_kernel<false, float, float, float>()",
        "void xmma_cudnn::gemm::kernel<xmma_cudnn::implicit_gemm::fprop_indexed::Traits>(int)",
        "void at::native::col2im_kernel<float, float>(long, float const*)"}) {
    EXPECT_EQ(classify_kernel(name).family, KernelFamily::kConv) << name;
  }
  // A bare "cudnn" word is the library's suffix, not a convolution.
  EXPECT_EQ(classify_kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_"
                            "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cudnn")
                .family,
            KernelFamily::kGemm);
}

// The helpers of ATen operators that training runs launch, in their operator's family.
TEST(Classifier, TrainingHelpersOfAtenOperators) {
  for (const char* name :
       {"void at::native::(anonymous namespace)::krn_partials_per_segment<long>(long*)",
        "void at::native::(anonymous namespace)::krn_partial_segment_offset<long>(long*)",
        "void at::native::(anonymous namespace)::compute_num_of_partial_segments<long>(long*)",
        "void at::native::(anonymous namespace)::segment_offsets_kernel<long>(long*, long)",
        "void at::native::(anonymous namespace)::compute_grad_weight<float, long>(long const*)",
        "void at::native::(anonymous namespace)::sum_and_scatter<float, long>(long const*)"}) {
    EXPECT_EQ(classify_kernel(name).family, KernelFamily::kEmbedding) << name;
  }
  EXPECT_EQ(classify_kernel("void at::native::tensor_kernel_scan_innermost_dim<float, "
                            "std::plus<float> >(float*, float const*, unsigned int)")
                .family,
            KernelFamily::kReduction);
  EXPECT_EQ(classify_kernel("void at::native::(anonymous namespace)::"
                            "ComputeFusedParamsCUDAKernel<float, float>(long, long, long)")
                .family,
            KernelFamily::kLayerNorm);
  EXPECT_EQ(
      classify_kernel("void at::native::triu_tril_kernel<float, int, false, 4, true>()").family,
      KernelFamily::kElementwise);
  // AMP's loss-scale update (AmpKernels.cu), the fused recurrent cells' gates (RNN.cu),
  // cuBLAS's vector scaling: pointwise.
  for (const char* name :
       {"void at::native::amp_update_scale_cuda_kernel(float*, int*, float const*, double, "
        "double, int)",
        "void at::native::(anonymous namespace)::lstm_cell_forward<float, float, int, 2>"
        "(at::cuda::detail::TensorInfo<float, int>)",
        "void at::native::(anonymous namespace)::gru_cell_backward<c10::Half, float, int, 1>"
        "(at::cuda::detail::TensorInfo<c10::Half, int>)",
        "void scal_kernel<float, float, 1, true, 6, 5, 5, 3>(cublasScalParamsEx<float, float>)"}) {
    EXPECT_EQ(classify_kernel(name).family, KernelFamily::kElementwise) << name;
  }
  // torch.multinomial's draws (MultinomialKernel.cu) search each row's distribution.
  EXPECT_EQ(classify_kernel("void at::native::(anonymous namespace)::"
                            "multinomial_with_replacement_kernel_impl<float, float>(long, "
                            "at::PhiloxCudaState, long, float*, long, float const*)")
                .family,
            KernelFamily::kReduction);
  // cuDNN's weight-gradient offset tables: set-up kernels of a convolution, not its math.
  for (const char* name : {"void cudnn::gemm::computeWgradSplitKOffsetsKernel(cudnn::gemm::"
                           "ComputeOffsetsParams)",
                           "void cudnn::gemm::computeWgradBOffsetsKernel(cudnn::gemm::"
                           "ComputeBOffsetsParams)"}) {
    const KernelClass c = classify_kernel(name);
    EXPECT_EQ(c.family, KernelFamily::kConv) << name;
    EXPECT_TRUE(is_conv_helper_kernel(KernelRecord{}, c)) << name;
  }
}

// Normalisations, pads and im2col's inverse as other libraries and ATen's slower paths name them.
TEST(Classifier, GroupNormPadsAndCol2im) {
  for (const char* name :
       {"void groupNormNHWCSumKernel<__half, 256, 2>(__half const*, float*, int, int, int, int)",
        "void phi::GroupNormForwardNCHWCUDAKernel<float>(int, int, float const*, float const*, "
        "float const*, float*)",
        "void cudnn::ops::instancenorm_fwd_kernel<float>(cudnnTensorStruct, float const*)"}) {
    EXPECT_EQ(classify_kernel(name).family, KernelFamily::kLayerNorm) << name;
  }
  for (const char* name :
       {"void at::native::(anonymous namespace)::reflection_pad2d_out_kernel<float>(float const*, "
        "float*, long, long, long, long, long, long, long)",
        "void at::native::(anonymous namespace)::replication_pad_backward_kernel<float>(at::"
        "GenericPackedTensorAccessor<float, 4ul, at::DefaultPtrTraits, long>, int, int)"}) {
    EXPECT_EQ(classify_kernel(name).family, KernelFamily::kCopy) << name;
  }
  // col2im scatters the columns back into an image: a convolution's data movement, as im2col
  // is, not its math (priced by bytes, never by the convolution's FLOPs).
  for (const char* name :
       {"void at::native::(anonymous namespace)::col2im_kernel<float, float>(long, float const*, "
        "long, long, long, long, long, long, long, long, long, long, long, long, long, float*)",
        "void at::native::(anonymous namespace)::im2col_kernel<float>(long, float const*, long, "
        "long, long, long, long, long, long, long, long, long, long, long, float*)"}) {
    const KernelClass c = classify_kernel(name);
    EXPECT_EQ(c.family, KernelFamily::kConv) << name;
    EXPECT_TRUE(is_conv_helper_kernel(KernelRecord{}, c)) << name;
  }
}

// cuDNN's own pooling, activation, tensor-op and layout kernels, apex's layer-norm backward.
TEST(Classifier, CudnnAndApexLayerKernels) {
  // "tensorTransform" holds "sort": a layout transform, not a reduction.
  EXPECT_EQ(classify_kernel("void tensorTransformGeneric<float, float, float, true, false, false, "
                            "(cudnnKernelDataType_t)0>(cudnnTensorTransformStruct, float const*)")
                .family,
            KernelFamily::kCopy);
  EXPECT_EQ(classify_kernel("void cudnn::ops::pooling_bw_kernel_max_nchw<float, float, "
                            "(cudnnNanPropagation_t)0, false>(cudnnTensorStruct, float const*)")
                .family,
            KernelFamily::kReduction);
  EXPECT_EQ(
      classify_kernel("void nchwAddRelu<float>(float const*, float const*, float*, int)").family,
      KernelFamily::kElementwise);
  EXPECT_EQ(classify_kernel("void op_generic_tensor_kernel<2, float, float, float, 256, "
                            "(cudnnGenericOp_t)0>(cudnnTensorStruct, float*)")
                .family,
            KernelFamily::kElementwise);
  for (const char* name :
       {"void cuComputeGradInput<float, float, float>(float const*, float const*, int, int)",
        "void cuComputePartGradGammaBeta<float, float, float>(float const*, float const*, int)",
        "void cuComputeGradGammaBeta<float, float>(float const*, float const*, int, int, int)"}) {
    EXPECT_EQ(classify_kernel(name).family, KernelFamily::kLayerNorm) << name;
  }
}

TEST(Classifier, MangledAndDemangledSpellingsAgree) {
  // void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(...)
  const char* mangled =
      "_ZN2at6native12_GLOBAL__N_128vectorized_layer_norm_kernelIffEEviT0_PKT_S6_S6_PS4_S7_S7_";
  EXPECT_EQ(classify_kernel(mangled).family, KernelFamily::kLayerNorm);
  EXPECT_EQ(normalize_kernel_name("void foo<1, (anonymous namespace)::X>(int, float)"),
            "foo<1, (anonymous namespace)::X>");
}

TEST(Classifier, HostileInputNeverThrows) {
  const std::vector<std::string> odd = {"",
                                        "(",
                                        ")",
                                        "<<<<",
                                        ">>>>",
                                        "void ",
                                        "_Z",
                                        "_ZZZZ",
                                        "nvjet_",
                                        "sm90_xmma_",
                                        "cutlass_",
                                        "ampere_sgemm_x_tn",
                                        std::string(5000, '<'),
                                        "a_b_c_d_e_f_g_h",
                                        "nvjet_tst_99999999999x1_1x1_TNT"};
  for (const auto& s : odd) {
    EXPECT_NO_THROW({ (void)classify_kernel(s); }) << s.substr(0, 40);
  }
}

}  // namespace
}  // namespace pm2lat
