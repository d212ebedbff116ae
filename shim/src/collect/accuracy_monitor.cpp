#include "collect/accuracy_monitor.h"

#include <cmath>
#include <cstdio>

namespace pm2lat::shim {

std::optional<std::string> AccuracyMonitor::add(const std::string& family, double predicted_us,
                                                double measured_us) {
  if (threshold_pct_ <= 0 || !(measured_us > 0) || !(predicted_us > 0) ||
      !std::isfinite(predicted_us)) {
    return std::nullopt;
  }
  Window& w = families_[family];
  if (w.filled == kWindow) {  // the oldest kernel leaves the window
    w.sum_predicted -= w.predicted[w.next];
    w.sum_measured -= w.measured[w.next];
  } else {
    ++w.filled;
  }
  w.predicted[w.next] = static_cast<float>(predicted_us);
  w.measured[w.next] = static_cast<float>(measured_us);
  w.sum_predicted += static_cast<float>(predicted_us);
  w.sum_measured += static_cast<float>(measured_us);
  w.next = (w.next + 1) % kWindow;
  if (w.warned || w.filled < kMinKernels || w.sum_measured < kMinMeasuredUs) return std::nullopt;
  const double err = std::fabs(w.sum_predicted - w.sum_measured) / w.sum_measured * 100.0;
  if (err <= threshold_pct_) return std::nullopt;
  w.warned = true;
  ++warned_;
  char text[256];
  std::snprintf(
      text, sizeof text,
      "predictions for %s kernels drift from the measurements: %.1f %% over the last %zu kernels "
      "(measured %.3f ms, predicted %.3f ms; threshold %.0f %%)",
      family.c_str(), err, w.filled, w.sum_measured / 1e3, w.sum_predicted / 1e3, threshold_pct_);
  return std::string(text);
}

std::optional<double> AccuracyMonitor::rolling_error_pct(const std::string& family) const {
  const auto it = families_.find(family);
  if (it == families_.end() || it->second.filled < kMinKernels || it->second.sum_measured <= 0)
    return std::nullopt;
  return std::fabs(it->second.sum_predicted - it->second.sum_measured) / it->second.sum_measured *
         100.0;
}

}  // namespace pm2lat::shim
