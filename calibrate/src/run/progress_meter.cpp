#include "pm2lat/calibrate/run/progress_meter.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>

#include "pm2lat/calibrate/run/calibration_plan.h"

namespace pm2lat::calibrate::run {
namespace {

constexpr int kBarWidth = 24;
// The speed of the estimates is trusted only once this much estimated work has run.
constexpr double kMinRateBasisS = 5;

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ProgressMeter::ProgressMeter(std::FILE* out, bool interactive, Clock clock, double every_s)
    : out_(out),
      interactive_(interactive),
      clock_(clock ? std::move(clock) : Clock(steady_seconds)),
      every_s_(every_s) {
  start_ = clock_();
}

void ProgressMeter::set_total(double estimated_s, std::size_t tasks) {
  total_est_ = estimated_s;
  total_tasks_ = tasks;
  draw(true);
}

void ProgressMeter::advance(double estimated_s, const std::string& label, bool resumed) {
  done_est_ += estimated_s;
  if (!resumed) measured_est_ += estimated_s;
  ++done_tasks_;
  label_ = label;
  draw(false);
}

void ProgressMeter::finish() {
  draw(true);
  if (out_ != nullptr && interactive_) std::fputc('\n', out_);
}

double ProgressMeter::elapsed_s() const { return clock_() - start_; }

double ProgressMeter::remaining_s() const {
  const double left = std::max(0.0, total_est_ - done_est_);
  // Real seconds per estimated second, from this session's measurements.
  const double rate = measured_est_ >= kMinRateBasisS ? elapsed_s() / measured_est_ : 1.0;
  return left * std::clamp(rate, 0.1, 10.0);
}

std::string ProgressMeter::line() const {
  const double frac = total_est_ > 0 ? std::clamp(done_est_ / total_est_, 0.0, 1.0) : 0.0;
  const int filled = static_cast<int>(frac * kBarWidth + 0.5);
  return fmt::format("[{}{}] {:3.0f}%  {}/{} tasks  {} elapsed, ~{} left  {}",
                     std::string(filled, '#'), std::string(kBarWidth - filled, '.'), frac * 100,
                     done_tasks_, total_tasks_, format_duration(elapsed_s()),
                     format_duration(remaining_s()), label_);
}

void ProgressMeter::draw(bool force) {
  if (out_ == nullptr) return;
  const double now = clock_();
  if (interactive_) {
    if (!force && last_draw_ >= 0 && now - last_draw_ < 0.2) return;
    fmt::print(out_, "\r{:<120.120}", line());
  } else {
    if (!force && last_draw_ >= 0 && now - last_draw_ < every_s_) return;
    fmt::print(out_, "{}\n", line());
  }
  std::fflush(out_);
  last_draw_ = now;
}

}  // namespace pm2lat::calibrate::run
