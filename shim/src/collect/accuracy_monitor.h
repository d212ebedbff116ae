// The continuous accuracy check: while the program runs, a rolling error per kernel family
// on the GPU it runs on (predicted vs measured over the family's most recent kernels). When
// a family drifts past the threshold, one warning with the numbers; later drifts of the same
// family are only counted. Bounded memory: a fixed window per family.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace pm2lat::shim {

class AccuracyMonitor {
 public:
  static constexpr std::size_t kWindow = 512;     // most recent kernels per family
  static constexpr std::size_t kMinKernels = 64;  // before a family's error is judged
  static constexpr double kMinMeasuredUs = 1000;  // ... and this much measured time

  // `threshold_pct` <= 0 disables the check.
  explicit AccuracyMonitor(double threshold_pct = 30) : threshold_pct_(threshold_pct) {}

  // Adds one kernel measured on the run's GPU and its prediction for that GPU. Returns the
  // warning text the first time the family's rolling error exceeds the threshold.
  std::optional<std::string> add(const std::string& family, double predicted_us,
                                 double measured_us);

  // Rolling error of a family in percent: |sum predicted - sum measured| / sum measured over
  // its window (nullopt before the family has enough kernels).
  std::optional<double> rolling_error_pct(const std::string& family) const;
  std::size_t drift_warnings() const noexcept { return warned_; }

 private:
  struct Window {
    std::array<float, kWindow> predicted{};
    std::array<float, kWindow> measured{};
    std::size_t next = 0, filled = 0;
    double sum_predicted = 0, sum_measured = 0;
    bool warned = false;
  };
  double threshold_pct_;
  std::map<std::string, Window> families_;
  std::size_t warned_ = 0;
};

}  // namespace pm2lat::shim
