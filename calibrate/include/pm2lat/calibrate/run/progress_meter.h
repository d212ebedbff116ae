// The progress line of a calibration run: a bar, tasks done, elapsed time and time left.
// Time left is the remaining estimated cost scaled by how the estimates compared with the
// time actually spent so far, so it corrects itself as the run goes.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>

namespace pm2lat::calibrate::run {

class ProgressMeter {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic

  // `out` null: nothing is printed (the meter still computes). Interactive output redraws
  // one line; otherwise a line is printed every `every_s` seconds.
  explicit ProgressMeter(std::FILE* out, bool interactive, Clock clock = {}, double every_s = 30);

  void set_total(double estimated_s, std::size_t tasks);
  // A task finished (measured now, or found in the journal when `resumed`).
  void advance(double estimated_s, const std::string& label, bool resumed = false);
  void finish();

  double elapsed_s() const;
  double remaining_s() const;
  std::string line() const;

 private:
  void draw(bool force);

  std::FILE* out_;
  bool interactive_;
  Clock clock_;
  double every_s_;
  double start_ = 0;
  double last_draw_ = -1;
  double total_est_ = 0;
  double done_est_ = 0;      // estimates of everything finished
  double measured_est_ = 0;  // estimates of what this session measured (the rate's basis)
  std::size_t total_tasks_ = 0, done_tasks_ = 0;
  std::string label_;
};

}  // namespace pm2lat::calibrate::run
