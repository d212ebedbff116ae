// What a kernel is, decoded from its name and launch geometry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "pm2lat/dtype.h"
#include "pm2lat/gemm_scaling.h"

namespace pm2lat {

// Coarse kind of work; one model family serves each.
enum class KernelFamily : std::uint8_t {
  kUnknown = 0,
  kGemm,
  kSplitKReduce,  // cuBLAS split-K reduction: belongs to the preceding GEMM
  kGemv,          // cuBLAS gemv / small-k helpers
  kElementwise,
  kReduction,
  kSoftmax,
  kLayerNorm,
  kEmbedding,
  kCopy,
  kMemset,
  kConv,
  kAttention,
  kTritonPointwise,
  kTritonReduction,
  kTritonTemplate,
  kOptimizer,
  kCollective,
  kQuantize,  // casts activations to FP8/FP4 with their scale factors ahead of a GEMM
};
// The number of families: keep it after the last enumerator.
inline constexpr std::size_t kKernelFamilyCount =
    static_cast<std::size_t>(KernelFamily::kQuantize) + 1;

std::string_view to_string(KernelFamily f) noexcept;
KernelFamily parse_kernel_family(std::string_view s) noexcept;

// Which naming scheme a GEMM kernel came from (predictor/MODELS.md, "Kernel names").
enum class GemmNameScheme : std::uint8_t {
  kNone = 0,
  kLegacyCublas,  // {arch}_[..]{s,h,i}gemm_{BM}x{BN}[...]_{ab}: maxwell/volta/turing/ampere
  kLegacySgemm,   // sgemm_32x32x32_NN, sgemm_128x128x8_NT_vec (pre-Maxwell style)
  kXmma,          // sm{CC}_xmma_gemm_..._tilesize{BM}x{BN}x{BK}_stage{S}_...
  kNvjet,         // nvjet_[sm{CC}_]{types}_{BM}x{BN}_{BK}x{S}_{CM}x{CN}_...
  kCutlass2,      // cutlass_{arch}_{opclass}_..._{BM}x{BN}_{BK}x{S}_{ab}_align{A}
  kCutlass3,   // cutlass::device_kernel<...GemmUniversal<..., cute::tuple<C<BM>,C<BN>,C<BK>>...>>
  kTriton,     // triton_tem_fused_mm_*: tile not in the name
  kDeepGemm,   // deep_gemm::sm90_fp8_gemm_1d2d_impl<..., BM, BN, BK, ...>
  kTrtllmGen,  // TensorRT-LLM generated: bmm_E4m3_E4m3E4m3_Fp32_t128x8x128..., GemmKernel_...
  kCuteDsl,    // CuTe DSL (FlashInfer, CUTLASS Python): kernel_cutlass_..._Gemm..._tensorptr...
};

std::string_view to_string(GemmNameScheme s) noexcept;

// A GEMM kernel configuration as its name states it. Zero = the name does not say.
struct GemmConfig {
  GemmNameScheme scheme = GemmNameScheme::kNone;
  std::string arch;         // "ampere", "sm80", "sm90", "volta", ... as in the name
  std::int32_t tile_m = 0;  // CTA tile, first dimension the name gives
  std::int32_t tile_n = 0;
  std::int32_t tile_k = 0;
  std::int32_t stages = 0;
  std::int32_t warps_m = 0, warps_n = 0, warps_k = 0;
  std::int32_t cluster_m = 0, cluster_n = 0;
  std::int32_t slices = 0;   // intra-CTA split-K (sliced1xS)
  bool split_k = false;      // the kernel computes K slices reduced elsewhere
  bool tensor_core = false;  // MMA (tensor cores) vs SIMT FMA
  std::string layout;        // "nn", "tn", "nt", "tt" (A,B), as the name says
  DType a = DType::kUnknown;
  DType b = DType::kUnknown;  // when the name states a second operand type (mixed inputs)
  DType c = DType::kUnknown;
  DType accumulate = DType::kUnknown;
  std::int32_t align = 0;
  GemmScaling scaling = GemmScaling::kNone;  // scale factors the name states (ue8m0, ue4m3, ...)
};

struct KernelClass {
  KernelFamily family = KernelFamily::kUnknown;
  // The name reduced to what identifies the kernel configuration: argument lists and
  // launch-specific suffixes removed, wrapper templates unwrapped
  // (e.g. "ampere_sgemm_128x64_tn", "cutlass_80_simt_sgemm_256x128_8x4_nn_align1").
  std::string config;
  GemmConfig gemm;  // family == kGemm
  // Memory-bound kernels: vector width of global accesses where the name states it.
  std::int32_t vector_width = 0;
  // softmax_warp_forward<..., log2_elements, ...>: rows of at most 2^log2 elements.
  std::int32_t log2_row_elements = 0;
  bool backward = false;  // a backward/gradient kernel (softmax_warp_backward, ...)
  // The launch is sized to the work and each thread handles a few elements, no grid-stride
  // loop (ATen's elementwise templates, Triton pointwise kernels, per-token cache writes): a
  // launch's threads bound the work it can do (physical_bounds.h).
  bool element_mapped = false;
  DType dtype = DType::kUnknown;  // element type the name states, if any
  // A configuration standing for whichever kernels a library runs for a call, from a table
  // that times calls and names no kernel: its tiles and launch grid are the model's, not
  // what ran, so they say nothing of how many SMs the call kept busy.
  bool nominal = false;
  // A convolution's set-up or transform kernel by its name (names_conv_helper_kernel, in
  // classifier.h): memory-bound work, not the implicit GEMM. Decoded once with the class.
  bool conv_helper = false;
};

}  // namespace pm2lat
