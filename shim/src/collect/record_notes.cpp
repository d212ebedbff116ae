#include "collect/record_notes.h"

#include <nlohmann/json.hpp>

namespace pm2lat::shim {

namespace notes {

std::vector<std::string> names(std::uint32_t bits) {
  static const char* const kNames[] = {
      "first_launch",   "unmeasured",    "unhooked",     "runtime_only", "graph_replay",
      "launch_dropped", "events_timing", "predict_only", "timing_lost",  "cooperative"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    if (bits & (1u << i)) out.emplace_back(kNames[i]);
  }
  return out;
}

}  // namespace notes

void append_notes(std::string& line, const RecordNotes& n) {
  if (line.empty() || line.back() != '}') return;
  nlohmann::json j = nlohmann::json::object();
  if (n.api != nullptr) j["api"] = n.api;
  if (n.via != nullptr) j["via"] = n.via;
  if (n.correlation != 0) j["corr"] = n.correlation;
  if (n.call != 0) j["call"] = n.call;
  if (!n.args.empty()) j["args"] = n.args;
  j["notes"] = notes::names(n.bits);
  line.pop_back();
  if (line.size() > 1) line += ',';
  line += "\"runtime\":";
  line += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line += '}';
}

}  // namespace pm2lat::shim
