// Convolutions as the implicit GEMM cuDNN/CUTLASS kernels compute (the GEMM wave model of
// gemm_wave_model.h over it), for the forward pass and both gradients:
//
//   fprop: m = N*P*Q, n = K,     k = C*R*S     (P, Q: output height and width)
//   dgrad: m = N*H*W, n = C,     k = K*R*S
//   wgrad: m = K,     n = C*R*S, k = N*P*Q     (per group; groups are the batch)
//
// A configuration calibrated on a GPU has its own wave-model fit (GemmConfigFit). Where it
// has none, a class fit stands in: its per-wave-step coefficient is relative to the time
// one K step of the kernel's tile takes at the GPU's peak (2*BM*BN*BK / per-SM peak), so it
// is an inverse efficiency that carries across GPUs. Winograd kernels loop over the input
// channels only (conv_algorithm); FFT kernels do less math than the implicit GEMM too, and
// their fits absorb the factor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_launch.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/op_context.h"
#include "pm2lat/profile.h"

namespace pm2lat {

enum class ConvPass : std::uint8_t { kForward = 0, kDataGrad, kWeightGrad };

std::string_view to_string(ConvPass p) noexcept;

// How a kernel computes a convolution, as far as its name and launch tell. Winograd's
// algorithm (a forward 3x3 convolution of stride 1) reduces over the input channels only, the
// filter taps being folded into its transforms: a fused kernel says so by name
// (`*_scudnn_winograd_*`); cuDNN's non-fused algorithm runs a GEMM per point of the 6x6
// transformed tile of F(4x4, 3x3), batched over 36 in grid.z. Held-out shapes of NeuSight's
// conv tables: the non-fused GEMMs 7.0-14.2 % MAPE per GPU where the implicit GEMM's C*R*S
// loop (split by how far the grid exceeds its tiles) gave 12.1-18.1 (predictor/ACCURACY.md).
enum class ConvAlgorithm : std::uint8_t { kImplicitGemm = 0, kWinogradFused, kWinogradBatchedGemm };

ConvAlgorithm conv_algorithm(std::string_view config, const ConvShape& conv, ConvPass pass,
                             const Dim3& grid) noexcept;

// The launch of a non-fused Winograd GEMM configuration for a convolution: its tiles over the
// transformed tiles (one per 4x4 output tile of every image) and the output channels, 36
// transform points. cuDNN pads the transformed tiles further for some shapes (NeuSight's
// tables: the formula gives the grid exactly for about half of their launches, fewer blocks
// along x for the rest).
Dim3 winograd_batched_gemm_grid(const GemmConfigFit& config, const ConvShape& conv) noexcept;

// The pass a kernel computes: from its name (fprop/dgrad/wgrad), else from the operator
// (a backward operator whose kernel does not say: the gradient whose output tiles match the
// launch grid), else forward.
ConvPass conv_pass(const KernelClass& cls, const OpContext& op, const Dim3& grid) noexcept;

GemmShape conv_implicit_gemm(const ConvShape& conv, ConvPass pass) noexcept;

// The elements a pass writes (its implicit GEMM's m * n * groups): what a launch's blocks
// share, whatever tiles the kernel cuts them into.
double conv_outputs(const ConvShape& conv, ConvPass pass) noexcept;

// The convolution as a kernel that states an operand alignment runs it: a tensor-op kernel
// "alignN" loads N channels per access (NHWC activations and KRSC filters keep channels
// contiguous), so it can only run over channel counts that are multiples of N, and cuDNN
// hands it copies padded to them (a 3-channel image runs an align8 kernel over 8 channels:
// 2.7x the math of the convolution as stated). Other kernels see the convolution as it is.
ConvShape kernel_channels(const ConvShape& conv, const KernelClass& cls) noexcept;

// The kernel's configuration as the wave model uses it: tile from the name (defaults for
// names that do not say), operand type, tensor cores or not.
GemmConfigFit conv_kernel_config(const KernelClass& cls, DType dtype) noexcept;

// The wave-model work of a conv kernel launch: blocks from the observed grid (tiles of the
// implicit GEMM when there is none), the K loop split across the blocks the grid has beyond
// the output tiles (cuDNN's weight-gradient kernels split the N*P*Q reduction). Persistent
// kernels, whose grid is smaller than the output tiles, count the tiles. Winograd's
// algorithm (conv_algorithm) loops over the input channels in every block of its grid.
// A CUTLASS kernel whose name states its analytic or optimized iterator steps through each
// filter tap's channels apart (a tap of fewer channels than the tile's K still costs a step).
// Bytes are the three tensors every pass touches (input, filter, output), not the implicit
// GEMM's operands, which are never materialised.
GemmWork conv_work(const GemmConfigFit& config, const ConvShape& conv, ConvPass pass,
                   const Dim3& grid, double element_bytes) noexcept;
// The same for an algorithm known otherwise (a configuration chosen for another GPU).
GemmWork conv_work(const GemmConfigFit& config, const ConvShape& conv, ConvPass pass,
                   const Dim3& grid, double element_bytes, ConvAlgorithm algorithm) noexcept;

// The math path a conv kernel runs on ("fp32" SIMT, "tf32", "bf16", "fp16").
DType conv_math_type(const KernelClass& cls, DType dtype) noexcept;

// Time of one K step of a tile at the GPU's per-SM peak for that math, µs: what class fits
// normalise their per-wave-step coefficient by.
double conv_tile_step_us(const GemmConfigFit& config, DType math, const DeviceSpec& spec) noexcept;

// cuDNN's set-up and transform kernels inside a convolution (KernelClass::conv_helper: set-up
// kernels, layout transforms, Winograd data/filter/output transforms), or a kernel whose
// operator gave it memory-bound work: not the implicit GEMM, although their names classify as
// convolution.
bool is_conv_helper_kernel(const KernelRecord& record, const KernelClass& cls) noexcept;

// The class a configuration falls back to: "conv:<math>" (e.g. "conv:tf32").
std::string conv_class_name(DType math);

// The fit of a configuration or class for launches without a shape: "<name>#geometry",
// kernel_us = c0 + c_wave_k * waves * conv_tile_step_us (waves of the observed grid).
std::string conv_geometry_fit_name(const std::string& name);

}  // namespace pm2lat
