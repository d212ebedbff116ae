// Kernel names of LLM serving stacks, as profilers report them, and the family each belongs
// to. Every name is taken from the public source that defines the kernel (repository and
// file given with it) or from a published profile of it.
#include <gtest/gtest.h>

#include "pm2lat/classifier.h"

namespace pm2lat {
namespace {

struct Named {
  const char* name;
  KernelFamily family;
  const char* source;
};

void expect_families(const std::vector<Named>& names) {
  for (const Named& n : names) {
    const KernelClass c = classify_kernel(n.name);
    EXPECT_EQ(c.family, n.family) << n.name << "\n  (" << n.source << ")\n  got "
                                  << to_string(c.family);
    EXPECT_FALSE(c.config.empty()) << n.name;
  }
}

TEST(ServingKernelNames, MixtureOfExpertsRoutingPermutationAndFinalize) {
  expect_families({
      {"void vllm::moe::topkGatingSoftmax<4, 64, 4, 16, int>(float const*, bool const*, float*, "
       "int, int*, int*, int, int, int, int)",
       KernelFamily::kReduction, "vllm-project/vllm csrc/moe/topk_softmax_kernels.cu"},
      {"void tensorrt_llm::kernels::topkGatingSoftmax<4, 128, 4, 16>(float const*, bool const*, "
       "float*, long, int*, int*, int, int, int, int, int, bool)",
       KernelFamily::kReduction,
       "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/mixtureOfExperts/moe_kernels.cu"},
      {"void moe_fused_gate_kernel<__nv_bfloat16, 8, 256, 32, 1, 4, 4>(void*, void*, float*, "
       "int*, long, long, long, long, long, bool, double)",
       KernelFamily::kReduction, "sgl-project/sglang sgl-kernel/csrc/moe/moe_fused_gate.cu"},
      {"void moe::dev::routing::routingRenormalize::routingIndicesClusterKernel<moe::dev::routing::"
       "routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, 8, true> >(moe::dev::"
       "routing::routingRenormalize::KernelParams<__nv_bfloat16, __nv_bfloat16, 128, 8, true>)",
       KernelFamily::kReduction,
       "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/trtllmGenKernels/blockScaleMoe/"
       "RoutingRenormalize.cu"},
      {"void moe::dev::routing::routingDeepSeek::routingMainKernel<moe::dev::routing::"
       "routingDeepSeek::KernelParams<float, __nv_bfloat16, 256, 8, true> >(moe::dev::routing::"
       "routingDeepSeek::KernelParams<float, __nv_bfloat16, 256, 8, true>)",
       KernelFamily::kReduction,
       "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/trtllmGenKernels/blockScaleMoe/"
       "RoutingDeepSeek.cu"},
      {"void vllm::moe::moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, "
       "int, int, unsigned long, int*, int)",
       KernelFamily::kReduction, "vllm-project/vllm csrc/moe/moe_align_sum_kernels.cu"},
      {"void vllm::moe::count_and_sort_expert_tokens_kernel<int>(int const*, int*, int*, "
       "unsigned long, int)",
       KernelFamily::kReduction, "vllm-project/vllm csrc/moe/moe_align_sum_kernels.cu"},
      {"void expandInputRowsKernel<__nv_bfloat16, true, false>(__nv_bfloat16 const*, "
       "__nv_bfloat16*, float const*, int*, int const*, int*, int*, long const*, long, long "
       "const*, "
       "long, int, int)",
       KernelFamily::kCopy,
       "vllm-project/vllm csrc/moe/permute_unpermute_kernels/moe_permute_unpermute_kernel.inl"},
      {"void finalizeMoeRoutingKernel<__nv_bfloat16, __nv_bfloat16, false>(__nv_bfloat16 const*, "
       "__nv_bfloat16*, float const*, int const*, long, long, long const*)",
       KernelFamily::kReduction,
       "vllm-project/vllm csrc/moe/permute_unpermute_kernels/moe_permute_unpermute_kernel.inl"},
      {"void tensorrt_llm::kernels::cutlass_kernels::finalizeMoeRoutingKernel<__nv_bfloat16, "
       "__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, (tensorrt_llm::kernels::cutlass_kernels::"
       "ScaleMode)1, false>(__nv_bfloat16 const*, __nv_bfloat16*, __nv_bfloat16 const*, float "
       "const*, int const*, int const*, long, long, long const*)",
       KernelFamily::kReduction,
       "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_kernels.cu"},
      {"void vllm::moe::moe_sum_kernel<c10::BFloat16, 2>(c10::BFloat16*, c10::BFloat16 const*, "
       "int)",
       KernelFamily::kReduction, "vllm-project/vllm csrc/moe/moe_align_sum_kernels.cu"},
      {"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*, "
       "int*, int4 const*, float const*, long const*, float const*, bool const*, int const*, int, "
       "int, int, int, int, int, int, void**, int, int, int)",
       KernelFamily::kCollective, "deepseek-ai/DeepEP csrc/kernels/intranode.cu (a vLLM profile)"},
  });
}

TEST(ServingKernelNames, KvCacheWritesAndCopies) {
  expect_families({
      {"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, "
       "(vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, "
       "__nv_bfloat16*, long const*, long, long, long, long, int, int, int, float const*, float "
       "const*)",
       KernelFamily::kCopy, "vllm-project/vllm csrc/cache_kernels.cu"},
      {"void vllm::reshape_and_cache_kernel<c10::BFloat16, c10::BFloat16, "
       "(vllm::Fp8KVCacheDataType)0>(c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16*, "
       "c10::BFloat16*, long const*, int, int, int, int, int, int, float, float)",
       KernelFamily::kCopy, "vllm-project/vllm csrc/cache_kernels.cu"},
      {"void vllm::concat_and_cache_mla_kernel<__nv_bfloat16, __nv_bfloat16, "
       "(vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, "
       "long const*, int, int, int, int, int, int, float const*)",
       KernelFamily::kCopy, "vllm-project/vllm csrc/cache_kernels.cu"},
      {"void vllm::copy_blocks_kernel<c10::BFloat16>(long*, long*, long const*, int)",
       KernelFamily::kCopy, "vllm-project/vllm csrc/cache_kernels.cu"},
  });
  // A cache write gives each token a block: its threads bound the work it can do.
  EXPECT_TRUE(classify_kernel("void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, "
                              "__nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(int)")
                  .element_mapped);
  EXPECT_FALSE(classify_kernel("void vllm::copy_blocks_kernel<c10::BFloat16>(long*, long*, long "
                               "const*, int)")
                   .element_mapped);
}

TEST(ServingKernelNames, RotaryGatedActivationsSamplingAndNorms) {
  expect_families({
      {"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, "
       "c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)",
       KernelFamily::kElementwise, "vllm-project/vllm csrc/pos_encoding_kernels.cu (nsys profile)"},
      {"void flashinfer::BatchQKApplyRotaryPosIdsCosSinCacheKernel<true, 128u, 8u, 16u, "
       "__nv_bfloat16, long>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, "
       "float*, long*, unsigned int, unsigned int, unsigned int, unsigned long, unsigned long)",
       KernelFamily::kElementwise, "flashinfer-ai/flashinfer include/flashinfer/pos_enc.cuh"},
      {"void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, "
       "true>(c10::BFloat16*, c10::BFloat16 const*, int)",
       KernelFamily::kElementwise, "vllm-project/vllm csrc/activation_kernels.cu"},
      {"void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &silu>(__nv_bfloat16*, "
       "__nv_bfloat16 const*, int)",
       KernelFamily::kElementwise, "flashinfer-ai/flashinfer include/flashinfer/activation.cuh"},
      {"void vllm::merge_attn_states_kernel<__nv_bfloat16, 128u>(__nv_bfloat16*, float*, "
       "__nv_bfloat16 const*, float const*, __nv_bfloat16 const*, float const*, unsigned int, "
       "unsigned int, unsigned int)",
       KernelFamily::kElementwise, "vllm-project/vllm csrc/attention/merge_attn_states.cu"},
      {"void flashinfer::PersistentVariableLengthMergeStatesKernel<8u, 16u, 8u, 4u, "
       "__nv_bfloat16, __nv_bfloat16, int>(__nv_bfloat16*, float*, int*, __nv_bfloat16*, float*, "
       "unsigned int, unsigned int*)",
       KernelFamily::kElementwise,
       "flashinfer-ai/flashinfer include/flashinfer/attention/cascade.cuh"},
      {"void vllm::apply_repetition_penalties_kernel<c10::BFloat16>(c10::BFloat16*, bool const*, "
       "bool const*, c10::BFloat16 const*, int, int, int)",
       KernelFamily::kElementwise, "vllm-project/vllm csrc/sampler.cu"},
      // Bookkeeping between decode steps; "flashattn" in its name must not make it attention.
      {"void vllm::prepare_inputs::advance_step_flashattn_kernel<256>(int, int, int, long*, long "
       "const*, long*, int*, int const*, long*)",
       KernelFamily::kElementwise, "vllm-project/vllm csrc/prepare_inputs/advance_step.cu"},
      {"void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, "
       "(cub::BlockScanAlgorithm)0, (cub::BlockReduceAlgorithm)2, 4u, false, float, int>(float*, "
       "int*, float*, int*, int*, unsigned int, float, unsigned int, unsigned long, unsigned long)",
       KernelFamily::kReduction, "flashinfer-ai/flashinfer include/flashinfer/sampling.cuh"},
      {"void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*, "
       "c10::BFloat16 const*, float, int, int)",
       KernelFamily::kLayerNorm, "vllm-project/vllm csrc/layernorm_kernels.cu"},
      {"void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, "
       "__nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)",
       KernelFamily::kLayerNorm, "flashinfer-ai/flashinfer include/flashinfer/norm.cuh"},
  });
}

TEST(ServingKernelNames, ExpertAndDeepGemmKernelsAreGemms) {
  // vLLM's Triton grouped GEMM of the experts: "fused_" must not make it elementwise.
  const KernelClass moe = classify_kernel("fused_moe_kernel");
  EXPECT_EQ(moe.family, KernelFamily::kGemm)
      << "vllm-project/vllm vllm/model_executor/layers/fused_moe/fused_moe.py";
  EXPECT_TRUE(moe.gemm.tensor_core);
  EXPECT_EQ(classify_kernel("fused_moe_kernel_gptq_awq").family, KernelFamily::kGemm);
  // vLLM vllm/model_executor/layers/quantization/utils/fp8_utils.py, SGLang
  // python/sglang/srt/layers/quantization/fp8_kernel.py: Triton FP8 GEMM, 128-blocked scales.
  const KernelClass block_fp8 = classify_kernel("_w8a8_block_fp8_matmul");
  EXPECT_EQ(block_fp8.family, KernelFamily::kGemm);
  EXPECT_EQ(block_fp8.gemm.a, DType::kFp8E4M3);
  EXPECT_EQ(block_fp8.gemm.scaling, GemmScaling::kBlock128);
  // DeepGEMM: operand type and architecture from the name (deepseek-ai/DeepGEMM
  // deep_gemm/include/deep_gemm/fp8_gemm.cuh, impls/sm90_fp8_gemm_1d2d.cuh,
  // impls/sm100_bf16_gemm.cuh, impls/sm100_fp8_fp4_gemm_1d1d.cuh), whichever decoder reads it
  // (the low-precision one reads the tiles of the names it knows).
  struct Expected {
    const char* name;
    DType a;
    const char* arch;
  };
  for (const Expected& e : {
           Expected{"void deep_gemm::fp8_gemm_kernel<4096u, 7168u, 128u, 128u, 128u, 1u, 8u, "
                    "128u, 2u, (deep_gemm::GemmType)0>(__nv_bfloat16*, float*, int*, unsigned "
                    "int, CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap)",
                    DType::kFp8E4M3, "sm90"},
           Expected{"void deep_gemm::sm90_fp8_gemm_1d2d_impl<0u, 4096u, 7168u, 1u, 64u, 128u, "
                    "128u, 128u, 5u, 5u, 128u, 256u, 1u, false, (deep_gemm::GemmType)0>(float*, "
                    "int*, unsigned int, unsigned int, unsigned int, CUtensorMap, CUtensorMap, "
                    "CUtensorMap, CUtensorMap)",
                    DType::kFp8E4M3, "sm90"},
           Expected{"void deep_gemm::sm100_bf16_gemm_impl<(cute::UMMA::Major)0, "
                    "(cute::UMMA::Major)0, 0u, 0u, 0u, 128u, 128u, 64u, 1u>(int*, unsigned int, "
                    "unsigned int, unsigned int, CUtensorMap, CUtensorMap, CUtensorMap)",
                    DType::kBf16, "sm100"},
           Expected{"void deep_gemm::sm100_fp8_fp4_gemm_1d1d_impl<(cute::UMMA::Major)0, "
                    "(cute::UMMA::Major)0, 0u, 0u, 0u, 128u, 128u, 128u>(int*, unsigned int)",
                    DType::kFp8E4M3, "sm100"},
       }) {
    const KernelClass c = classify_kernel(e.name);
    EXPECT_EQ(c.family, KernelFamily::kGemm) << e.name;
    EXPECT_EQ(c.gemm.a, e.a) << e.name;
    EXPECT_EQ(c.gemm.arch, e.arch) << e.name;
    EXPECT_TRUE(c.gemm.tensor_core) << e.name;
  }
  // DeepGEMM's scale-factor layout kernels move memory; they are no GEMM (smxx_layout.cuh).
  for (const char* helper :
       {"void deep_gemm::transpose_fp32<128u, 64u, 4u, 5u>(float const*, float*, unsigned int)",
        "void deep_gemm::pack_fp32_into_ue8m0<1u, 128u, 128u, 4u, true>(float*, unsigned int*, "
        "unsigned int*, unsigned int, unsigned int, unsigned int)"}) {
    EXPECT_NE(classify_kernel(helper).family, KernelFamily::kGemm) << helper;
  }
}

TEST(ServingKernelNames, OtherNamesKeepTheirFamilies) {
  // The generic words the serving rules look past still mean what they meant.
  EXPECT_EQ(classify_kernel("void (anonymous namespace)::softmax_warp_forward<float, float, "
                            "float, 7, false, false>(float*, float const*, int, int, int)")
                .family,
            KernelFamily::kSoftmax);
  EXPECT_EQ(classify_kernel("void at::native::(anonymous namespace)::indexSelectLargeIndex<float, "
                            "long, unsigned int, 2, 2, -2, true>(int)")
                .family,
            KernelFamily::kEmbedding);
  EXPECT_EQ(classify_kernel("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, "
                            "unsigned int, 2, 128, 1>(int)")
                .family,
            KernelFamily::kCopy);
}

}  // namespace
}  // namespace pm2lat
