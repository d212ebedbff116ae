#include "pm2lat/reports/replay/trace_op_linker.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

namespace pm2lat::reports {
namespace {

bool is_step_marker(std::string_view name) { return name.rfind("ProfilerStep#", 0) == 0; }

bool contains(const TraceOp& op, double t, double tol) {
  return op.ts_us - tol <= t && t <= op.ts_us + op.dur_us + tol;
}

}  // namespace

void link_kernels_to_ops(KinetoTrace& trace) {
  // Whole-µs traces round both the op and the launch call: allow one tick of slack.
  const double tol = trace.whole_us_timestamps ? 1.0 : 0.0;

  // Ops per thread, by start (outer first when two start together), with their nesting.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int32_t>> by_thread;
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    TraceOp& op = trace.ops[i];
    op.parent = -1;
    if (is_step_marker(trace.strings[op.name])) continue;
    by_thread[{op.pid, op.tid}].push_back(static_cast<std::int32_t>(i));
  }
  for (auto& [thread, ids] : by_thread) {
    std::sort(ids.begin(), ids.end(), [&](std::int32_t a, std::int32_t b) {
      const TraceOp& x = trace.ops[static_cast<std::size_t>(a)];
      const TraceOp& y = trace.ops[static_cast<std::size_t>(b)];
      if (x.ts_us != y.ts_us) return x.ts_us < y.ts_us;
      return x.dur_us > y.dur_us;
    });
    std::vector<std::int32_t> open;
    for (std::int32_t id : ids) {
      TraceOp& op = trace.ops[static_cast<std::size_t>(id)];
      while (!open.empty()) {
        const TraceOp& top = trace.ops[static_cast<std::size_t>(open.back())];
        const double top_end = top.ts_us + top.dur_us;
        if (op.ts_us < top_end && op.ts_us + op.dur_us <= top_end + tol) break;
        open.pop_back();
      }
      op.parent = open.empty() ? -1 : open.back();
      open.push_back(id);
    }
  }

  for (TraceKernel& k : trace.kernels) {
    k.op = -1;
    k.launched = false;
    k.graph_launch = false;
    auto l = trace.launches.find(k.correlation);
    if (l == trace.launches.end()) continue;
    k.launched = true;
    const std::string& api = trace.strings[l->second.name];
    // A graph replay launches many kernels from one call: the op around it says nothing
    // about any single kernel's operands.
    if (api.find("GraphLaunch") != std::string::npos) {
      k.graph_launch = true;
      continue;
    }
    auto it = by_thread.find({l->second.pid, l->second.tid});
    if (it == by_thread.end()) continue;
    const auto& ids = it->second;
    const double t = l->second.ts_us;
    // The last op starting at or before the call; the innermost op containing the call is it
    // or one of its ancestors.
    auto pos = std::upper_bound(ids.begin(), ids.end(), t + tol, [&](double v, std::int32_t id) {
      return v < trace.ops[static_cast<std::size_t>(id)].ts_us;
    });
    if (pos == ids.begin()) continue;
    std::int32_t cand = *(pos - 1);
    while (cand >= 0 && !contains(trace.ops[static_cast<std::size_t>(cand)], t, tol)) {
      cand = trace.ops[static_cast<std::size_t>(cand)].parent;
    }
    k.op = cand;
  }
}

std::vector<const TraceOp*> op_chain(const KinetoTrace& trace, const TraceKernel& kernel,
                                     int depth) {
  std::vector<const TraceOp*> chain;
  for (std::int32_t id = kernel.op; id >= 0 && static_cast<int>(chain.size()) < depth;
       id = trace.ops[static_cast<std::size_t>(id)].parent) {
    chain.push_back(&trace.ops[static_cast<std::size_t>(id)]);
  }
  return chain;
}

}  // namespace pm2lat::reports
