// Memory-bound kernels (elementwise, softmax, layer-norm, reductions, copies, embedding
// gathers): time is a fixed cost plus bytes over the achieved share of DRAM bandwidth, plus
// a per-row term for kernels that give each row its own block or warp:
//
//   kernel_us = c0 + c_byte * bytes / bandwidth + c_row * rows / sm_count
//
// c_byte >= 1 is the inverse of the bandwidth efficiency the kernel reaches. Features are
// normalised by the GPU's spec, so the same fit evaluates on a GPU of the same family.
#pragma once

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/op_context.h"
#include "pm2lat/profile.h"

namespace pm2lat {

// No memory-bound kernel runs shorter than this: the shortest elementwise kernels in the
// shipped A100 and H100 profiler traces take 1.4-1.5 us (launch to completion). Fits made
// on large tensors only leave their fixed cost at zero; the floor stands in for it.
inline constexpr double kMinMemoryKernelUs = 1.3;

// A fit made on sizes spanning less than this factor cannot tell its fixed cost from its
// per-byte one: calibrate then takes one of them as nominal (the fixed cost below, or an
// ordinary time per byte with the rest of the time as the intercept).
inline constexpr double kMinSizeSpanForFixedCost = 2.0;
// The nominal fixed cost of a memory-bound kernel whose fit cannot identify its own: between
// what the A100 traces' tiny vectorised elementwise kernels take (NCCL-data 1.4-2.3 us,
// median 2.1; trace-diff 3 and more, in whole-microsecond timestamps).
inline constexpr double kNominalMemoryFixedUs = 2.5;

// Whether `family`'s kernels pay for each row of their tensor, so that their fits carry the
// per-row term: the ones that give a row its own block or warp (softmax, layer-norm,
// reductions, gathers, concatenations) do. Elementwise kernels, fills and Triton's pointwise
// kernels do not: they index the flattened tensor (ATen's vectorized_elementwise_kernel
// launches numel / (threads x elements per thread) blocks; Inductor's kernels span xnumel), so how
// its elements split into rows does not enter their time (VGG-13's clamp_min over 1.64 GB on the
// H100 took 1080-1083 us as 1.8, 3.7 and 7.3 million rows). A per-row term fitted for them stands
// for whatever else varied with the row count in the table they were fitted on, and carried to
// tensors of many short rows (NCHW activations) it priced them up to 2.2x their time.
bool pays_per_row(KernelFamily family) noexcept;

struct MemoryBoundFeatures {
  double bytes_term = 0;  // bytes / bandwidth, µs
  double row_term = 0;    // rows / SMs
};

MemoryBoundFeatures memory_bound_features(const DeviceSpec& spec, double bytes,
                                          double rows) noexcept;

// The fit's time for `bytes` in `rows`. Rows past the most the fit was made on
// (`fit.rows_max`, when recorded) count as that many: what a per-row term fitted on a few row
// counts says beyond them is not the kernel's (an H100 CatArrayBatchedCopy fit over 4-128
// rows, 72 us a row per SM, priced a 1,024-row concatenation of 118 MB at 834 us on an A100
// where it took 130). The bytes carry on at the fit's bandwidth.
double memory_bound_kernel_us(const VectorFit& fit, const DeviceSpec& spec, double bytes,
                              double rows) noexcept;

// Whether `rows` lie past the most the fit was made on and the fit has a per-row term, which
// stops there.
bool rows_beyond_range(const VectorFit& fit, double rows) noexcept;

// A kernel of `bytes`, fewer than the smallest size (`edge_bytes`) its fit was made on: from its
// fixed cost up to the fit's time at that edge, in proportion to its bytes. The fit's own
// intercept and per-row term are not extrapolated below the sizes they were fitted on.
double below_range_kernel_us(double fixed_us, double edge_us, double bytes,
                             double edge_bytes) noexcept;

// The fixed cost a kernel below `fit`'s sizes runs down to: the fit's intercept (at least
// the floor), or, for a fit over launched threads whose sizes could not tell the intercept
// apart (kMinSizeSpanForFixedCost), at most the nominal fixed cost. A geometry fit's sizes
// are proxies of the work, so such an intercept may hold work: one made on a single launch
// of 864 blocks (71 us) had nearly the whole launch as its intercept. A shape fit's single
// size that was latency-bound is its fixed cost.
double below_range_fixed_us(const VectorFit& fit, bool over_threads) noexcept;

// A kernel of more bytes than the largest size its fit was made on (`fit.bytes_max`): the
// fit's time at that edge (same bytes per row), then each further byte at the fit's bandwidth
// efficiency (`c_byte`; at the peak when the fit gave bytes no weight). The per-row term is
// not extrapolated past the rows it was fitted on: a flat elementwise kernel does not slow
// with how its tensor splits into rows (VGG-13's 1.6 GB fills on the H100, 500 us measured,
// were priced 880-1,270 us by an A100 fill fit's per-row term taken 10x past its range).
double above_range_kernel_us(const VectorFit& fit, const DeviceSpec& spec, double bytes,
                             double rows) noexcept;

}  // namespace pm2lat
