// Medians of measurement lists, shared by the models and the calibration: robust centres
// that one odd measurement cannot move.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace pm2lat {

// The middle value, the mean of the two middle ones for an even count; 0 when empty.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The upper of the two middle values for an even count (always a measured value); 0 when
// empty.
inline double upper_median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace pm2lat
