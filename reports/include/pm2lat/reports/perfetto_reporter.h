// A Chrome/Perfetto trace of the run (open in ui.perfetto.dev or chrome://tracing): the
// measured kernels on their streams, and one process per target GPU with the same kernels
// laid out as that GPU would run them (predicted_timeline.h). Each slice carries measured and
// predicted times, the model and its flags.
#pragma once

#include <iosfwd>

#include "pm2lat/reports/run_table.h"

namespace pm2lat::reports {

void write_perfetto_trace(std::ostream& out, const RunTable& table);

}  // namespace pm2lat::reports
