// A one-line progress bar on stderr for long inputs. Silent unless stderr is a terminal
// (or forced), and it stays hidden for work that finishes quickly, so short runs and
// pipelines see no noise.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace pm2lat::reports {

class ProgressBar {
 public:
  enum class Mode { kAuto, kAlways, kNever };

  explicit ProgressBar(Mode mode = Mode::kAuto, std::FILE* out = stderr);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Starts a stage ("reading trace.json.gz") of `total` units (0 = unknown).
  void stage(std::string label, std::uint64_t total);
  // Reports progress within the current stage; cheap enough to call per item.
  void update(std::uint64_t done);
  // Clears the line (if anything was drawn).
  void finish();

  bool enabled() const noexcept { return enabled_; }

 private:
  void draw(std::uint64_t done);

  std::FILE* out_;
  bool enabled_ = false;
  bool drawn_ = false;
  std::string label_;
  std::uint64_t total_ = 0;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace pm2lat::reports
