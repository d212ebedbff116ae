// Subcommands of the pm2lat command line, one registration function per command file.
// Each adds its subcommand to the app and runs when it was parsed.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace pm2lat::cli {

// Options every command shares.
struct GlobalOptions {
  std::string profiles;  // directory of device profiles and devices.json
};

// A parsed subcommand's action: returns the process exit code.
using Action = std::function<int()>;

// Registration: adds the subcommand(s) and returns the action to run if parsed.
void add_eval_commands(CLI::App& app, const GlobalOptions& global, std::vector<std::pair<CLI::App*, Action>>& actions);

// Writes `text` to `file` (throws std::runtime_error naming the file on failure).
void write_text_file(const std::string& file, const std::string& text);

}  // namespace pm2lat::cli
