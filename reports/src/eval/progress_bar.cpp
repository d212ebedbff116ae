#include "pm2lat/reports/eval/progress_bar.h"

#include <unistd.h>

#include <algorithm>

namespace pm2lat::reports {
namespace {
// Work shorter than this never shows a bar; redraws are rate-limited to the same period.
constexpr auto kQuietPeriod = std::chrono::milliseconds(400);
constexpr auto kRedrawPeriod = std::chrono::milliseconds(100);
constexpr int kWidth = 30;
}  // namespace

ProgressBar::ProgressBar(Mode mode, std::FILE* out) : out_(out) {
  switch (mode) {
    case Mode::kAlways: enabled_ = true; break;
    case Mode::kNever: enabled_ = false; break;
    case Mode::kAuto: enabled_ = out != nullptr && isatty(fileno(out)) != 0; break;
  }
  started_ = last_draw_ = std::chrono::steady_clock::now();
}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::stage(std::string label, std::uint64_t total) {
  label_ = std::move(label);
  total_ = total;
}

void ProgressBar::update(std::uint64_t done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - started_ < kQuietPeriod || now - last_draw_ < kRedrawPeriod) return;
  last_draw_ = now;
  draw(done);
}

void ProgressBar::draw(std::uint64_t done) {
  if (total_ > 0) {
    const double frac = std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
    const int filled = static_cast<int>(frac * kWidth);
    std::string bar(static_cast<std::size_t>(filled), '=');
    if (filled < kWidth) bar += '>';
    bar.resize(kWidth, ' ');
    std::fprintf(out_, "\r\033[K[%s] %3d%% %s", bar.c_str(), static_cast<int>(frac * 100),
                 label_.c_str());
  } else {
    std::fprintf(out_, "\r\033[K%s: %llu", label_.c_str(), static_cast<unsigned long long>(done));
  }
  std::fflush(out_);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (drawn_) {
    std::fprintf(out_, "\r\033[K");
    std::fflush(out_);
    drawn_ = false;
  }
}

}  // namespace pm2lat::reports
