// A self-contained HTML report (inline CSS and SVG, no scripts, no network): the family x
// target table, step time per target, predicted-vs-measured scatter per family on the run's
// own GPU, the distribution of per-kernel errors, and the top kernels by predicted cost on
// each target. Plots carry stable class names (bar, pt, hbar, topk) for tools and tests.
#pragma once

#include <iosfwd>

#include "pm2lat/reports/report_heading.h"
#include "pm2lat/reports/run_summary.h"
#include "pm2lat/reports/run_table.h"

namespace pm2lat::reports {

void write_html_report(std::ostream& os, const RunTable& table, const RunSummary& s,
                       const ReportHeading& h);

}  // namespace pm2lat::reports
