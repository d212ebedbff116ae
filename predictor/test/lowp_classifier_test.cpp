// Low-precision GEMM and quantisation kernel names, each from a public source named next to
// it: the decoder must read the operand types, the scale layout and the tile the name states.
#include <gtest/gtest.h>

#include "pm2lat/classifier.h"

namespace pm2lat {
namespace {

struct Expected {
  GemmNameScheme scheme;
  DType a;
  GemmScaling scaling;
  int tile_m, tile_n, tile_k;
};

void expect_gemm(const std::string& name, const Expected& e) {
  const KernelClass c = classify_kernel(name);
  EXPECT_EQ(c.family, KernelFamily::kGemm) << name;
  EXPECT_EQ(c.gemm.scheme, e.scheme) << name;
  EXPECT_EQ(c.gemm.a, e.a) << name;
  EXPECT_EQ(c.gemm.scaling, e.scaling) << name;
  EXPECT_EQ(c.gemm.tile_m, e.tile_m) << name;
  EXPECT_EQ(c.gemm.tile_n, e.tile_n) << name;
  EXPECT_EQ(c.gemm.tile_k, e.tile_k) << name;
  EXPECT_TRUE(c.gemm.tensor_core) << name;
}

TEST(LowPrecisionNames, Cutlass3xLibraryKernels) {
  // NVIDIA/cutlass issue #2923 (CUTLASS profiler kernels of FP8 GEMMs on sm100).
  expect_gemm(
      "cutlass3x_sm100_tensorop_gemm_e4m3_e4m3_f32_bf16_bf16_64x120x128_1x1x1_0_tnn_align8_"
      "cpasync_1sm_epi_nosmem",
      {GemmNameScheme::kCutlass3, DType::kFp8E4M3, GemmScaling::kNone, 64, 120, 128});
  expect_gemm(
      "cutlass3x_sm100_tensorop_gemm_e4m3_e4m3_f32_bf16_bf16_256x224x128_0x0x1_0_tnt_align16_2sm",
      {GemmNameScheme::kCutlass3, DType::kFp8E4M3, GemmScaling::kNone, 256, 224, 128});
  const KernelClass c = classify_kernel(
      "cutlass3x_sm100_tensorop_gemm_e4m3_e4m3_f32_bf16_bf16_256x224x128_0x0x1_0_tnt_align16_2sm");
  EXPECT_EQ(c.gemm.arch, "sm100");
  EXPECT_EQ(c.gemm.c, DType::kBf16);
  EXPECT_EQ(c.gemm.accumulate, DType::kFp32);
  EXPECT_EQ(c.gemm.layout, "tn");
  EXPECT_EQ(c.gemm.align, 16);
  // MXFP8 block-scaled GEMM cuBLASLt runs for torch._scaled_mm on sm_120 (UE8M0 scales per 32
  // elements), as a PyTorch profiler trace in a public benchmark note records it.
  expect_gemm(
      "cutlass3x_sm120_bstensorop_s16832gemm_block_scaled_ue8m0xe4m3_ue8m0xe4m3_f32_bf16_bf16_"
      "128x128x128_1x1x1_0_tnn_align16_q_bias_bf16_relu",
      {GemmNameScheme::kCutlass3, DType::kFp8E4M3, GemmScaling::kMx32, 128, 128, 128});
}

TEST(LowPrecisionNames, DeepGemmKernels) {
  // deepseek-ai/DeepGEMM JIT instantiation cached in wenscarl/srt-slurm
  // (configs/deepgemm_cache/cache/kernel.sm100_m_grouped_fp8_gemm_contiguous_1d1d.82d4d2d0a0c03ce001e54f014d42bad3/kernel.cu).
  expect_gemm(
      "deep_gemm::sm100_fp8_gemm_1d1d_impl<cute::UMMA::Major::K, cute::UMMA::Major::K, 0, 4096, "
      "7168, 128, 192, 128, 64, 128, 128, 128, 4, 128, 128, 1, false, 138, "
      "GemmType::MGroupedContiguous, false, cutlass::bfloat16_t, EpilogueIdentity>",
      {GemmNameScheme::kDeepGemm, DType::kFp8E4M3, GemmScaling::kBlock128, 128, 192, 128});
  // The same kernel as CUPTI demangles it (integer arguments with their 'u' suffix, enums as
  // casts, the argument list after it).
  expect_gemm(
      "void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, "
      "7168u, 2048u, 128u, 224u, 128u, 1u, 128u, 128u, 64u, 4u, 128u, 128u, 1u, false, 133u, "
      "(deep_gemm::GemmType)0, false, cutlass::bfloat16_t, deep_gemm::EpilogueIdentity>(int*, "
      "unsigned int, unsigned int, unsigned int, CUtensorMap_st, CUtensorMap_st, CUtensorMap_st, "
      "CUtensorMap_st, CUtensorMap_st)",
      {GemmNameScheme::kDeepGemm, DType::kFp8E4M3, GemmScaling::kBlock128, 128, 224, 128});
  // sm90: template parameters in the order of deepseek-ai/DeepGEMM
  // deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh (SHAPE_M, SHAPE_N, SHAPE_K,
  // kNumGroups, BLOCK_M, BLOCK_N, BLOCK_K, ...), as CUPTI demangles an instantiation.
  expect_gemm(
      "void deep_gemm::sm90_fp8_gemm_1d2d_impl<0u, 4096u, 7168u, 1u, 64u, 112u, 128u, 0u, 5u, "
      "5u, 128u, 256u, 1u, false, (deep_gemm::GemmType)0>(float*, int*, unsigned int, unsigned "
      "int, unsigned int, CUtensorMap_st, CUtensorMap_st, CUtensorMap_st, CUtensorMap_st)",
      {GemmNameScheme::kDeepGemm, DType::kFp8E4M3, GemmScaling::kBlock128, 64, 112, 128});
}

TEST(LowPrecisionNames, TensorRtLlmGeneratedKernels) {
  // NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/trtllmGenKernels/batchedGemm/
  // trtllmGen_bmm_export/KernelMetaInfo.h (cubin symbols; the kernel is named in lower case).
  expect_gemm(
      "bmm_E4m3_E4m3E4m3_Fp32_t128x8x128u2_et64x8_m64x8x32_cga1x1x1_16dp256b_TN_transOut_dsFp8_"
      "schedS_bN_sm100a",
      {GemmNameScheme::kTrtllmGen, DType::kFp8E4M3, GemmScaling::kBlock128, 128, 8, 128});
  expect_gemm(
      "Bmm_Bfloat16_E2m1E2m1_Fp32_t128x16x256_et128x16_m128x16x64_cga1x1x1_16dp256b_TN_transOut_"
      "schedP_bN_dynBatch_sm100a",
      {GemmNameScheme::kTrtllmGen, DType::kFp4E2M1, GemmScaling::kNv16, 128, 16, 256});
  expect_gemm(
      "bmm_Bfloat16_E4m3E4m3_Fp32_t128x8x512_et128x8_m128x8x32_cga1x1x1_16dp256b_TN_transOut_"
      "schedS_bN_sm100a",
      {GemmNameScheme::kTrtllmGen, DType::kFp8E4M3, GemmScaling::kPerTensor, 128, 8, 512});
  // MXFP4 weights with FP8 activations (TensorRT-LLM trtllmGen MoE cubins).
  expect_gemm(
      "Bmm_E4m3_MxE2m1E4m3_castMxE4m3_Fp32_bA32_bB32_t128x8x512_s3_et128x8_m128x8x32_cga1x1x1_"
      "16dp256b_rM_TN_transOut_schPd2x1x2x3_biasM_relu2_bN_ldgsts_ldgstsSf_sm100f",
      {GemmNameScheme::kTrtllmGen, DType::kFp4E2M1, GemmScaling::kMx32, 128, 8, 512});
  // NVIDIA/TensorRT-LLM .../gemmGatedAct/trtllmGen_gatedAct_export/KernelMetaInfo.h.
  expect_gemm(
      "GemmGatedActKernel_E4m3_E4m3_Fp32_tile128x128x256_epilogueTile128x128_mma128x128x32_"
      "cluster1x1x1_sm100a",
      {GemmNameScheme::kTrtllmGen, DType::kFp8E4M3, GemmScaling::kPerTensor, 128, 128, 256});
  // NVIDIA/TensorRT-LLM .../batchedGemm/trtllmGen_bmm_export/cubins/ (file names).
  expect_gemm(
      "BatchedGemmKernel_BatchN_E2m1E2m1Fp32_Bfloat16_Tile128x8x256_EpiTile128x8_Mma128x8x64_"
      "Cluster1x1x1_transposeMmaOutput_sm100a",
      {GemmNameScheme::kTrtllmGen, DType::kFp4E2M1, GemmScaling::kNv16, 128, 8, 256});
  const KernelClass c = classify_kernel(
      "bmm_E4m3_E4m3E4m3_Fp32_t128x8x128u2_et64x8_m64x8x32_cga1x1x1_16dp256b_TN_transOut_dsFp8_"
      "schedS_bN_sm100a");
  EXPECT_EQ(c.gemm.arch, "sm100a");
  EXPECT_EQ(c.gemm.layout, "tn");
  EXPECT_EQ(c.gemm.accumulate, DType::kFp32);
}

TEST(LowPrecisionNames, NvjetTypeLettersAndBlockScales) {
  // cuBLASLt's FP8 kernels behind torch._scaled_mm (FP8 A and B, FP32 math, BF16 out), as
  // Nsight Systems summaries of FP8 training runs quoted in public repositories list them.
  auto c = classify_kernel("nvjet_qqtst_128x256_128x6_2x1_2cta_v_bz_TNT");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_EQ(c.gemm.scheme, GemmNameScheme::kNvjet);
  EXPECT_EQ(c.gemm.a, DType::kFp8E4M3);
  EXPECT_EQ(c.gemm.b, DType::kFp8E4M3);
  EXPECT_EQ(c.gemm.c, DType::kBf16);
  EXPECT_EQ(c.gemm.tile_m, 128);
  EXPECT_EQ(c.gemm.tile_n, 256);
  EXPECT_EQ(c.gemm.tile_k, 128);
  c = classify_kernel("nvjet_qqtst_128x256_128x6_2x2_2cta_h_bz_Avec32UE8M0_Bvec32UE8M0_TNT");
  EXPECT_EQ(c.gemm.scaling, GemmScaling::kMx32);
  EXPECT_EQ(c.gemm.a, DType::kFp8E4M3);
  // BF16: the letters the existing nvjet fixtures carry.
  c = classify_kernel("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT");
  EXPECT_EQ(c.gemm.a, DType::kBf16);
  EXPECT_EQ(c.gemm.scaling, GemmScaling::kNone);
}

TEST(LowPrecisionNames, CuteDslKernels) {
  // A FlashInfer CuTe DSL block-scaled GEMM (a vLLM CI coredump quotes the name).
  auto c = classify_kernel(
      "kernel_cutlass_kernel_flashinfergemmkernelsgrouped_gemm_masked_"
      "blackwellSm100BlockScaledPersistentDenseGemmKernel_object_at__TiledMMA_"
      "ThrLayoutVMNK11110000_PermutationMNK____MMAAtom_ThrID_0");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_EQ(c.gemm.scheme, GemmNameScheme::kCuteDsl);
  // A CuTe DSL MXFP8 GEMM from the same torch._scaled_mm trace as the sm_120 CUTLASS kernel.
  c = classify_kernel(
      "kernel_cutlass__scaled_gemm_mxfp8_kernel_tensorptrf8E4M3FNgmemalign16o153615361_"
      "tensorptrf8E4M3FNgmemalign16o512153615361_tensorptrf8E8M0FNUgmemalign4o48481_"
      "tensorptrf8E8M0FNUgmemalign4o5_0");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_EQ(c.gemm.a, DType::kFp8E4M3);
  EXPECT_EQ(c.gemm.scaling, GemmScaling::kMx32);
  // FlashInfer's CuTe DSL RMSNorm is a normalisation, not a GEMM.
  c = classify_kernel(
      "kernel_cutlass_kernel_flashinfernormkernelsrmsnormRMSNormKernel_object_at__"
      "tensorptrbf16gmemalign128o288028801_tensorptrbf16gmemalign16o28801_"
      "tensorptrbf16gmemalign128o288028801___True_4__0");
  EXPECT_EQ(c.family, KernelFamily::kLayerNorm);
}

TEST(LowPrecisionNames, Cutlass3TemplatesStateTheirScales) {
  // vLLM's cutlass_scaled_mm on sm90: a CUTLASS 3 kernel over float_e4m3_t (the template as
  // csrc/quantization/cutlass_w8a8 instantiates it; abbreviated arguments).
  const KernelClass c = classify_kernel(
      "void cutlass::device_kernel<vllm::enable_sm90_or_later<cutlass::gemm::kernel::"
      "GemmUniversal<cute::tuple<int, int, int, int>, cutlass::gemm::collective::CollectiveMma<"
      "cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8<5, cute::tuple<cute::C<1>, "
      "cute::C<2>, cute::C<1> >, cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum>, "
      "cute::tuple<cute::C<64>, cute::C<128>, cute::C<128> >, cutlass::float_e4m3_t, "
      "cute::tuple<long, cute::C<1>, long>, cutlass::float_e4m3_t> > > >(T1::Params)");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_EQ(c.gemm.a, DType::kFp8E4M3);
  EXPECT_EQ(c.gemm.tile_m, 64);
  EXPECT_EQ(c.gemm.tile_n, 128);
  EXPECT_EQ(c.gemm.tile_k, 128);
}

TEST(LowPrecisionNames, QuantisationKernels) {
  struct Case {
    const char* name;
    DType dtype;
    GemmScaling scaling;
  };
  const Case cases[] = {
      // vllm-project/vllm csrc/quantization/fp8/common.cu: static and dynamic per-tensor scales.
      {"void vllm::scaled_fp8_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>(c10::Float8_e4m3fn*, "
       "c10::BFloat16 const*, float const*, long)",
       DType::kFp8E4M3, GemmScaling::kPerTensor},
      {"void vllm::dynamic_per_token_scaled_fp8_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>("
       "c10::Float8_e4m3fn*, float*, c10::BFloat16 const*, float const*, int)",
       DType::kFp8E4M3, GemmScaling::kPerToken},
      // sgl-project/sglang sgl-kernel csrc/gemm/per_token_group_quant_8bit.cu (1x128 groups).
      {"void per_token_group_quant_8bit_kernel<__nv_bfloat16, c10::Float8_e4m3fn, false>("
       "__nv_bfloat16 const*, void*, float*, int, int, int, float, float, float, int, int)",
       DType::kFp8E4M3, GemmScaling::kBlock128},
      // vllm-project/vllm vllm/model_executor/layers/quantization/utils/fp8_utils.py (Triton).
      {"_per_token_group_quant_fp8", DType::kFp8E4M3, GemmScaling::kBlock128},
      // vllm-project/vllm csrc/quantization/fp4/nvfp4_quant_kernels.cu.
      {"void vllm::cvt_fp16_to_fp4<__nv_bfloat16, false>(int, int, __nv_bfloat16 const*, float "
       "const*, unsigned int*, unsigned int*)",
       DType::kFp4E2M1, GemmScaling::kNv16},
      // NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/quantization.cuh (NVFP4 block scales).
      {"void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::"
       "BlockScaleQuantizationType)0, __nv_bfloat16, 16, false>(int, int, int, int, "
       "__nv_bfloat16 const*, float const*, unsigned int*, unsigned int*, "
       "tensorrt_llm::QuantizationSFLayout)",
       DType::kFp4E2M1, GemmScaling::kNv16},
  };
  for (const Case& k : cases) {
    const KernelClass c = classify_kernel(k.name);
    EXPECT_EQ(c.family, KernelFamily::kQuantize) << k.name;
    EXPECT_EQ(c.gemm.a, k.dtype) << k.name;
    EXPECT_EQ(c.gemm.scaling, k.scaling) << k.name;
  }
  // Dequantisation is not quantisation; the per-tensor absmax is a reduction.
  EXPECT_NE(classify_kernel("void vllm::dequant_fp8_kernel<c10::BFloat16>(int)").family,
            KernelFamily::kQuantize);
  EXPECT_EQ(classify_kernel("void vllm::segmented_max_reduction<c10::BFloat16, "
                            "c10::Float8_e4m3fn>(float*, c10::BFloat16 const*, long)")
                .family,
            KernelFamily::kReduction);
}

}  // namespace
}  // namespace pm2lat
