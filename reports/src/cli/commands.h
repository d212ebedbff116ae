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
void add_eval_commands(CLI::App& app, const GlobalOptions& global,
                       std::vector<std::pair<CLI::App*, Action>>& actions);
void add_eval_attention_command(CLI::App& app, const GlobalOptions& global,
                                std::vector<std::pair<CLI::App*, Action>>& actions);
void add_eval_bounds_command(CLI::App& app, const GlobalOptions& global,
                             std::vector<std::pair<CLI::App*, Action>>& actions);
void add_replay_commands(CLI::App& app, const GlobalOptions& global,
                         std::vector<std::pair<CLI::App*, Action>>& actions);
void add_report_commands(CLI::App& app, const GlobalOptions& global,
                         std::vector<std::pair<CLI::App*, Action>>& actions);
void add_check_commands(CLI::App& app, const GlobalOptions& global,
                        std::vector<std::pair<CLI::App*, Action>>& actions);
void add_merge_commands(CLI::App& app, const GlobalOptions& global,
                        std::vector<std::pair<CLI::App*, Action>>& actions);
void add_run_commands(CLI::App& app, const GlobalOptions& global,
                      std::vector<std::pair<CLI::App*, Action>>& actions);
void add_devices_command(CLI::App& app, const GlobalOptions& global,
                         std::vector<std::pair<CLI::App*, Action>>& actions);

// Target GPUs when the user names none: a few common data-centre and inference GPUs.
inline constexpr const char* kDefaultTargets = "H100,A100,L4";

// Writes `text` to `file` (throws std::runtime_error naming the file on failure).
void write_text_file(const std::string& file, const std::string& text);
// Throws std::runtime_error naming `file` when it could not be written (its directory missing
// or read-only, the file read-only, a directory): what an output option is checked with
// before a command does the work whose result it would hold. "" passes.
void check_writable(const std::string& file);

}  // namespace pm2lat::cli

namespace pm2lat::reports {
class RunTable;
struct RunSummary;
}  // namespace pm2lat::reports

namespace pm2lat::cli {

// Writes <dir>/<base>.trace.json (Perfetto), <base>.html and <base>.csv (+ <base>.kernels.csv);
// creates `dir`. The HTML report gives `notes` as the console summary does. Returns the files
// written.
std::vector<std::string> write_run_reports(const reports::RunTable& table,
                                           const reports::RunSummary& summary,
                                           const std::string& dir, const std::string& base,
                                           const std::string& title = "",
                                           const std::vector<std::string>& notes = {});

}  // namespace pm2lat::cli
