#include "pm2lat/reports/console_reporter.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <ostream>

#include "pm2lat/reports/replay/trace_replay.h"
#include "pm2lat/text.h"

namespace pm2lat::reports {
namespace {

std::string pct_column(double v) { return std::isnan(v) ? "-" : fmt::format("{:.1f}", v); }

// Target names are long ("RTX-PRO-6000-Server"); columns follow the longest of name and value.
std::size_t column_width(const std::string& name) { return std::max<std::size_t>(10, name.size()); }
// " ±100 %": the room an error band takes after a value.
constexpr std::size_t kBandWidth = 7;

}  // namespace

std::string format_ms(double us) {
  if (std::isnan(us)) return "-";
  const double ms = us / 1000.0;
  const double a = std::fabs(ms);
  if (a == 0) return "0";
  if (a < 0.1) return fmt::format("{:.4f}", ms);
  if (a < 10) return fmt::format("{:.3f}", ms);
  if (a < 1000) return fmt::format("{:.2f}", ms);
  return fmt::format("{:.1f}", ms);
}

std::string format_band(double band_pct) {
  if (std::isnan(band_pct)) return "";
  // Whole percent once the band is wide: "±12 %", "±4.5 %".
  return band_pct >= 10 ? fmt::format("±{:.0f} %", band_pct) : fmt::format("±{:.1f} %", band_pct);
}

std::string format_ms_with_band(double us, double band_pct) {
  const std::string band = std::isnan(us) ? "" : format_band(band_pct);
  return band.empty() ? format_ms(us) : format_ms(us) + " " + band;
}

namespace {
// The kernel time outside coverage, by reason ("not covered: no_shape 12.0%, fallback 1.2%").
void print_uncovered(std::ostream& os, const Accuracy& a) {
  double total = 0;
  for (double us : a.reason_us) total += us;
  std::string parts;
  for (std::size_t i = 1; i < kCoverageReasons && total > 0; ++i) {
    if (!(a.reason_us[i] > 0)) continue;
    parts += fmt::format("{}{} {}%", parts.empty() ? "" : ", ",
                         to_string(static_cast<CoverageReason>(i)),
                         pct_column(a.reason_us[i] / total * 100));
  }
  if (!parts.empty()) fmt::print(os, "not covered: {}\n", parts);
}
}  // namespace

void print_run_summary(std::ostream& os, const RunSummary& s, const ReportHeading& h) {
  if (!h.title.empty()) fmt::print(os, "{}\n", h.title);
  for (const auto& [k, v] : h.facts) fmt::print(os, "  {}: {}\n", k, v);
  for (const auto& n : h.notes) fmt::print(os, "  note: {}\n", n);

  // Header: family | kernels | measured ms | per target: predicted ms [err% on own GPU]. A run
  // that measured nothing (predict-only) has no measured column and no error column: nothing
  // was measured to show.
  const bool measured = s.measured_kernels > 0;
  const std::size_t own = [&] {
    // The own-GPU column is the one whose family errors are shown.
    if (!measured) return s.targets.size();
    for (std::size_t t = 0; t < s.targets.size(); ++t) {
      for (const auto& r : s.per_rank) {
        if (r.gpu == s.targets[t]) return t;
      }
    }
    return s.targets.size();
  }();
  // The family, kernel count and (when there is one) measurement cells of a row.
  auto row_start = [&](const std::string& label, const std::string& kernels, double measured_us) {
    return measured ? fmt::format("{:<18} {:>8} {:>12}", label, kernels, format_ms(measured_us))
                    : fmt::format("{:<18} {:>8}", label, kernels);
  };
  // Predictions with an error band take " ±12 %" more room.
  const bool banded = std::ranges::any_of(
      s.per_target, [](const TargetSummary& ts) { return !std::isnan(ts.band_pct()); });
  const auto width = [&](const std::string& target) {
    return column_width(target) + 3 + (banded ? kBandWidth : 0);
  };
  std::string line = measured
                         ? fmt::format("{:<18} {:>8} {:>12}", "family", "kernels", "measured ms")
                         : fmt::format("{:<18} {:>8}", "family", "kernels");
  for (std::size_t t = 0; t < s.targets.size(); ++t) {
    line += fmt::format(" | {:>{}}", s.targets[t] + " ms", width(s.targets[t]));
    if (t == own) line += fmt::format(" {:>6}", "err%");
  }
  fmt::print(os, "\n{}\n{}\n", line, std::string(line.size(), '-'));
  for (const auto& f : s.families) {
    std::string row = row_start(std::string(to_string(f.family)) + (f.communication ? "*" : ""),
                                std::to_string(f.kernels), f.measured_us);
    for (std::size_t t = 0; t < s.targets.size(); ++t) {
      row += fmt::format(" | {:>{}}", format_ms_with_band(f.predicted_us[t], f.band_pct(t)),
                         width(s.targets[t]));
      if (t == own) row += fmt::format(" {:>6}", f.communication ? "-" : pct_column(f.error_pct()));
    }
    fmt::print(os, "{}\n", row);
  }
  fmt::print(os, "{}\n", std::string(line.size(), '-'));
  std::string total = row_start("kernel time", std::to_string(s.kernels), s.measured_us);
  std::string step =
      fmt::format("{:<18} {:>8} {:>12}", "step time", "", format_ms(s.measured_span_us));
  for (std::size_t t = 0; t < s.targets.size(); ++t) {
    const auto& ts = s.per_target[t];
    total += fmt::format(" | {:>{}}", format_ms_with_band(ts.predicted_us, ts.band_pct()),
                         width(ts.name));
    step += fmt::format(" | {:>{}}", format_ms(ts.span_us), width(ts.name));
    if (t == own) {
      total += fmt::format(" {:>6}", pct_column(s.accuracy.error_pct()));
      step += fmt::format(" {:>6}", "");
    }
  }
  // Without measurements the launch times cannot tell host work from waiting for a busy GPU,
  // so no step time is laid out from them: the kernel time is the forecast.
  if (measured) {
    fmt::print(os, "{}\n{}\n", total, step);
  } else {
    fmt::print(os, "{}\n", total);
  }

  std::vector<std::string> scaled;
  for (const auto& t : s.per_target) {
    if (t.spec_scaled) scaled.push_back(t.name);
  }
  if (!scaled.empty()) {
    std::string names;
    for (const auto& n : scaled) names += (names.empty() ? "" : ", ") + n;
    fmt::print(os, "spec-scaled (no profile of their own): {}\n", names);
  }
  const bool any_comm = std::any_of(s.families.begin(), s.families.end(),
                                    [](const auto& f) { return f.communication; });
  if (any_comm) fmt::print(os, "* communication: kept out of error and coverage\n");
  if (s.accuracy.available) {
    // Ranks on GPUs of several models: each kernel is compared with its own GPU's forecast
    // (the err% column sits under the first of them).
    const std::vector<std::string> own_gpus = rank_gpus(s);
    std::string on = own < s.targets.size() ? s.targets[own] : "own GPU";
    if (own_gpus.size() > 1) on = "each kernel's own GPU (" + join_list(own_gpus) + ")";
    fmt::print(os,
               "accuracy on {}: {} kernels, measured {} ms, predicted {} ms, error {}%; per kernel "
               "MAPE {}%, "
               "median {}%; coverage {}% of kernel time\n",
               on, s.accuracy.kernels, format_ms(s.accuracy.measured_us),
               format_ms(s.accuracy.predicted_us), pct_column(s.accuracy.error_pct()),
               pct_column(s.accuracy.per_kernel.mape_pct),
               pct_column(s.accuracy.per_kernel.median_ape_pct),
               pct_column(s.accuracy.coverage_pct));
    print_uncovered(os, s.accuracy);
  } else if (!measured) {
    fmt::print(os,
               "no kernel was measured: forecasts only (no accuracy, and no step time: launch "
               "times alone cannot tell host work from waiting for the GPU)\n");
  } else {
    fmt::print(os, "the run's own GPU is not a prediction target: accuracy not available\n");
  }
}

void print_rank_table(std::ostream& os, const RunSummary& s) {
  std::string line =
      fmt::format("{:>5} {:<16} {:>8} {:>12}", "rank", "gpu", "kernels", "measured ms");
  for (const auto& t : s.targets) line += fmt::format(" | {:>{}}", t + " ms", column_width(t) + 3);
  fmt::print(os, "\nstep time per rank\n{}\n{}\n", line, std::string(line.size(), '-'));
  for (const auto& r : s.per_rank) {
    std::string row = fmt::format("{:>5} {:<16} {:>8} {:>12}", r.rank, r.gpu.empty() ? "?" : r.gpu,
                                  r.kernels, format_ms(r.measured_span_us));
    for (std::size_t t = 0; t < s.targets.size(); ++t)
      row += fmt::format(" | {:>{}}", format_ms(r.predicted_span_us[t]),
                         column_width(s.targets[t]) + 3);
    fmt::print(os, "{}\n", row);
  }
  std::string total = fmt::format("{:>5} {:<16} {:>8} {:>12}", "all", "(slowest rank)", s.kernels,
                                  format_ms(s.measured_span_us));
  for (std::size_t t = 0; t < s.targets.size(); ++t)
    total += fmt::format(" | {:>{}}", format_ms(s.per_target[t].span_us),
                         column_width(s.targets[t]) + 3);
  fmt::print(os, "{}\n{}\n", std::string(line.size(), '-'), total);
}

void print_replay_overview(std::ostream& os, const std::vector<const TraceReplay*>& traces) {
  const std::string head =
      fmt::format("{:<36} {:<16} {:>7} {:>9} {:>12} {:>12} {:>7}", "trace", "gpu", "kernels",
                  "coverage%", "measured ms", "predicted ms", "error%");
  fmt::print(os, "\n{}\n{}\n", head, std::string(head.size(), '-'));
  for (const TraceReplay* r : traces) {
    const Accuracy& a = r->summary.accuracy;
    fmt::print(os, "{:<36} {:<16} {:>7} {:>9} {:>12} {:>12} {:>7}\n", r->trace,
               r->gpu.empty() ? (r->device.empty() ? "?" : r->device) : r->gpu, r->summary.kernels,
               a.available ? pct_column(a.coverage_pct) : "-",
               format_ms(a.available ? a.measured_us : r->summary.measured_us),
               a.available ? format_ms(a.predicted_us) : "-",
               a.available ? pct_column(a.error_pct()) : "-");
  }
}

}  // namespace pm2lat::reports
