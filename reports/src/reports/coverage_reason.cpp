#include "pm2lat/reports/coverage_reason.h"

#include "pm2lat/prediction.h"

namespace pm2lat::reports {

CoverageReason coverage_reason(std::uint32_t flags) noexcept {
  using namespace prediction_flags;
  if (flags & kFallback) return CoverageReason::kFallback;
  if (flags & kAnchored) return CoverageReason::kAnchored;
  if (flags & kShapeRejected) return CoverageReason::kShapeRejected;
  if (flags & kNoShape) return CoverageReason::kNoShape;
  if (flags & kClamped) return CoverageReason::kClamped;
  if (flags & kExtrapolated) return CoverageReason::kExtrapolated;
  return CoverageReason::kCovered;
}

std::string_view to_string(CoverageReason r) noexcept {
  switch (r) {
    case CoverageReason::kCovered: return "covered";
    case CoverageReason::kFallback: return "fallback";
    case CoverageReason::kAnchored: return "anchored";
    case CoverageReason::kShapeRejected: return "shape_rejected";
    case CoverageReason::kNoShape: return "no_shape";
    case CoverageReason::kClamped: return "clamped";
    case CoverageReason::kExtrapolated: return "extrapolated";
  }
  return "covered";
}

}  // namespace pm2lat::reports
