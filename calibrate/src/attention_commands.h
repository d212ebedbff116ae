// pm2lat-calibrate subcommands for the AIConfigurator attention tables: import-attention
// (build the attention sections of device profiles) and split-attention (split a table by
// shape into train and test files for out-of-sample evaluation).
#pragma once

#include <CLI/CLI.hpp>

namespace pm2lat::calibrate {

// Adds the subcommands; each runs from its own callback (a failure exits with status 1).
void add_attention_commands(CLI::App& app);

}  // namespace pm2lat::calibrate
