#include "pm2lat/reports/perfetto_reporter.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "pm2lat/reports/predicted_timeline.h"

namespace pm2lat::reports {
namespace {

std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Process ids: one block per rank, the measured run first, then the targets in order.
int pid_of(std::size_t rank_index, std::size_t column, std::size_t columns) {
  return static_cast<int>(rank_index * (columns + 1) + column + 1);
}

std::string json_number(double v) { return std::isnan(v) ? "null" : fmt::format("{:.4f}", v); }

}  // namespace

void write_perfetto_trace(std::ostream& out, const RunTable& table) {
  const std::size_t nt = table.targets().size();
  const auto& rows = table.kernels();
  const std::vector<std::size_t> order = timeline_order(table);
  std::vector<Timeline> lines;
  lines.push_back(layout_timeline(table, RunTable::npos, order));
  for (std::size_t t = 0; t < nt; ++t) lines.push_back(layout_timeline(table, t, order));

  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"pm2lat\"},\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string& ev) {
    if (!first) out << ",\n";
    out << ev;
    first = false;
  };
  std::map<std::size_t, std::set<std::uint64_t>> streams_per_rank;
  for (const auto& k : rows)
    streams_per_rank[static_cast<std::size_t>(k.rank_index)].insert(k.stream);
  for (std::size_t r = 0; r < table.ranks().size(); ++r) {
    const RankInfo& rank = table.ranks()[r];
    const std::string rank_label =
        table.ranks().size() > 1 ? fmt::format(" rank {}", rank.rank) : "";
    for (std::size_t c = 0; c <= nt; ++c) {
      const int pid = pid_of(r, c, nt);
      const std::string name =
          c == 0
              ? fmt::format("measured on {}{}", rank.gpu.empty() ? "the GPU" : rank.gpu, rank_label)
              : fmt::format("predicted on {}{}", table.targets()[c - 1], rank_label);
      emit(
          fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})",
                      pid, quoted(name)));
      emit(fmt::format(
          R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
          pid, pid));
      for (std::uint64_t s : streams_per_rank[r]) {
        emit(fmt::format(
            R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"stream {}"}}}})",
            pid, s, s));
      }
    }
  }
  std::string args;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const KernelRow& k = rows[i];
    const std::string name = quoted(table.name(k.name));
    const std::string_view family = to_string(k.family);
    for (std::size_t c = 0; c <= nt; ++c) {
      const Timeline& tl = lines[c];
      if (c == 0 && !k.measured()) continue;  // nothing measured to show
      args = fmt::format(R"("measured_us":{})", k.measured() ? json_number(k.measured_us) : "null");
      if (c > 0) {
        const std::size_t t = c - 1;
        args += fmt::format(R"(,"predicted_us":{},"model":"{}","flags":"{}")",
                            json_number(table.predicted_us(i, t)), to_string(table.model(i, t)),
                            flags_to_string(table.flags(i, t)));
      }
      emit(fmt::format(
          R"({{"ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},"args":{{{}}}}})",
          name, family, pid_of(static_cast<std::size_t>(k.rank_index), c, nt), k.stream,
          tl.start_us[i], tl.duration_us[i], args));
    }
  }
  out << "\n]}\n";
}

}  // namespace pm2lat::reports
