// The run laid out as a target GPU would execute it. Per (rank, stream), kernels keep their
// order; a kernel starts when the previous one on its stream ends, except that a kernel the
// measured run shows waiting for the host (the stream was idle before it) cannot start
// before its measured start: host-side time does not change with the GPU. Dependencies
// between streams (events) are not in the records and are not modelled.
#pragma once

#include <cstddef>
#include <vector>

#include "pm2lat/reports/run_table.h"

namespace pm2lat::reports {

struct Timeline {
  std::vector<double> start_us;      // per row, µs from the run's first kernel
  std::vector<double> duration_us;   // per row
  std::vector<double> rank_span_us;  // per rank: first start to last end
  double span_us = 0;                // the slowest rank's span (ranks run side by side)
};

// An idle stream gap longer than this means the kernel waited for the host.
inline constexpr double kHostGapUs = 2.0;

// Rows in execution order: by rank, stream, start time.
std::vector<std::size_t> timeline_order(const RunTable& table);

// `target` = RunTable::npos lays out the measured run itself. Rows without a prediction for
// the target keep their measured duration (0 when not measured either). `order` is
// timeline_order(table), computed once when laying out several targets.
Timeline layout_timeline(const RunTable& table, std::size_t target,
                         const std::vector<std::size_t>& order);
Timeline layout_timeline(const RunTable& table, std::size_t target);

}  // namespace pm2lat::reports
