// Where a GEMM configuration's wave-model fit was calibrated, and what a launch past that
// range costs. A fit is a regression over the K loops its calibration measured; a launch whose
// K loop runs past the longest one calibrated (a 131072-long reduction against a calibration
// that stopped at 8192) is priced by the form its bound takes (flag clamped):
//
//   compute-bound (FLOPs / peak >= bytes / bandwidth on the target): the K steps past the
//       fit's last calibrated one cost what its last one did. The wave model is linear in the
//       K loop, so this is the fit itself: what changes is the flag;
//   memory-bound (a GEMV-like product: a thin output over a long K): the fit's K steps price
//       a tile's math, mostly wasted on a thin output, and say nothing about streaming an
//       operand 16-100x longer than calibrated. The fit's fixed costs (c0, c_wave x waves)
//       stay, and the operands stream at a GEMV's share of the bandwidth of the SMs the launch
//       occupies (the launch observed on the GPU, else the modelled one):
//
//       us = c0 + c_wave x waves + bytes / (GEMV efficiency x bandwidth x occupied SMs / SMs)
#pragma once

#include <cstdint>

#include "pm2lat/device_spec.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/op_context.h"
#include "pm2lat/profile.h"

namespace pm2lat {

namespace gemm_range_constants {
// Share of DRAM bandwidth a cuBLAS GEMV kernel streams its matrix at: 55 % (the traces' A100
// `gemvx` over a 1024 x 5185 FP32 matrix: 21.2 MB in 24.7 us of 1.555 TB/s; the other
// orientation 75 %). The lower of the two: the streamed part of a long-K launch is priced no
// faster than the GEMV kernels measured.
inline constexpr double kGemvBandwidthEfficiency = 0.55;
}  // namespace gemm_range_constants

// What a configuration's calibration covered. Zero: not known (no calibration point), every
// launch taken as inside.
struct GemmFitRange {
  double max_k_iters = 0;  // longest main loop per block among the calibration points
};

// The range covered by calibration points of one configuration: add each point's K loop.
void extend_fit_range(GemmFitRange& range, const GemmWork& point) noexcept;

// Kernel time of a launch priced by `fit` on `spec`, held to the fit's calibrated K range.
struct RangedGemmTime {
  double us = 0;
  bool beyond_range = false;  // the K loop ran past the calibration (flag clamped)
};

// `work` is the launch as the wave model counts it (blocks, K loop per block, operand bytes),
// `flops` its math; `launch_blocks` the blocks of the launch observed on this GPU (0: none
// observed), which say how many SMs stream the operands.
RangedGemmTime gemm_kernel_us_in_range(const GemmConfigFit& fit, const DeviceSpec& spec,
                                       const GemmWork& work, const GemmFitRange& range,
                                       double flops, double launch_blocks) noexcept;

// A matrix-vector product (an output of one row or one column) whose configuration the
// selector chose for its shape (no kernel observed on the target), memory-bound there: what
// streaming its operands once at a GEMV's share of the whole GPU's bandwidth costs above the
// chosen fit's fixed cost. cuBLAS runs a GEMV or a split-K kernel for such a product; a tile
// configuration voted for by wider calibrated neighbours and priced slower than that is not
// the kernel it picks. Products of a few rows are not GEMVs and run far under this rate:
// capping every memory-bound product made NeuSight's cross-GPU `bmm` forecasts worse (A100-40GB
// to P100: MAPE 2.43 -> 12.78 %) (NeuSight's A100-PCIE-80GB table, model-like shapes
// only, voted a 1 x 4096 x 4096 FP32 product to a configuration priced at 770 us; streaming its
// 67 MB takes 63). `math`: the product's math type on the target. Infinity for a
// compute-bound product.
double chosen_gemv_us(const GemmConfigFit& fit, const DeviceSpec& spec, double operand_bytes,
                      double flops, DType math) noexcept;

}  // namespace pm2lat
