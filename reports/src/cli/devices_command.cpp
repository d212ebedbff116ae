// `pm2lat devices`: every GPU a target may name, its spec, and where its predictions come from.
#include <iostream>

#include "cli/commands.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/device_list.h"

namespace pm2lat::cli {

void add_devices_command(CLI::App& app, const GlobalOptions& global,
                         std::vector<std::pair<CLI::App*, Action>>& actions) {
  auto* cmd = app.add_subcommand(
      "devices", "List the GPUs targets may name: spec, other names, and their profiles");
  actions.emplace_back(cmd, [&global]() {
    Predictor predictor = Predictor::from_directory(global.profiles);
    reports::print_device_list(std::cout, reports::list_devices(predictor));
    return 0;
  });
}

}  // namespace pm2lat::cli
