// `pm2lat devices`: every GPU a target may name, its spec, and where its predictions come from.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/device_list.h"

namespace pm2lat::cli {

void add_devices_command(CLI::App& app, const GlobalOptions& global,
                         std::vector<std::pair<CLI::App*, Action>>& actions) {
  auto* cmd = app.add_subcommand(
      "devices", "List the GPUs targets may name: spec, other names, and their profiles");
  auto names = std::make_shared<std::vector<std::string>>();
  cmd->add_option("names", *names,
                  "Only the GPUs these names resolve to (as a trace or nvidia-smi spells them)");
  actions.emplace_back(cmd, [&global, names]() {
    Predictor predictor = Predictor::from_directory(global.profiles);
    reports::print_device_list(std::cout, names->empty()
                                              ? reports::list_devices(predictor)
                                              : reports::list_named_devices(predictor, *names));
    return 0;
  });
}

}  // namespace pm2lat::cli
