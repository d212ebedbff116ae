// pm2lat-calibrate subcommands for the long-tail kernel families: import-records (family
// and convolution fits from measured kernel records, e.g. replayed profiler traces) and
// import-conv (convolution fits from the NeuSight kernel table's conv rows).
#pragma once

#include <CLI/CLI.hpp>

namespace pm2lat::calibrate {

void add_family_commands(CLI::App& app);

}  // namespace pm2lat::calibrate
