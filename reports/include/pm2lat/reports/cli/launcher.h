// `pm2lat run -- CMD ARGS...`: runs a program with the runtime library preloaded and
// configured through the environment the runtime reads:
//   LD_PRELOAD       libpm2lat.so prepended to any existing preloads
//   PM2LAT_TARGETS   comma-separated target GPUs (catalogue names)
//   PM2LAT_OUT       output directory (records.<rank>.jsonl, summary)
//   PM2LAT_MEASURE   "0" to predict without measuring (--no-measure)
//   PM2LAT_PROFILES  profile directory
// The program's exit status is passed on: its exit code, or death by the same signal.
// Signals sent to the launcher alone (kill PID, a batch system stopping the job) are
// forwarded to the program; terminal signals already reach it through the process group.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace pm2lat::reports {

struct LaunchConfig {
  std::vector<std::string> command;  // program and arguments
  std::vector<std::string> targets;  // catalogue names
  std::filesystem::path out_dir;     // absolute
  std::filesystem::path library;     // libpm2lat.so
  std::string profiles;              // profile directory ("" = runtime default)
  bool measure = true;
};

// Where libpm2lat.so is: $PM2LAT_LIB (the file, or a directory holding it), then next to
// the pm2lat executable, its ../lib and ../lib/pm2lat (installed), its ../shim (build tree).
// InputError listing the places looked at when none has it.
std::filesystem::path find_runtime_library(const std::filesystem::path& exe_dir);

// The directory of the running executable (/proc/self/exe).
std::filesystem::path executable_dir();

// Creates and returns a directory no other run writes to: "pm2lat-20250101-120000" in
// `parent` (local time), or that name with "-2", "-3", ... when a run started in the same
// second took it (a directory is either created or found taken, so two runs never share one).
// InputError when none can be created.
std::filesystem::path create_fresh_out_dir(const std::filesystem::path& parent);

// The child's environment: ours, with the runtime's variables set and LD_PRELOAD extended.
std::vector<std::string> child_environment(const LaunchConfig& config,
                                           const char* const* parent_env);

struct ChildStatus {
  bool signaled = false;  // killed by a signal
  int code = 0;           // exit code, or the signal number
};

// Runs the command with `env` (PATH lookup as a shell does), forwarding signals; returns how
// it ended. A program that cannot be started ends with 127 (not found) or 126 (not
// executable), as in a shell, after a message on stderr.
ChildStatus run_child(const std::vector<std::string>& command, const std::vector<std::string>& env);

// Ends this process the way the child ended (re-raising its signal); returns the shell-style
// status (128 + signal) if the signal does not end the process.
int exit_like(const ChildStatus& status);

}  // namespace pm2lat::reports
