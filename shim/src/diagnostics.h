// The shim's own messages to the user: each problem is reported once, on stderr, prefixed
// "pm2lat:", and never from the launch path. Counters of everything that went wrong are
// kept too and end up in the summary.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config.h"

namespace pm2lat::shim {

class Diagnostics {
 public:
  static Diagnostics& instance();

  void set_level(LogLevel level) noexcept { level_ = level; }
  // Warns once per `key` (later calls with the same key are counted, not printed).
  void warn_once(std::string_view key, std::string_view message);
  void info(std::string_view message);
  // Every distinct warning, for the summary.
  std::vector<std::string> warnings() const;

  void reset_lock_after_fork() noexcept;

 private:
  void write_line(std::string_view message) const noexcept;

  LogLevel level_ = LogLevel::kWarn;
  struct State;
  State* state_ = nullptr;
};

}  // namespace pm2lat::shim
