// The kernels PyTorch and FlashAttention launch in a BERT training step (BF16 weights and
// activations, FlashAttention through scaled_dot_product_attention, fused AdamW), under the
// names a CUDA driver reports for them: the Itanium-mangled symbols of the templates in
// PyTorch's sources, instantiated as a BF16 model instantiates them. Each comment gives the
// demangled name (the form PyTorch's profiler prints) and the file that launches it.
//
// The GEMMs are not here: cuBLAS and cuBLASLt launch their own kernels.
#pragma once

namespace bert_step::kernels {

// aten/src/ATen/native/cuda/Indexing.cu (embedding = index_select on the weight):
// at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int,
//     2, 2, -2, true>(TensorInfo<c10::BFloat16, unsigned int>, ...)
inline constexpr const char* kIndexSelect =
    "_ZN2at6native12_GLOBAL__N_121indexSelectLargeIndexIN3c108BFloat16EljLi2ELi2ELin2ELb1EEEvNS_"
    "4cuda6detail10TensorInfoIT_T1_EENS7_IKS8_S9_EENS7_IKT0_S9_EEiiS9_S9_l";

// aten/src/ATen/native/cuda/BinaryAddSubKernel.cu through CUDALoops.cuh:
// at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>,
//     std::array<char*, 3ul>>(int, ...)
inline constexpr const char* kAdd =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIN3c108BFloat16EEESt5"
    "arrayIPcLm3EEEEviT0_T1_";

// aten/src/ATen/native/cuda/ActivationGeluKernel.cu, GeluType::None (BERT's exact GELU):
// at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(
//     at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::
//     {lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>>
inline constexpr const char* kGelu =
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_18GeluCUDAKernelImplERNS_"
    "18TensorIteratorBaseENS0_8GeluTypeEENKUlvE0_clEvENKUlvE2_clEvEUlN3c108BFloat16EE_"
    "St5arrayIPcLm2"
    "EEEEviT0_T1_";
// The same file's GeluBackwardCUDAKernelImpl: {lambda(c10::BFloat16, c10::BFloat16)#1},
// std::array<char*, 3ul>.
inline constexpr const char* kGeluBackward =
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_26GeluBackwardCUDAKernelImplERNS_"
    "18TensorIteratorBaseENS0_8GeluTypeEENKUlvE0_clEvENKUlvE2_clEvEUlN3c108BFloat16ES8_E_St5array"
    "IPcLm3EEEEviT0_T1_";

// aten/src/ATen/native/cuda/layer_norm_kernel.cu:
// at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int,
//     float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*,
//     c10::BFloat16*)
inline constexpr const char* kLayerNorm =
    "_ZN2at6native12_GLOBAL__N_128vectorized_layer_norm_kernelIN3c108BFloat16EfEEviT0_PKT_S8_S8_"
    "PS5_"
    "S9_PS6_";
// ...::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*,
//     c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)
inline constexpr const char* kLayerNormGradInput =
    "_ZN2at6native12_GLOBAL__N_139layer_norm_grad_input_kernel_vectorizedIN3c108BFloat16EfEEvPKT_"
    "S7_"
    "PKT0_SA_S7_PS5_i";
// ...::GammaBetaBackwardCUDAKernel_32x32<c10::BFloat16, float>(long, long, ...)
inline constexpr const char* kLayerNormGradGammaBeta =
    "_ZN2at6native12_GLOBAL__N_133GammaBetaBackwardCUDAKernel_32x32IN3c108BFloat16EfEEvllPKT_S7_"
    "PKT0_"
    "SA_PS5_SB_";

// aten/src/ATen/native/cuda/Dropout.cu:
// at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::BFloat16, float,
//     unsigned int, 1, 4, bool>(TensorInfo<c10::BFloat16 const, unsigned int>, ...,
//     at::PhiloxCudaState)
inline constexpr const char* kDropout =
    "_ZN2at6native12_GLOBAL__N_124fused_dropout_kernel_vecIN3c108BFloat16EfjLi1ELi4EbEEvNS_4cuda6"
    "detail10TensorInfoIKT_T1_EENS7_IS8_SA_EENS7_IT4_SA_EESA_T0_NS_15PhiloxCudaStateE";
// The dropout backward (masked_scale_kernel<bool, c10::BFloat16, float>): a vectorized
// elementwise kernel of {lambda(c10::BFloat16, bool)#1}, std::array<char*, 3ul>.
inline constexpr const char* kDropoutBackward =
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZNS0_12_GLOBAL__N_119masked_scale_"
    "kernelIbN3c10"
    "8BFloat16EfEEvRNS_6TensorERKS6_S9_T1_EUlS5_bE_St5arrayIPcLm3EEEEviT0_SA_";

// aten/src/ATen/native/cuda/ReduceSumProdKernel.cu (a Linear layer's bias gradient: the sum
// of its output gradient over the tokens):
// at::native::reduce_kernel<128, 4, at::native::ReduceOp<c10::BFloat16,
//     at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float,
//     c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int,
//     c10::BFloat16, 4>>(...)
inline constexpr const char* kBiasGradSum =
    "_ZN2at6native13reduce_kernelILi128ELi4ENS0_8ReduceOpIN3c108BFloat16ENS0_14func_wrapper_tIS4_"
    "ZNS0_11sum_functorIS4_fS4_EclERNS_14TensorIteratorEEUlffE_EEjS4_Li4EEEEEvT1_";

// aten/src/ATen/native/cuda/SoftMax.cu (cross entropy = log_softmax + nll_loss over the
// vocabulary):
// at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float,
//     c10::BFloat16, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(
//     c10::BFloat16*, c10::BFloat16 const*, int)
inline constexpr const char* kLogSoftmax =
    "_ZN2at6native12_GLOBAL__N_119cunn_SoftMaxForwardILi8EN3c108BFloat16EfS4_NS1_"
    "25LogSoftMaxForwardEpilogueEEEvPT2_PKT0_i";
// ...::cunn_SoftMaxBackward<8, c10::BFloat16, float, c10::BFloat16,
//     ...::LogSoftMaxBackwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*,
//     c10::BFloat16 const*, long)
inline constexpr const char* kLogSoftmaxBackward =
    "_ZN2at6native12_GLOBAL__N_120cunn_SoftMaxBackwardILi8EN3c108BFloat16EfS4_NS1_"
    "26LogSoftMaxBackwardEpilogueEEEvPT0_PKT2_SA_l";
// aten/src/ATen/native/cuda/Loss.cu:
// ...::nll_loss_forward_reduce_cuda_kernel_2d<c10::BFloat16, float, long>(...)
inline constexpr const char* kNllLoss =
    "_ZN2at6native12_GLOBAL__N_138nll_loss_forward_reduce_cuda_kernel_2dIN3c108BFloat16EflEEvPT_S6_"
    "PKS5_PKT1_S8_bllll";
// ...::nll_loss_backward_reduce_cuda_kernel_2d<c10::BFloat16, long>(...)
inline constexpr const char* kNllLossBackward =
    "_ZN2at6native12_GLOBAL__N_139nll_loss_backward_reduce_cuda_kernel_2dIN3c108BFloat16ElEEvPT_"
    "PKS5_"
    "PKT0_S8_S8_biill";

// aten/src/ATen/native/transformers/cuda/flash_attn/flash_fwd_launch_template.h, head
// dimension 64 with dropout (run_mha_fwd_hdim64: 128 x 64 tiles, 4 warps):
// pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 64, 4,
//     false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 64, 4,
//     cutlass::bfloat16_t>>, true, false, false, false, true, true, false>(
//     pytorch_flash::Flash_fwd_params)
inline constexpr const char* kFlashForward =
    "_ZN13pytorch_flash16flash_fwd_kernelINS_23Flash_fwd_kernel_"
    "traitsILi64ELi128ELi64ELi4ELb0ELb0EN7"
    "cutlass10bfloat16_tENS_19Flash_kernel_traitsILi64ELi128ELi64ELi4ES3_"
    "EEEELb1ELb0ELb0ELb0ELb1ELb1E"
    "Lb0EEEvNS_16Flash_fwd_paramsE";
// flash_bwd_launch_template.h, run_mha_bwd_hdim64 on a GPU with >= 144 KiB of shared memory
// per block: Flash_bwd_kernel_traits<64, 128, 128, 8, 4, 4, 4, false, false,
// cutlass::bfloat16_t>, 8 warps. dot(dO, O), then dQ/dK/dV over key blocks, then dQ to BF16.
inline constexpr const char* kFlashBackwardDotDoO =
    "_ZN13pytorch_flash25flash_bwd_dot_do_o_kernelILb1ENS_23Flash_bwd_kernel_"
    "traitsILi64ELi128ELi128E"
    "Li8ELi4ELi4ELi4ELb0ELb0EN7cutlass10bfloat16_tENS_19Flash_kernel_"
    "traitsILi64ELi128ELi128ELi8ES3_"
    "EEEEEEvNS_16Flash_bwd_paramsE";
inline constexpr const char* kFlashBackward =
    "_ZN13pytorch_flash44flash_bwd_dq_dk_dv_loop_seqk_parallel_kernelINS_23Flash_bwd_kernel_"
    "traitsIL"
    "i64ELi128ELi128ELi8ELi4ELi4ELi4ELb0ELb0EN7cutlass10bfloat16_tENS_19Flash_kernel_"
    "traitsILi64ELi1"
    "28ELi128ELi8ES3_EEEELb1ELb0ELb0ELb0ELb1ELb1EEEvNS_16Flash_bwd_paramsE";
inline constexpr const char* kFlashBackwardConvertDq =
    "_ZN13pytorch_flash27flash_bwd_convert_dq_kernelINS_23Flash_bwd_kernel_"
    "traitsILi64ELi128ELi128EL"
    "i8ELi4ELi4ELi4ELb0ELb0EN7cutlass10bfloat16_tENS_19Flash_kernel_traitsILi64ELi128ELi128ELi8ES3_"
    "EE"
    "EEEEvNS_16Flash_bwd_paramsEi";

// aten/src/ATen/native/cuda/FusedAdamWKernel.cu through MultiTensorApply.cuh
// (torch.optim.AdamW(fused=True) on BF16 parameters):
// at::native::(anonymous namespace)::multi_tensor_apply_kernel<
//     at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>,
//     at::native::(anonymous namespace)::FusedAdamMathFunctor<c10::BFloat16, 4,
//     (at::native::ADAM_MODE)1, false>, float const*, double, double, double, double, double,
//     bool, float const*, float const*>(...)
inline constexpr const char* kFusedAdamW =
    "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_"
    "32FusedOptimizerTensorListMetadataIL"
    "i4EEENS1_20FusedAdamMathFunctorIN3c108BFloat16ELi4ELNS0_9ADAM_MODEE1ELb0EEEJPKfdddddbSB_SB_"
    "EEEv"
    "T_T0_DpT1_";

inline constexpr const char* kAll[] = {
    kIndexSelect,
    kAdd,
    kGelu,
    kGeluBackward,
    kLayerNorm,
    kLayerNormGradInput,
    kLayerNormGradGammaBeta,
    kDropout,
    kDropoutBackward,
    kBiasGradSum,
    kLogSoftmax,
    kLogSoftmaxBackward,
    kNllLoss,
    kNllLossBackward,
    kFlashForward,
    kFlashBackwardDotDoO,
    kFlashBackward,
    kFlashBackwardConvertDq,
    kFusedAdamW,
};

}  // namespace bert_step::kernels
