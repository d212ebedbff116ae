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
//       stay, and the operands stream over the SMs the launch occupies:
//
//       us = c0 + c_wave x waves + bytes / (efficiency x bandwidth x occupied SMs / SMs)
//
//       - a launch observed on the GPU is the kernel that ran: its grid says how many SMs
//         stream, at the rate a launched kernel was measured streaming (kMeasuredGemv...),
//         and the fit's residual at that kernel's calibrated neighbours still describes it.
//         It costs no less than the same launch at the last K loop calibrated: the fit's
//         fixed costs count a tile's prologue, not the few microseconds any launch of a small
//         product takes;
//       - with none observed (a forecast for another GPU, or a table of calls whose launch is
//         nominal) the library chooses, and spreads a thin output's long K over every SM
//         (split-K or a GEMV kernel): NeuSight's A100 launches of one such product split K
//         over grid.z up to 144, HTA's trace-diff 216 ways on a 15 x 15 output over
//         K = 98,304; AIConfigurator's 1 x 32 x 65536 BF16 products (one 64-wide output tile)
//         take 5-12 us on the A100, H100 and B200, where one SM streaming their 4 MB would
//         take over 100. A matrix-vector product, or a thin tensor-core one (`gemv_product`),
//         runs as a GEMV at a library GEMV's rate, which is not the fit's configuration, so
//         the fit's residual does not correct it (`library_gemv`); a thin FP32 product of
//         several rows runs the fit's kind of SIMT tile kernel, at a launched kernel's rate
//         with its residual. No product costs less than the same one at the range's edge
//         where the calibration's launch is the table's for every call (a nominal
//         configuration, GemmConfigFit::nominal_launch, on its own GPU and type): there
//         the fit at the edge prices the table's calls of this output at the edge's K, and
//         a longer reduction moves more (AIConfigurator's cut at K = 8192: its products
//         under 4 MB had been priced at 0.46-0.79x, a call's fixed cost over the fit's).
//         The floor is the fit's, without the residual of the calls at the edge: those
//         describe the kernel the library ran there, which a longer reduction need not run
//         (past some K it switches to split-K or a GEMV kernel). Elsewhere the launch at
//         the edge is a guess (the selector's nearest point, scaled), and no floor is taken
//         from it: it priced HTA trace-diff's 15 x 15 x 98,304 kernels at 1.9 ms (measured
//         21 us).
#pragma once

#include <cstdint>

#include "pm2lat/device_spec.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/op_context.h"
#include "pm2lat/profile.h"

namespace pm2lat {

namespace gemm_range_constants {
// Share of DRAM bandwidth a library's matrix-vector product streams its matrix at, past its
// fixed cost: 82 %, the lowest of the five GPUs of AIConfigurator's BF16 GEMM table (the
// slope of latency over bytes of its 1- and 2-row products of 32 MB to 1 GB with K <= 8192:
// A100-SXM 0.83, B200 0.86, H100 0.84, L40S 0.82, RTX PRO 6000 0.83).
inline constexpr double kGemvBandwidthEfficiency = 0.82;
// Share of DRAM bandwidth the traces' A100 `gemvx` streamed a 1024 x 5185 FP32 matrix at,
// fixed cost included: 55 % (21.2 MB in 24.7 us of 1.555 TB/s; the other orientation 75 %).
// No tile kernel, observed or the library's, is priced streaming a long K faster (they run
// thin outputs slower still, NeuSight's FP32 tables: 13-36 % of bandwidth over 8 MB, which the
// fit's residual at the kernel's own calibrated neighbours carries), and a configuration voted
// for a matrix-vector product is capped no lower (chosen_gemv_us).
inline constexpr double kMeasuredGemvEfficiency = 0.55;
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
  // Priced as the library's GEMV over the whole GPU, not as the fit's configuration: the
  // fit's residual does not apply.
  bool library_gemv = false;
};

// `work` is the launch as the wave model counts it (blocks, K loop per block, operand bytes),
// `flops` its math; `launch_blocks` the blocks of the launch observed on this GPU, which say
// how many SMs stream the operands (0: none observed, every SM); `gemv_product` whether the
// library runs the product as a GEMV when it chooses the launch.
RangedGemmTime gemm_kernel_us_in_range(const GemmConfigFit& fit, const DeviceSpec& spec,
                                       const GemmWork& work, const GemmFitRange& range,
                                       double flops, double launch_blocks,
                                       bool gemv_product) noexcept;

// A matrix-vector product (an output of one row or one column) whose configuration the
// selector chose for its shape (no kernel observed on the target), memory-bound there: what
// streaming its operands once at the measured GEMV's share of the whole GPU's bandwidth costs
// above the chosen fit's fixed cost. cuBLAS runs a GEMV or a split-K kernel for such a
// product; a tile configuration voted for by wider calibrated neighbours and priced slower
// than that is not the kernel it picks (NeuSight's A100-PCIE-80GB table, model-like shapes
// only, voted a 1 x 4096 x 4096 FP32 product to a configuration priced at 770 us; streaming
// its 67 MB takes 63). A cap for votes far off, inside the calibrated range too, where the
// fit knows the GPU's own matrix-vector products: at the slower rate (at the library rate,
// AIConfigurator's BF16 cross-GPU forecasts went 5.33 -> 5.40 % MAPE). Products of a few rows
// are not GEMVs and run far under this rate: capping every memory-bound product made
// NeuSight's cross-GPU `bmm` forecasts worse (A100-40GB to P100: MAPE 2.43 -> 12.78 %).
// `math`: the product's math type on the target. Infinity for a compute-bound product.
double chosen_gemv_us(const GemmConfigFit& fit, const DeviceSpec& spec, double operand_bytes,
                      double flops, DType math) noexcept;

}  // namespace pm2lat
