// The coordinate the nearest-shape indexes compare a dimension by: its octave (log2), so that
// shapes twice as large are one step apart whatever their size.
#pragma once

#include <algorithm>
#include <cmath>

namespace pm2lat {

// log2 of a dimension; a dimension of 1 or less (absent, or degenerate) is octave 0.
inline double octaves(double v) noexcept { return std::log2(std::max(1.0, v)); }

}  // namespace pm2lat
