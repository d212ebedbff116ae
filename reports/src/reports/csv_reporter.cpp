#include "pm2lat/reports/csv_reporter.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <ostream>
#include <string>

namespace pm2lat::reports {
namespace {

// RFC 4180: quote fields with separators, quotes or line breaks; double inner quotes.
std::string field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_number(double v) { return std::isnan(v) ? "" : fmt::format("{:.6g}", v); }

bool is_own(const RunSummary& s, std::size_t t) {
  return std::ranges::any_of(s.per_rank,
                             [&](const RankSummary& r) { return r.gpu == s.targets[t]; });
}

}  // namespace

void write_summary_csv(std::ostream& os, const RunSummary& s, const RunTable& /*table*/) {
  // band_pct: the expected error of predicted_ms in percent (empty without an error-band table).
  os << "family,target,kernels,measured_ms,predicted_ms,error_pct,fallback_kernels,own_gpu,step_"
        "ms,band_pct\n";
  for (std::size_t t = 0; t < s.targets.size(); ++t) {
    const bool own = is_own(s, t);
    for (const auto& f : s.families) {
      const double err = own && !f.communication ? f.error_pct() : std::nan("");
      fmt::print(os, "{},{},{},{},{},{},{},{},,{}\n", to_string(f.family), field(s.targets[t]),
                 f.kernels, csv_number(f.measured_us / 1000.0),
                 csv_number(f.predicted_us[t] / 1000.0), csv_number(err), f.fallback[t],
                 own ? "true" : "false", csv_number(f.band_pct(t)));
    }
    const auto& ts = s.per_target[t];
    fmt::print(os, "(total),{},{},{},{},{},{},{},{},{}\n", field(ts.name), s.kernels,
               csv_number(s.measured_us / 1000.0), csv_number(ts.predicted_us / 1000.0),
               csv_number(own && s.accuracy.available ? s.accuracy.error_pct() : std::nan("")),
               ts.fallback, own ? "true" : "false", csv_number(ts.span_us / 1000.0),
               csv_number(ts.band_pct()));
  }
}

void write_kernels_csv(std::ostream& os, const RunTable& table) {
  os << "rank,stream,start_us,name,family,measured_us";
  for (const auto& t : table.targets()) os << "," << field(t + "_us");
  // Then each prediction's expected error in percent (empty when it has none).
  for (const auto& t : table.targets()) os << "," << field(t + "_band_pct");
  os << "\n";
  const auto& rows = table.kernels();
  std::string line;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const KernelRow& k = rows[i];
    line = fmt::format("{},{},{:.3f},{},{},{}",
                       table.ranks()[static_cast<std::size_t>(k.rank_index)].rank, k.stream,
                       static_cast<double>(k.ts_ns) / 1000.0, field(table.name(k.name)),
                       to_string(k.family), k.measured() ? csv_number(k.measured_us) : "");
    for (std::size_t t = 0; t < table.targets().size(); ++t) {
      line += ',';
      line += csv_number(table.predicted_us(i, t));
    }
    for (std::size_t t = 0; t < table.targets().size(); ++t) {
      line += ',';
      line += csv_number(table.band_pct(i, t));
    }
    line += '\n';
    os << line;
  }
}

}  // namespace pm2lat::reports
