// The GEMM wave model (PM2Lat's core idea): a GEMM kernel configuration runs its thread
// blocks in waves over the SMs; each wave's time grows with the K loop. Per configuration
// and GPU, five calibrated coefficients:
//
//   kernel_us = c0 + c_wave_k * waves * k_iters + c_block_k * blocks / sm_count * k_iters
//             + c_wave * waves + c_mem * bytes / bandwidth
//
//   waves   = ceil(blocks / (sm_count * blocks_per_sm))   (the tail wave counts as a wave)
//   k_iters = ceil(k / split_k / tile_k)                   (main-loop trips per block)
//   bytes   = element bytes * batch * (m*k + k*n + m*n)     (A, B read once, C written)
//
// A K step of a wave costs at least the latency of one block's step (c_wave_k: a lone block
// cannot fill an SM), and at most the SM's throughput allows for the blocks sharing it
// (c_block_k per block and SM). Small problems measure the first, large ones the second;
// keeping both terms is what lets a configuration calibrated on small shapes extrapolate to
// large ones without guessing its occupancy exactly. c_wave is the per-wave prologue/
// epilogue, c_mem the share of a pure-bandwidth pass the kernel cannot hide. The model is
// evaluated with the spec (SM count, bandwidth) of the GPU it predicts for, so a config's
// coefficients can be carried to a GPU of the same architecture (spec scaling).
#pragma once

#include <cstdint>

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_launch.h"
#include "pm2lat/op_context.h"
#include "pm2lat/profile.h"

namespace pm2lat {

// The work a GEMM launch does, as the wave model counts it.
struct GemmWork {
  double blocks = 0;   // thread blocks (tiles x batch x split)
  double k_iters = 0;  // main-loop trips per block
  double bytes = 0;    // compulsory global-memory traffic
};

// The regressors of the wave model for one launch on one GPU (what c0, c_wave_k, c_wave and
// c_mem multiply). The calibrator fits against exactly these.
struct GemmWaveFeatures {
  double wave_k = 0;   // waves * k_iters
  double block_k = 0;  // blocks / sm_count * k_iters
  double wave = 0;     // waves
  double mem = 0;      // bytes / bandwidth, in µs
};

// Split-K factor implied by an observed grid: grid.z beyond the batch.
std::int32_t split_k_from_grid(const Dim3& grid, std::int64_t batch) noexcept;

// Blocks an observed grid really runs: cuBLAS caps grid.z at 65535 and loops over the
// batch, so a grid.z below the batch means grid.x * grid.y * batch blocks.
double blocks_from_grid(const Dim3& grid, std::int64_t batch) noexcept;

// Blocks a configuration launches for a shape when no grid was observed.
double blocks_for_shape(const GemmConfigFit& config, const GemmShape& shape,
                        std::int32_t split_k) noexcept;

GemmWork gemm_work(const GemmConfigFit& config, const GemmShape& shape, double blocks,
                   std::int32_t split_k, double element_bytes) noexcept;

GemmWaveFeatures gemm_wave_features(const GemmConfigFit& config, const DeviceSpec& spec,
                                    const GemmWork& work) noexcept;

// Device time of the kernel (no host dispatch).
double gemm_wave_kernel_us(const GemmConfigFit& config, const DeviceSpec& spec,
                           const GemmWork& work) noexcept;

}  // namespace pm2lat
