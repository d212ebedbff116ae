// Kernel classifier: kernel name -> family and decoded configuration. Rules are ordered
// from the most specific names to the most generic ones; the first that matches wins.
#include "pm2lat/classifier.h"

#include <algorithm>
#include <array>
#include <string>

#include "classify/gemm_name_decoder.h"
#include "classify/lowp_name_decoder.h"
#include "classify/name_parts.h"
#include "classify/serving_kernel_names.h"
#include "pm2lat/text.h"

namespace pm2lat {
namespace {

bool any_of(std::string_view s, std::initializer_list<std::string_view> needles) {
  return std::ranges::any_of(needles, [s](std::string_view n) { return contains(s, n); });
}

// First element type named in template arguments ("<float", "c10::BFloat16", ...).
DType template_dtype(std::string_view s) {
  struct Word {
    std::string_view text;
    DType type;
  };
  static constexpr std::array<Word, 9> kWords{{
      {"BFloat16", DType::kBf16},
      {"bfloat16", DType::kBf16},
      {"c10::Half", DType::kFp16},
      {"half_t", DType::kFp16},
      {"__half", DType::kFp16},
      {"Float8_e4m3", DType::kFp8E4M3},
      {"double", DType::kFp64},
      {"<float", DType::kFp32},
      {"float", DType::kFp32},
  }};
  std::size_t best = std::string_view::npos;
  DType type = DType::kUnknown;
  for (const auto& w : kWords) {
    const std::size_t p = s.find(w.text);
    if (p < best) {
      best = p;
      type = w.type;
    }
  }
  return type;
}

// cuDNN's own tensor-core convolutions name their MMA shape before "cudnn" in one word
// (volta_fp16_s884cudnn_fp16_256x128_..., turing_fp16_s1688cudnn_..., volta_h884cudnn_...), as
// its SIMT ones write "scudnn"; a bare "cudnn" word is a library suffix (..._kernel__5x_cudnn).
bool names_cudnn_convolution_word(std::string_view base) {
  constexpr std::string_view kCudnn = "cudnn";
  return std::ranges::any_of(split_underscore(base), [&](std::string_view word) {
    return word.size() > kCudnn.size() && word.ends_with(kCudnn);
  });
}

// The leading integer template argument (vector width of vectorized_elementwise_kernel<4,...>).
std::int32_t leading_int_arg(std::string_view s) {
  const auto args = template_args(s);
  if (args.empty()) return 0;
  return parse_int(args.front()).value_or(0);
}

// softmax_warp_forward<in, out, acc, log2_elements, is_log, is_masked>
std::int32_t softmax_log2_elements(std::string_view s) {
  const auto args = template_args(s);
  if (args.size() < 4) return 0;
  return parse_int(args[3]).value_or(0);
}

KernelFamily triton_family(std::string_view n) {
  if (n.substr(0, 11) == "triton_poi_") return KernelFamily::kTritonPointwise;
  if (n.substr(0, 11) == "triton_red_" || n.substr(0, 11) == "triton_per_")
    return KernelFamily::kTritonReduction;
  if (n.substr(0, 11) == "triton_tem_") {
    return contains(n, "attention") ? KernelFamily::kAttention : KernelFamily::kTritonTemplate;
  }
  return KernelFamily::kTritonPointwise;  // triton_for_*, old "triton__0d1d..." names
}

}  // namespace

KernelClass classify_kernel(std::string_view raw_name) noexcept {
  KernelClass cls;
  try {
    const std::string name = normalize_kernel_name(raw_name);
    const std::string lname = ascii_lower(name);
    const std::string_view n = name;
    const std::string_view l = lname;
    cls.dtype = template_dtype(n);
    cls.backward = any_of(l, {"backward", "_bwd", "bprop", "grad"});
    // ATen's elementwise templates size their grid to the tensor (4 elements a thread, 32-bit
    // indexing splits: Loops.cuh); Triton pointwise kernels give each program XBLOCK elements;
    // vLLM's cache writes give each token a block whose threads stride over heads x head size
    // (csrc/cache_kernels.cu).
    cls.element_mapped = any_of(l, {"vectorized_elementwise_kernel", "unrolled_elementwise_kernel",
                                    "elementwise_kernel<", "elementwise_kernel_with_index",
                                    "triton_poi_", "reshape_and_cache", "concat_and_cache"});

    auto finish = [&](KernelFamily f, std::string config) {
      cls.family = f;
      cls.config = std::move(config);
      cls.conv_helper = names_conv_helper_kernel(cls.config);
      return cls;
    };

    if (l.empty()) return finish(KernelFamily::kUnknown, "");
    if (any_of(l, {"nccl", "cross_device_reduce", "all_reduce", "allreduce"}))
      return finish(KernelFamily::kCollective, std::string(base_name(n)));
    if (auto q = decode_quantize_name(l)) {
      cls.dtype = q->dtype;
      cls.gemm.a = q->dtype;
      cls.gemm.scaling = q->scaling;
      return finish(KernelFamily::kQuantize, std::string(base_name(n)));
    }
    if (l.substr(0, 7) == "triton_") {
      const auto f = triton_family(l);
      if (f == KernelFamily::kTritonTemplate) {
        cls.gemm.scheme = GemmNameScheme::kTriton;
        cls.gemm.tensor_core = true;
      }
      return finish(f, name);
    }
    // Serving stacks' helpers first: some carry an attention word in their name
    // (advance_step_flashattn_kernel is bookkeeping, not attention).
    if (auto f = serving_kernel_family(l)) return finish(*f, std::string(base_name(n)));
    if (any_of(l, {"flash_fwd", "flash_bwd", "flashattn", "fmha", "sdpa", "paged_attention",
                   "batchprefill", "batchdecode", "_attn_fwd", "_attn_bwd", "attention_kernel",
                   "flashattention"}))
      return finish(KernelFamily::kAttention, std::string(base_name(n)));
    // cuDNN's xmma convolutions name their split-K reduction after the main kernel, with
    // "execute_split_k_kernel" where the main one says "execute_segment_k_..._kernel".
    if (any_of(l, {"splitkreduce", "reducesplitk", "split_k_reduce", "execute_split_k_kernel"}))
      return finish(KernelFamily::kSplitKReduce, std::string(base_name(n)));
    if (any_of(l, {"gemv", "gemmk1_kernel", "gemmsn_", "dot_kernel"}))
      return finish(KernelFamily::kGemv, std::string(base_name(n)));
    // (cuDNN's layout transforms; "tensortransform" before the reductions' "sort" can match it)
    if (any_of(l, {"nchwtonhwc", "nhwctonchw", "flip_filter", "tensortransform"}))
      return finish(KernelFamily::kCopy, std::string(base_name(n)));
    if (any_of(l, {"bn_fw", "bn_bw", "batch_norm", "batchnorm"}))
      return finish(KernelFamily::kReduction, std::string(base_name(n)));

    const bool cudnn_conv = any_of(l, {"scudnn",
                                       "cudnn_infer",
                                       "cudnn_train",
                                       "fft2d",
                                       "winograd",
                                       "convolve",
                                       "im2col",
                                       "gcgemm",
                                       "conv2d",
                                       "convolution",
                                       "wgrad_alg",
                                       "dgrad_engine",
                                       "precompute_indices",
                                       "computeboffsets",
                                       "computeoffsets",
                                       "computewgrad",
                                       "region_transform",
                                       "cask_cudnn",
                                       "_fprop",
                                       "_dgrad",
                                       "_wgrad",
                                       "dgrad2d",
                                       "wgrad2d",
                                       "col2im",
                                       "xmma_cudnn",
                                       "implicit_gemm"}) ||
                            names_cudnn_convolution_word(base_name(l));
    if (auto g = decode_gemm_name(n)) {
      cls.gemm = g->config;
      return finish(g->is_conv || cudnn_conv ? KernelFamily::kConv : KernelFamily::kGemm, name);
    }
    // Serving stacks' GEMMs that no decoder above reads (a Triton grouped GEMM of the experts,
    // DeepGEMM's kernels outside the low-precision decoder's names).
    if (auto g = serving_gemm_config(l)) {
      cls.gemm = std::move(*g);
      return finish(KernelFamily::kGemm, std::string(base_name(n)));
    }
    if (cudnn_conv) {
      // cuDNN's own SIMT kernels state their CTA tile too (cudnn_infer_volta_scudnn_128x64_...),
      // and the generation they were built for.
      for (std::string_view t : split_underscore(base_name(n))) {
        if (cls.gemm.arch.empty() && architecture_word_generation(t) > 0)
          cls.gemm.arch = std::string(t);
        if (auto d = parse_dims(t); d.size() == 2 && d[0] >= 16 && d[1] >= 16) {
          cls.gemm.tile_m = d[0];
          cls.gemm.tile_n = d[1];
          break;
        }
      }
      return finish(KernelFamily::kConv, std::string(base_name(n)));
    }
    // ATen's reflection and replication pads copy the input into a larger output (their
    // backward adds it back): data movement, as a transpose is.
    if (any_of(l, {"transpose", "permute", "reflection_pad", "replication_pad"}))
      return finish(KernelFamily::kCopy, std::string(base_name(n)));

    if (contains(l, "softmax")) {
      cls.log2_row_elements = softmax_log2_elements(n);
      return finish(KernelFamily::kSoftmax, std::string(base_name(n)));
    }
    if (any_of(l, {"layer_norm", "layernorm", "rms_norm", "rmsnorm", "rowwisemoments",
                   "gammabetabackward", "compute_stats", "norm_kernel",
                   // GroupNorm's per-group moments and fused scale/shift (group_norm_kernel.cu)
                   "fusedparams", "internalgradients", "gammabeta1dbackward",
                   // other libraries' GroupNorm (TensorRT's groupNormNHWCSumKernel, Paddle's
                   // GroupNormForwardNCHWCUDAKernel) and instance norm: rows of a tensor normalised
                   "groupnorm", "group_norm", "instancenorm", "instance_norm",
                   // apex's fused layer norm backward (layer_norm_cuda_kernel.cu)
                   "cucomputegradinput", "cucomputepartgradgammabeta", "cucomputegradgammabeta"}))
      return finish(KernelFamily::kLayerNorm, std::string(base_name(n)));
    if (any_of(l, {"multi_tensor_apply", "adamfunctor", "fused_adam", "adamw", "sgdfunctor",
                   "fused_sgd", "optimizer"}))
      return finish(KernelFamily::kOptimizer, std::string(base_name(n)));
    if (any_of(l, {"embedding", "indexselect", "index_select", "embbag", "gather_kernel",
                   "scatter_gather", "index_elementwise", "indexing_backward", "index_put",
                   "take_along", "indexfunc", "bounds_check_indices", "offsets_range",
                   "linearize_index", "to_dense_representation",
                   // embedding_dense_backward's segment reduction (EmbeddingBackwardKernel.cu)
                   "partials_per_segment", "partial_segment", "segment_offsets",
                   "compute_grad_weight", "sum_and_scatter"}))
      return finish(KernelFamily::kEmbedding, std::string(base_name(n)));
    // A fill writes its output only; masked_fill and index_fill also read the tensor and the
    // mask or index they fill by (ATen's launcher states three tensors), as elementwise
    // kernels do.
    if (any_of(l, {"memset", "fillfunctor", "fill_kernel", "zero_"}) &&
        !any_of(l, {"masked_fill", "index_fill"}))
      return finish(KernelFamily::kMemset, std::string(base_name(n)));
    if (any_of(l, {"catarraybatchedcopy", "copy_kernel", "direct_copy", "memcpy", "recat_copy",
                   "copy_async", "contiguous", "_to_copy", "copy_device_to_device"}))
      return finish(KernelFamily::kCopy, std::string(base_name(n)));
    if (any_of(l, {"reduce_kernel", "reduce_", "devicereduce", "devicescan", "radixsort",
                   "devicesegmented", "cub::", "cunn_classnll", "nll_loss", "cross_entropy",
                   "mean_kernel", "sum_kernel", "norm_", "adaptive_average", "avg_pool", "max_pool",
                   "pool2d", "argmax", "topk", "sort", "_reduction", "scan_innermost",
                   "scan_outer_dim", "pooling_",
                   // torch.multinomial's draws: a search of each row's distribution
                   "multinomial"}))
      return finish(KernelFamily::kReduction, std::string(base_name(n)));
    if (any_of(l, {"elementwise", "dropout", "distribution", "pointwise", "unrolled", "vectorized",
                   "apply_kernel", "where_kernel", "clamp", "bernoulli", "fused_", "activation",
                   "upsample", "epilogue::impl", "triu_tril", "fill_reverse_indices", "relu",
                   "generic_tensor",
                   // AMP's loss-scale update (AmpKernels.cu), the fused LSTM/GRU cell gates
                   // (RNN.cu), cuBLAS's vector scaling
                   "amp_update_scale", "lstm_cell", "gru_cell", "scal_kernel"})) {
      cls.vector_width = contains(l, "vectorized_elementwise") ? leading_int_arg(n) : 0;
      return finish(KernelFamily::kElementwise, std::string(base_name(n)));
    }
    return finish(KernelFamily::kUnknown, name);
  } catch (...) {
    // Classification must never take the caller down: an odd name is just unknown.
    KernelClass unknown;
    return unknown;
  }
}

}  // namespace pm2lat
