#include "pm2lat/reports/predicted_timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace pm2lat::reports {

std::vector<std::size_t> timeline_order(const RunTable& table) {
  const auto& rows = table.kernels();
  std::vector<std::size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  auto before = [&](std::size_t a, std::size_t b) {
    const KernelRow& x = rows[a];
    const KernelRow& y = rows[b];
    if (x.rank_index != y.rank_index) return x.rank_index < y.rank_index;
    if (x.stream != y.stream) return x.stream < y.stream;
    return x.ts_ns < y.ts_ns;
  };
  // Records usually arrive in this order already (one stream, by time): check before sorting.
  if (!std::is_sorted(order.begin(), order.end(), before))
    std::stable_sort(order.begin(), order.end(), before);
  return order;
}

Timeline layout_timeline(const RunTable& table, std::size_t target) {
  return layout_timeline(table, target, timeline_order(table));
}

Timeline layout_timeline(const RunTable& table, std::size_t target,
                         const std::vector<std::size_t>& order) {
  const auto& rows = table.kernels();
  const std::size_t n = rows.size();
  Timeline tl;
  tl.start_us.assign(n, 0.0);
  tl.duration_us.assign(n, 0.0);
  tl.rank_span_us.assign(table.ranks().size(), 0.0);
  if (n == 0) return tl;

  // Each rank's clock starts at its first kernel.
  std::vector<double> rank_t0(table.ranks().size(), std::numeric_limits<double>::infinity());
  for (const auto& k : rows) {
    auto& t0 = rank_t0[static_cast<std::size_t>(k.rank_index)];
    t0 = std::min(t0, static_cast<double>(k.ts_ns) / 1000.0);
  }
  std::vector<double> rank_end(table.ranks().size(), 0.0);

  const KernelRow* prev = nullptr;
  double prev_end = 0;           // laid-out end of the previous kernel on this stream
  double prev_measured_end = 0;  // measured end of the previous kernel on this stream
  for (std::size_t idx : order) {
    const KernelRow& k = rows[idx];
    const double ts =
        static_cast<double>(k.ts_ns) / 1000.0 - rank_t0[static_cast<std::size_t>(k.rank_index)];
    double dur = k.measured() ? k.measured_us : 0.0;
    if (target != RunTable::npos) {
      const double p = table.predicted_us(idx, target);
      if (!std::isnan(p)) dur = p;
    }
    const bool same_stream =
        prev != nullptr && prev->rank_index == k.rank_index && prev->stream == k.stream;
    double start;
    if (target == RunTable::npos) {
      start = ts;
    } else if (!same_stream) {
      start = ts;
    } else {
      const bool waited_for_host = !k.measured() || ts - prev_measured_end > kHostGapUs;
      start = waited_for_host ? std::max(prev_end, ts) : prev_end;
    }
    tl.start_us[idx] = start;
    tl.duration_us[idx] = dur;
    prev = &k;
    prev_end = start + dur;
    prev_measured_end = ts + (k.measured() ? k.measured_us : 0.0);
    auto& end = rank_end[static_cast<std::size_t>(k.rank_index)];
    end = std::max(end, prev_end);
  }
  for (std::size_t r = 0; r < rank_end.size(); ++r) {
    tl.rank_span_us[r] = rank_end[r];
    tl.span_us = std::max(tl.span_us, rank_end[r]);
  }
  return tl;
}

}  // namespace pm2lat::reports
