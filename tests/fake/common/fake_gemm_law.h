// How long the simulated GPU takes to run a GEMM kernel of the fake libraries. Real GEMM
// kernels carry their problem in the by-value Params struct they are launched with; the fake
// cuBLASLt writes a GemmWork at the start of that struct, and the fake driver times a kernel
// whose first argument holds one with this law instead of the generic one in fake_sim.h.
//
// The law is a wave law (thread blocks run in waves over the SMs, each wave's time grows
// with the K loop) whose coefficients the calibrator is not told: how many blocks share an
// SM, the efficiency of the main loop and the per-wave prologue come from a hash of the
// kernel's name, like the properties of a real kernel binary. Integer nanoseconds, so that
// tests can compare measurements with it exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "fake_sim.h"

namespace fake_sim {

inline constexpr std::uint64_t kGemmWorkMagic = 0x4b524f574d4d4547ull;  // "GEMMWORK"

// The math pipe a GEMM kernel runs on; its peak is the H100's (dense, TFLOP/s).
enum class GemmMath : std::uint32_t { kFp32Simt = 0, kTf32 = 1, kHalf = 2, kFp8 = 3 };

inline double gemm_math_peak_tflops(GemmMath math) {
  switch (math) {
    case GemmMath::kFp32Simt: return 66.9;
    case GemmMath::kTf32: return 494.7;
    case GemmMath::kHalf: return 989.4;
    case GemmMath::kFp8: return 1978.9;
  }
  return 66.9;
}

struct GemmWork {
  std::uint64_t magic = kGemmWorkMagic;
  std::int64_t m = 0, n = 0, k = 0, batch = 1;       // the library's (column-major) problem
  std::uint32_t tile_m = 0, tile_n = 0, tile_k = 0;  // the kernel's CTA tile
  std::uint32_t split_k = 1;
  std::uint32_t element_bytes = 4;  // A and B
  GemmMath math = GemmMath::kFp32Simt;
};

// A GemmWork from the first kernel argument, when the kernel was launched with one.
inline bool read_gemm_work(void** kernel_params, std::size_t first_param_size, GemmWork& out) {
  if (kernel_params == nullptr || kernel_params[0] == nullptr ||
      first_param_size < sizeof(GemmWork)) {
    return false;
  }
  GemmWork w;
  std::memcpy(&w, kernel_params[0], sizeof(w));
  if (w.magic != kGemmWorkMagic || w.m <= 0 || w.n <= 0 || w.k <= 0 || w.tile_k == 0) return false;
  out = w;
  return true;
}

// The hidden properties of a GEMM kernel binary.
struct GemmKernelTraits {
  std::uint32_t blocks_per_sm = 1;  // co-resident blocks
  double efficiency = 0.8;          // of the math pipe in the main loop
  double wave_ns = 1000;            // prologue and epilogue of one wave
};

inline GemmKernelTraits gemm_kernel_traits(std::string_view name) {
  const std::uint64_t h = fnv1a(name);
  GemmKernelTraits t;
  t.blocks_per_sm = 1 + std::uint32_t((h >> 8) % 2);
  t.efficiency = 0.70 + double((h >> 16) % 21) / 100.0;
  t.wave_ns = 900.0 + double((h >> 24) % 600);
  return t;
}

// Duration of one GEMM kernel:
//   base + waves * k_iters * step_wave + blocks / sms * k_iters * step_block
//        + waves * wave_ns + 0.4 * bytes / bandwidth
// step_block is one block's K step at the SM's share of the math peak and the kernel's
// efficiency; a lone block's step (step_wave) runs its SM at the full math peak, the fastest
// physics allows (the predictor's lower bound holds a launch of few blocks to its SMs' peak).
inline std::uint64_t gemm_duration_ns(std::string_view name, const std::uint32_t grid[3],
                                      const GemmWork& w, int sm_count,
                                      std::uint64_t base = base_ns()) {
  const GemmKernelTraits t = gemm_kernel_traits(name);
  const double sms = sm_count > 0 ? double(sm_count) : 1.0;
  const double blocks = double(grid[0]) * double(grid[1]) * double(grid[2]);
  const double slots = sms * double(t.blocks_per_sm);
  const double waves = double(std::uint64_t((blocks + slots - 1) / slots));
  const std::int64_t k_split =
      (w.k + std::int64_t(w.split_k ? w.split_k : 1) - 1) / std::int64_t(w.split_k ? w.split_k : 1);
  const double k_iters = double((k_split + w.tile_k - 1) / w.tile_k);
  const double flop_step = 2.0 * double(w.tile_m) * double(w.tile_n) * double(w.tile_k);
  const double sm_flop_per_ns = gemm_math_peak_tflops(w.math) * 1e3 / sms;
  const double step_block = flop_step / (sm_flop_per_ns * t.efficiency);
  const double step_wave = step_block * t.efficiency;
  const double bytes =
      double(w.element_bytes) * double(w.batch) *
      (double(w.m) * double(w.k) + double(w.k) * double(w.n) + double(w.m) * double(w.n));
  constexpr double kBytesPerNs = 3350.0;  // H100 HBM3
  const double ns = waves * k_iters * step_wave + blocks / sms * k_iters * step_block +
                    waves * t.wave_ns + 0.4 * bytes / kBytesPerNs;
  return base + fnv1a(name) % 997 + std::uint64_t(ns + 0.5);
}

}  // namespace fake_sim
