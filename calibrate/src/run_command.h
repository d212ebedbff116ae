// pm2lat-calibrate run: calibrates the local GPU with microbenchmarks (or plans it with
// --dry-run, or refits a finished run's journal with --fit-only) and writes a device profile
// in the format `import` writes.
#pragma once

#include <CLI/CLI.hpp>

namespace pm2lat::calibrate {

void add_run_command(CLI::App& app);

}  // namespace pm2lat::calibrate
