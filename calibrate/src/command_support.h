// What every pm2lat-calibrate subcommand shares: the date stamped into a profile's
// provenance, and turning a command's failure into one error line and an exit status.
#pragma once

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <ctime>
#include <exception>
#include <string>

namespace pm2lat::calibrate {

// Today's date (UTC), YYYY-MM-DD.
inline std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

// Runs a command, turning failures into a CLI11 exit status.
template <typename F>
void run_or_exit(F&& f) {
  int rc = 1;
  try {
    rc = f();
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
  }
  if (rc != 0) throw CLI::RuntimeError(rc);
}

}  // namespace pm2lat::calibrate
