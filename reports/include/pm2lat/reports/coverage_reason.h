// Why a kernel's prediction on the run's own GPU does or does not count as covered.
// Coverage = kernel time predicted by a dedicated model inside its calibrated range; the rest
// is reported by the first reason that applies, in this order (a fallback that was also
// clamped is a fallback).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pm2lat::reports {

enum class CoverageReason : std::uint8_t {
  kCovered = 0,
  kFallback,       // no dedicated model: roofline
  kAnchored,       // the model disagreed with the measurement (forecasts for other GPUs)
  kShapeRejected,  // the work inferred from the operator was more than the launch can do
  kNoShape,        // no work known: launch geometry only
  kClamped,        // the prediction met a physical bound, or a fit ran past its range
  kExtrapolated,   // outside the calibrated range without a bound stepping in
};

inline constexpr std::size_t kCoverageReasons = 7;

// Measured time per reason, indexed by CoverageReason.
using CoverageByReason = std::array<double, kCoverageReasons>;

CoverageReason coverage_reason(std::uint32_t prediction_flags) noexcept;
std::string_view to_string(CoverageReason r) noexcept;

}  // namespace pm2lat::reports
