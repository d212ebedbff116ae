#include "collect/record_notes.h"

namespace pm2lat::shim {

namespace notes {

std::vector<std::string_view> names(std::uint32_t bits) {
  static constexpr std::string_view kNames[] = {
      "first_launch",   "unmeasured",    "unhooked",     "runtime_only", "graph_replay",
      "launch_dropped", "events_timing", "predict_only", "timing_lost",  "cooperative"};
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < std::size(kNames); ++i) {
    if (bits & (1u << i)) out.push_back(kNames[i]);
  }
  return out;
}

}  // namespace notes

RecordRuntime record_runtime(const RecordNotes& n) {
  RecordRuntime rt;
  if (n.api != nullptr) rt.api = n.api;
  if (n.via != nullptr) rt.via = n.via;
  rt.correlation = n.correlation;
  rt.call = n.call;
  rt.args = n.args;
  rt.notes = notes::names(n.bits);
  return rt;
}

}  // namespace pm2lat::shim
