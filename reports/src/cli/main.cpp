// pm2lat: the command line. Subcommands are thin: each parses its options and calls one
// unit of reports/ (see cli/commands.h).
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "cli/commands.h"
#include "pm2lat/predictor.h"

namespace pm2lat::cli {

void write_text_file(const std::string& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(file + ": cannot be written");
  out << text;
  if (!out) throw std::runtime_error(file + ": write failed");
}

void check_writable(const std::string& file) {
  namespace fs = std::filesystem;
  if (file.empty()) return;
  const fs::path path(file);
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw std::runtime_error(file + ": is a directory, not a file");
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw std::runtime_error(file + ": cannot be written (no directory " + dir.string() + ")");
  const bool exists = fs::exists(path, ec);
  if (::access(exists ? path.c_str() : dir.c_str(), W_OK) != 0) {
    throw std::runtime_error(file + ": cannot be written (" +
                             (exists ? "the file" : "the directory " + dir.string()) + ": " +
                             std::strerror(errno) + ")");
  }
}

}  // namespace pm2lat::cli

// The commands' errors are caught below; one escaping from the set-up is a bug, and
// terminate's message names it.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  using namespace pm2lat;
  CLI::App app{"pm2lat: GPU kernel latency forecasts from a live run or a recorded trace"};
  app.require_subcommand(1);
  app.fallthrough();  // "--profiles" may follow any subcommand
  cli::GlobalOptions global;
  global.profiles = Predictor::default_profile_dir().string();
  app.add_option("--profiles", global.profiles, "directory of device profiles and devices.json")
      ->envname("PM2LAT_PROFILES");
  std::vector<std::pair<CLI::App*, cli::Action>> actions;
  cli::add_eval_commands(app, global, actions);
  cli::add_eval_attention_command(app, global, actions);
  cli::add_eval_bounds_command(app, global, actions);
  cli::add_replay_commands(app, global, actions);
  cli::add_report_commands(app, global, actions);
  cli::add_check_commands(app, global, actions);
  cli::add_merge_commands(app, global, actions);
  cli::add_run_commands(app, global, actions);
  cli::add_devices_command(app, global, actions);

  CLI11_PARSE(app, argc, argv);
  try {
    for (auto& [cmd, action] : actions) {
      if (cmd->parsed()) return action();
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
