// The answer of the predictor for one (kernel, target GPU).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "pm2lat/kernel_record.h"

namespace pm2lat {

// Which model produced a prediction. Stable names: they appear in records and reports.
enum class ModelKind : std::uint8_t {
  kNone = 0,
  kGemmWave,       // GEMM wave model of one kernel configuration
  kMemoryBound,    // bytes over a calibrated bandwidth curve
  kOverheadFloor,  // the calibrated launch / call floor (no device work)
  kRoofline,       // spec roofline for kernels with no dedicated model (fallback)
  kConv,
  kAttention,
  kCollective,
  kMeasuredTable,  // interpolation in a calibrated table of whole operations
};

std::string_view to_string(ModelKind m) noexcept;
ModelKind parse_model_kind(std::string_view s) noexcept;

namespace prediction_flags {
inline constexpr std::uint32_t kFallback = 1u << 0;       // no dedicated model: roofline
inline constexpr std::uint32_t kSpecScaled = 1u << 1;     // target has no profile: scaled
inline constexpr std::uint32_t kExtrapolated = 1u << 2;   // outside the calibrated range
inline constexpr std::uint32_t kConfigChosen = 1u << 3;   // target's kernel config chosen
                                                          // from its profile, not the source's
inline constexpr std::uint32_t kCommunication = 1u << 4;  // not compute: keep out of accuracy
// Priced from the launch geometry alone: the record has no shape, or its configuration was
// calibrated only from launches without one (memory_family_predictor.h).
inline constexpr std::uint32_t kNoShape = 1u << 5;
// The record's operand type had no calibration on the target; a type with the same tensor
// throughput on it stood in (FP16 run on a BF16 calibration). The GPU's own profile.
inline constexpr std::uint32_t kDtypeSubstituted = 1u << 6;
// The prediction met a physical bound (physical_bounds.h) and was set to it, or a fit was
// asked past its calibrated range and the bandwidth/compute form took over from its last point.
inline constexpr std::uint32_t kClamped = 1u << 7;
// The work inferred from the operator's inputs is more than the launch can have done
// (threads x a plausible amount per thread): the launch geometry stood in for it.
inline constexpr std::uint32_t kShapeRejected = 1u << 8;
// For another GPU than the one measured: the measured time x the ratio of the bounded
// model's predictions for the two GPUs, because the model disagreed with the measurement.
inline constexpr std::uint32_t kAnchored = 1u << 9;
}  // namespace prediction_flags

// Comma-separated flag names, e.g. "fallback,spec_scaled"; empty for none.
std::string flags_to_string(std::uint32_t flags);
// Inverse of flags_to_string; unknown names are ignored.
std::uint32_t parse_flags(std::string_view names) noexcept;

struct Prediction {
  double us = 0;  // predicted latency in microseconds
  TimeBasis basis = TimeBasis::kKernel;
  ModelKind model = ModelKind::kNone;
  std::uint32_t flags = 0;
  // The kernel configuration the model used on the target (e.g. "ampere_sgemm_128x64_tn"),
  // empty when not a GEMM/conv model. Points into the Predictor's profiles: valid while the
  // Predictor that made the prediction lives (copy it to keep it longer).
  std::string_view config;
  // The expected error of `us` in percent (the quantile of out-of-sample APE of predictions
  // like it: error_band_table.h): the measured time lies within us x (1 +- band_pct/100) for
  // that share of them. NaN when the predictor has no band table.
  double band_pct = std::numeric_limits<double>::quiet_NaN();

  bool has(std::uint32_t flag) const noexcept { return (flags & flag) != 0; }
};

}  // namespace pm2lat
