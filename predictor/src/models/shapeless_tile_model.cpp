#include "pm2lat/models/shapeless_tile_model.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "classify/gemm_name_decoder.h"
#include "pm2lat/models/conv_model.h"
#include "pm2lat/models/roofline_model.h"

namespace pm2lat {
namespace {

// The GPUs whose tensor-core peak only their asynchronous MMA reaches: Hopper (9), Blackwell's
// data-centre GPUs (10) and Thor (11). Consumer Blackwell (12) keeps mma.sync as its MMA.
bool needs_asynchronous_mma(int cc_major) noexcept { return cc_major >= 9 && cc_major <= 11; }

}  // namespace

int kernel_mma_generation(std::string_view arch) noexcept {
  if (const int named = architecture_word_generation(arch); named > 0) return named;
  if (arch.size() < 4 || arch.substr(0, 2) != "sm") return 0;
  int sm = 0;
  for (char c : arch.substr(2)) {
    if (c < '0' || c > '9') break;
    sm = sm * 10 + (c - '0');
    if (sm > 1000) return 0;
  }
  return sm / 10;  // sm80 -> 8, sm90a -> 9, sm100 -> 10, sm120 -> 12
}

double uncalibrated_inverse_efficiency(const KernelClass& cls, DType math, const DeviceSpec& target,
                                       bool ran_on_target) noexcept {
  const int generation = kernel_mma_generation(cls.gemm.arch);
  if (generation == 0) return kUncalibratedInverseEfficiency;
  const bool tensor_math = math != DType::kFp32 && math != DType::kFp64;
  const bool capped =
      ran_on_target && tensor_math && generation < 9 && needs_asynchronous_mma(target.cc_major);
  return 1.0 / (kNativeTileEfficiency * (capped ? kSynchronousMmaCeiling : 1.0));
}

Prediction shapeless_tile_prediction(const KernelRecord& r, const KernelClass& cls,
                                     const DeviceSpec& spec, DType dtype,
                                     bool ran_on_target) noexcept {
  const std::uint64_t blocks = r.launch.grid.volume();
  if (cls.config.empty() || blocks <= 1) return roofline_prediction(r, cls, spec);
  const GemmConfigFit tile = conv_kernel_config(cls, dtype);
  const DType math = conv_math_type(cls, dtype);
  const double waves =
      std::ceil(static_cast<double>(blocks) / static_cast<double>(std::max(1, spec.sm_count)));
  const double k_iters = kTypicalReduction / static_cast<double>(std::max(1, tile.tile_k));
  Prediction p;
  p.model = ModelKind::kGemmWave;
  p.basis = TimeBasis::kKernel;
  p.flags |= prediction_flags::kFallback | prediction_flags::kNoShape;
  p.us = kUncalibratedFixedUs + uncalibrated_inverse_efficiency(cls, math, spec, ran_on_target) *
                                    waves * k_iters * conv_tile_step_us(tile, math, spec);
  return p;
}

}  // namespace pm2lat
