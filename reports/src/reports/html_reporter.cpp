#include "pm2lat/reports/html_reporter.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <ostream>
#include <unordered_map>

#include "pm2lat/classifier.h"
#include "pm2lat/reports/console_reporter.h"
#include "pm2lat/text.h"

namespace pm2lat::reports {
namespace {

// Points per family in a scatter: enough to show the shape of the error, bounded so a run of
// millions of kernels still gives a report a browser opens quickly.
constexpr std::size_t kMaxPointsPerFamily = 1500;
constexpr std::size_t kMaxScatterFamilies = 9;
constexpr std::size_t kTopKernels = 12;

const char* const kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

const char* color(std::size_t i) { return kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))]; }

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        // Control characters are not allowed in XML text (SVG): drop them.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') out += c;
    }
  }
  return out;
}

std::string pct_cell(double v) { return std::isnan(v) ? "–" : fmt::format("{:.1f}%", v); }

// A kernel name short enough for a table cell: the configuration part, elided in the middle.
std::string short_name(const std::string& name) {
  std::string n = normalize_kernel_name(name);
  if (n.empty()) n = name;
  if (n.size() > 90) n = n.substr(0, 60) + "…" + n.substr(n.size() - 25);
  return n;
}

// Log-scale axis mapping [lo, hi] (decades) onto [a, b] pixels.
struct LogAxis {
  double lo, hi, a, b;
  double operator()(double v) const {
    const double t = (std::log10(std::max(v, 1e-9)) - lo) / std::max(1e-9, hi - lo);
    return a + t * (b - a);
  }
};

void style(std::ostream& os) {
  os << R"(<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1180px;color:#222;padding:0 16px}
h1{font-size:22px;margin-bottom:4px} h2{font-size:17px;margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
.facts{color:#555;font-size:13px} .facts span{margin-right:18px} .note{color:#8a5a00;font-size:13px}
.badges{margin:14px 0} .badge{display:inline-block;border-radius:6px;padding:8px 14px;margin-right:10px;background:#f3f6fa;border:1px solid #dde3ea}
.badge b{display:block;font-size:20px} .badge small{color:#666}
table{border-collapse:collapse;font-size:13px;margin:8px 0} th,td{padding:4px 8px;border-bottom:1px solid #eee;text-align:right}
th{background:#fafafa} td.l,th.l{text-align:left} .own{background:#f2f8ff}
.grid{display:flex;flex-wrap:wrap;gap:10px} .grid svg{border:1px solid #eee;border-radius:4px;background:#fff}
svg text{font-size:11px;fill:#333} .axis{stroke:#999;stroke-width:1} .gridline{stroke:#eee} .diag{stroke:#444;stroke-dasharray:4 3}
.band{fill:#e9f3e9} .pt{fill-opacity:.55} .caption{color:#666;font-size:12px;margin:2px 0 10px}
.barcell{width:180px} .barcell div{height:10px;background:#7aa6d6;border-radius:2px}
details{margin:6px 0} summary{cursor:pointer;font-weight:600}
td.name{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;text-align:left;max-width:560px;overflow-wrap:anywhere}
</style>
)";
}

std::size_t own_column(const RunSummary& s) {
  for (std::size_t t = 0; t < s.targets.size(); ++t) {
    for (const auto& r : s.per_rank) {
      if (r.gpu == s.targets[t]) return t;
    }
  }
  return RunTable::npos;
}

void heading_html(std::ostream& os, const RunSummary& s, const ReportHeading& h, std::size_t own) {
  fmt::print(os, "<h1>{}</h1>\n<div class=\"facts\">",
             esc(h.title.empty() ? "pm2lat report" : h.title));
  for (const auto& [k, v] : h.facts) fmt::print(os, "<span><b>{}</b>: {}</span>", esc(k), esc(v));
  fmt::print(os, "<span><b>kernels</b>: {}</span><span><b>targets</b>: ", s.kernels);
  for (std::size_t t = 0; t < s.targets.size(); ++t)
    fmt::print(os, "{}{}", t ? ", " : "", esc(s.targets[t]));
  os << "</span></div>\n";
  for (const auto& n : h.notes) fmt::print(os, "<div class=\"note\">note: {}</div>\n", esc(n));
  os << "<div class=\"badges\">";
  if (s.accuracy.available) {
    fmt::print(os,
               "<span class=\"badge\" id=\"error\"><b>{}</b><small>error on {} (total kernel "
               "time)</small></span>",
               pct_cell(s.accuracy.error_pct()),
               esc(own != RunTable::npos ? s.targets[own] : "own GPU"));
    fmt::print(os,
               "<span class=\"badge\" id=\"coverage\"><b>{}</b><small>coverage (time with a "
               "dedicated model)</small></span>",
               pct_cell(s.accuracy.coverage_pct));
    fmt::print(
        os, "<span class=\"badge\"><b>{}</b><small>per-kernel MAPE (median {})</small></span>",
        pct_cell(s.accuracy.per_kernel.mape_pct), pct_cell(s.accuracy.per_kernel.median_ape_pct));
  }
  fmt::print(os, "<span class=\"badge\"><b>{} ms</b><small>measured kernel time</small></span>",
             format_ms(s.measured_us));
  os << "</div>\n";
}

void family_table(std::ostream& os, const RunSummary& s, std::size_t own) {
  os << "<h2>Per kernel family and target</h2>\n<table id=\"families\"><tr><th "
        "class=\"l\">family</th><th>kernels</th>"
        "<th>measured ms</th>";
  for (std::size_t t = 0; t < s.targets.size(); ++t) {
    fmt::print(os, "<th{}>{} ms</th>", t == own ? " class=\"own\"" : "", esc(s.targets[t]));
    if (t == own) os << "<th class=\"own\">error</th>";
  }
  os << "</tr>\n";
  for (const auto& f : s.families) {
    fmt::print(os, "<tr><td class=\"l\">{}{}</td><td>{}</td><td>{}</td>", to_string(f.family),
               f.communication ? " (comm.)" : "", f.kernels, format_ms(f.measured_us));
    for (std::size_t t = 0; t < s.targets.size(); ++t) {
      fmt::print(os, "<td{}>{}</td>", t == own ? " class=\"own\"" : "",
                 format_ms_with_band(f.predicted_us[t], f.band_pct(t)));
      if (t == own)
        fmt::print(os, "<td class=\"own\">{}</td>",
                   f.communication ? "–" : pct_cell(f.error_pct()));
    }
    os << "</tr>\n";
  }
  fmt::print(os, "<tr><th class=\"l\">kernel time</th><th>{}</th><th>{}</th>", s.kernels,
             format_ms(s.measured_us));
  for (std::size_t t = 0; t < s.targets.size(); ++t) {
    fmt::print(os, "<th>{}</th>",
               format_ms_with_band(s.per_target[t].predicted_us, s.per_target[t].band_pct()));
    if (t == own) fmt::print(os, "<th>{}</th>", pct_cell(s.accuracy.error_pct()));
  }
  fmt::print(os, "</tr>\n<tr><th class=\"l\">step time</th><th></th><th>{}</th>",
             format_ms(s.measured_span_us));
  for (std::size_t t = 0; t < s.targets.size(); ++t) {
    fmt::print(os, "<th>{}</th>", format_ms(s.per_target[t].span_us));
    if (t == own) os << "<th></th>";
  }
  os << "</tr></table>\n";
}

void step_time_chart(std::ostream& os, const RunSummary& s) {
  struct Row {
    std::string label;
    double step_us, busy_us;
    bool measured;
  };
  std::vector<Row> rows;
  if (s.measured_kernels > 0) {
    // Ranks on GPUs of several models (or a process that drove two): all of them.
    const std::vector<std::string> gpus = rank_gpus(s);
    const std::string gpu = gpus.empty() ? "own GPU" : join_list(gpus);
    rows.push_back({"measured (" + gpu + ")", s.measured_span_us, s.measured_us, true});
  }
  for (const auto& t : s.per_target)
    rows.push_back({t.name + (t.spec_scaled ? " *" : ""), t.span_us, t.predicted_us, false});
  double hi = 1e-9;
  for (const auto& r : rows) hi = std::max({hi, r.step_us, r.busy_us});
  const int left = 190, width = 760, plot = width - left - 90, row_h = 34;
  const int height = static_cast<int>(rows.size()) * row_h + 30;
  os << "<h2>Step time per target</h2>\n";
  fmt::print(
      os, "<svg id=\"step-time\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">\n",
      width, height, width, height);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const int y = static_cast<int>(i) * row_h + 8;
    const double w_step = r.step_us / hi * plot, w_busy = r.busy_us / hi * plot;
    fmt::print(os, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", left - 8, y + 15,
               esc(r.label));
    fmt::print(os,
               "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"13\" "
               "fill=\"{}\"><title>{}: step time {} ms"
               "</title></rect>\n",
               left, y, std::max(1.0, w_step), r.measured ? "#555" : "#1f77b4", esc(r.label),
               format_ms(r.step_us));
    fmt::print(os,
               "<rect class=\"bar busy\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"8\" "
               "fill=\"{}\"><title>{}: kernel time {} ms"
               "</title></rect>\n",
               left, y + 15, std::max(1.0, w_busy), r.measured ? "#aaa" : "#9ecae1", esc(r.label),
               format_ms(r.busy_us));
    fmt::print(os, "<text x=\"{:.1f}\" y=\"{}\">{} ms</text>\n",
               left + std::max(w_step, w_busy) + 6, y + 15, format_ms(r.step_us));
  }
  os << "</svg>\n<div class=\"caption\">Dark bars: step time (the run laid out on that GPU; host "
        "gaps kept). "
        "Light bars: sum of kernel times. * no profile of its own: spec-scaled.</div>\n";
}

struct Pair {
  double measured, predicted;
  std::uint32_t name;
};

void scatter_plots(std::ostream& os, const RunTable& table, const RunSummary& s) {
  os << "<h2>Predicted vs measured on the run's GPU, per family</h2>\n";
  std::map<KernelFamily, std::vector<Pair>> by_family;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const KernelRow& k = table.kernels()[i];
    const std::size_t own = table.own_target(i);
    if (!k.measured() || own == RunTable::npos || k.measured_us <= 0) continue;
    const double p = table.predicted_us(i, own);
    if (std::isnan(p) || p <= 0) continue;
    by_family[k.family].push_back({k.measured_us, p, k.name});
  }
  if (by_family.empty()) {
    os << "<p class=\"caption\">No kernels were both measured and predicted on the GPU the run "
          "used.</p>\n";
    return;
  }
  os << "<div class=\"grid\" id=\"scatter\">\n";
  std::size_t shown = 0;
  for (const auto& f : s.families) {
    auto it = by_family.find(f.family);
    if (it == by_family.end() || shown >= kMaxScatterFamilies) continue;
    std::vector<Pair> pts = it->second;
    // Keep the biggest kernels, then an even sample of the rest.
    std::sort(pts.begin(), pts.end(),
              [](const Pair& a, const Pair& b) { return a.measured > b.measured; });
    if (pts.size() > kMaxPointsPerFamily) {
      const std::size_t head = kMaxPointsPerFamily / 4;
      std::vector<Pair> kept(pts.begin(), pts.begin() + static_cast<std::ptrdiff_t>(head));
      const std::size_t rest = pts.size() - head;
      const std::size_t want = kMaxPointsPerFamily - head;
      for (std::size_t j = 0; j < want; ++j) kept.push_back(pts[head + j * rest / want]);
      pts = std::move(kept);
    }
    double lo = 1e300, hi = 0;
    for (const auto& p : pts) {
      lo = std::min({lo, p.measured, p.predicted});
      hi = std::max({hi, p.measured, p.predicted});
    }
    const double dlo = std::floor(std::log10(lo)),
                 dhi = std::max(dlo + 1, std::ceil(std::log10(hi)));
    const int w = 300, h = 280, l = 46, r = 12, t = 28, b = 36;
    const LogAxis x{dlo, dhi, double(l), double(w - r)}, y{dlo, dhi, double(h - b), double(t)};
    const std::size_t ci = shown;
    fmt::print(os,
               "<svg class=\"scatter\" data-family=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 "
               "{} {}\">\n",
               to_string(f.family), w, h, w, h);
    fmt::print(os, "<text x=\"{}\" y=\"16\" font-weight=\"600\">{} — {} kernels, error {}</text>\n",
               l, to_string(f.family), it->second.size(),
               f.communication ? "n/a (comm.)" : pct_cell(f.error_pct()));
    // ±25 % band around the diagonal, then decade grid lines.
    const double band = std::log10(1.25);
    fmt::print(os,
               "<polygon class=\"band\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f} "
               "{:.1f},{:.1f}\"/>\n",
               x(std::pow(10, dlo)), y(std::pow(10, dlo + band)), x(std::pow(10, dhi - band)),
               y(std::pow(10, dhi)), x(std::pow(10, dhi)), y(std::pow(10, dhi - band)),
               x(std::pow(10, dlo + band)), y(std::pow(10, dlo)));
    for (double d = dlo; d <= dhi + 1e-9; d += 1) {
      const double v = std::pow(10, d);
      const std::string label = v >= 1 ? fmt::format("{:g}", v) : fmt::format("{:g}", v);
      fmt::print(os, "<line class=\"gridline\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\"/>",
                 x(v), t, x(v), h - b);
      fmt::print(os, "<line class=\"gridline\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>",
                 l, y(v), w - r, y(v));
      fmt::print(os, "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>", x(v),
                 h - b + 14, label);
      fmt::print(os, "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", l - 4, y(v) + 4,
                 label);
    }
    fmt::print(
        os, "<line class=\"diag\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/>\n",
        x(std::pow(10, dlo)), y(std::pow(10, dlo)), x(std::pow(10, dhi)), y(std::pow(10, dhi)));
    fmt::print(os,
               "<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/><line class=\"axis\" "
               "x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n",
               l, h - b, w - r, h - b, l, t, l, h - b);
    fmt::print(os, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">measured µs</text>",
               (l + w - r) / 2, h - 6);
    fmt::print(os,
               "<text x=\"12\" y=\"{}\" transform=\"rotate(-90 12 {})\" "
               "text-anchor=\"middle\">predicted µs</text>\n",
               (t + h - b) / 2, (t + h - b) / 2);
    for (const auto& p : pts) {
      fmt::print(
          os,
          "<circle class=\"pt\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.6\" fill=\"{}\"><title>{}: "
          "measured {:.2f} µs, predicted {:.2f} µs</title></circle>\n",
          x(p.measured), y(p.predicted), color(ci), esc(short_name(table.name(p.name))), p.measured,
          p.predicted);
    }
    os << "</svg>\n";
    ++shown;
  }
  os << "</div>\n<div class=\"caption\">One point per kernel (the largest kernels and an even "
        "sample of the rest); "
        "log axes; dashed: predicted = measured; green band: within ±25 %.</div>\n";
}

void error_histogram(std::ostream& os, const RunTable& table) {
  os << "<h2>Error distribution</h2>\n";
  // Signed error of single kernels on their own GPU, in 10 % bins from -100 % to +100 %,
  // with one bin for everything beyond.
  constexpr int kBins = 21;
  std::vector<std::size_t> counts(kBins, 0);
  std::vector<double> time(kBins, 0.0);
  std::size_t n = 0;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const KernelRow& k = table.kernels()[i];
    const std::size_t own = table.own_target(i);
    if (!k.measured() || own == RunTable::npos || k.measured_us <= 0 || is_communication(table, i))
      continue;
    const double p = table.predicted_us(i, own);
    if (std::isnan(p)) continue;
    const double e = (p - k.measured_us) / k.measured_us * 100.0;
    const int bin =
        e >= 100 ? kBins - 1
                 : std::clamp(static_cast<int>(std::floor((e + 100.0) / 10.0)), 0, kBins - 2);
    ++counts[static_cast<std::size_t>(bin)];
    time[static_cast<std::size_t>(bin)] += k.measured_us;
    ++n;
  }
  if (n == 0) {
    os << "<p class=\"caption\">No kernels were both measured and predicted on the GPU the run "
          "used.</p>\n";
    return;
  }
  const double total_time = std::accumulate(time.begin(), time.end(), 0.0);
  const std::size_t max_count = *std::max_element(counts.begin(), counts.end());
  const double max_share =
      *std::max_element(time.begin(), time.end()) / std::max(1e-12, total_time);
  const int w = 760, h = 240, l = 50, r = 10, t = 14, b = 40;
  const double bw = double(w - l - r) / kBins;
  fmt::print(os, "<svg id=\"errors\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">\n", w, h, w,
             h);
  for (int i = 0; i < kBins; ++i) {
    const double share = time[static_cast<std::size_t>(i)] / std::max(1e-12, total_time);
    const double hc = double(counts[static_cast<std::size_t>(i)]) / double(max_count) * (h - t - b);
    const double ht = share / std::max(1e-12, max_share) * (h - t - b);
    const double x0 = l + i * bw;
    const std::string range =
        i == kBins - 1 ? "≥ +100 %" : fmt::format("{:+d} … {:+d} %", -100 + 10 * i, -90 + 10 * i);
    fmt::print(os,
               "<rect class=\"hbar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
               "fill=\"#1f77b4\"><title>{}: {} kernels</title></rect>\n",
               x0 + 2, h - b - hc, bw / 2 - 2, hc, range, counts[static_cast<std::size_t>(i)]);
    fmt::print(
        os,
        "<rect class=\"hbar time\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"#ff7f0e\"><title>{}: {:.1f} % of kernel time</title></rect>\n",
        x0 + bw / 2, h - b - ht, bw / 2 - 2, ht, range, share * 100);
    if (i % 2 == 0) {
      fmt::print(os, "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x0 + bw / 2,
                 h - b + 14, i == kBins - 1 ? "≥100" : fmt::format("{:+d}", -100 + 10 * i));
    }
  }
  fmt::print(os, "<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", l, h - b,
             w - r, h - b);
  fmt::print(os,
             "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">(predicted − measured) / measured, "
             "%</text>\n",
             (l + w) / 2, h - 8);
  os << "</svg>\n<div class=\"caption\">Blue: share of kernels; orange: share of measured kernel "
        "time, per 10 % bin "
        "(communication kernels excluded).</div>\n";
}

void top_kernels(std::ostream& os, const RunTable& table, const RunSummary& s) {
  os << "<h2>Top kernels by predicted cost</h2>\n";
  for (std::size_t t = 0; t < s.targets.size(); ++t) {
    struct Acc {
      std::size_t count = 0;
      double predicted = 0, measured = 0;
      ModelKind model = ModelKind::kNone;
      std::uint32_t flags = 0;
    };
    std::unordered_map<std::uint32_t, Acc> by_name;
    double total = 0;
    for (std::size_t i = 0; i < table.size(); ++i) {
      const double p = table.predicted_us(i, t);
      if (std::isnan(p)) continue;
      Acc& a = by_name[table.kernels()[i].name];
      ++a.count;
      a.predicted += p;
      if (table.kernels()[i].measured()) a.measured += table.kernels()[i].measured_us;
      a.model = table.model(i, t);
      a.flags |= table.flags(i, t);
      total += p;
    }
    std::vector<std::pair<std::uint32_t, Acc>> list(by_name.begin(), by_name.end());
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.second.predicted != b.second.predicted ? a.second.predicted > b.second.predicted
                                                      : a.first < b.first;
    });
    if (list.size() > kTopKernels) list.resize(kTopKernels);
    fmt::print(os,
               "<details class=\"topk\" data-target=\"{}\"{}><summary>{} — {} ms predicted kernel "
               "time</summary>\n",
               esc(s.targets[t]), t == 0 ? " open" : "", esc(s.targets[t]), format_ms(total));
    os << "<table><tr><th class=\"l\">kernel</th><th>launches</th><th>predicted "
          "ms</th><th>share</th><th></th>"
          "<th>measured ms</th><th class=\"l\">model</th></tr>\n";
    for (const auto& [name, a] : list) {
      const double share = a.predicted / std::max(1e-12, total);
      const std::string flags = flags_to_string(a.flags);
      fmt::print(
          os,
          "<tr><td class=\"name\" title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td "
          "class=\"barcell\">"
          "<div style=\"width:{:.1f}%\"></div></td><td>{}</td><td class=\"l\">{}{}</td></tr>\n",
          esc(table.name(name)), esc(short_name(table.name(name))), a.count, format_ms(a.predicted),
          share * 100, share * 100, a.measured > 0 ? format_ms(a.measured) : "–",
          to_string(a.model), flags.empty() ? "" : " (" + esc(flags) + ")");
    }
    os << "</table></details>\n";
  }
}

void rank_table(std::ostream& os, const RunSummary& s) {
  if (s.per_rank.size() < 2) return;
  os << "<h2>Step time per rank</h2>\n<table id=\"ranks\"><tr><th>rank</th><th "
        "class=\"l\">GPU</th><th>kernels</th>"
        "<th>measured ms</th>";
  for (const auto& t : s.targets) fmt::print(os, "<th>{} ms</th>", esc(t));
  os << "</tr>\n";
  for (const auto& r : s.per_rank) {
    fmt::print(os, "<tr><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td>", r.rank,
               esc(r.gpu), r.kernels, format_ms(r.measured_span_us));
    for (double v : r.predicted_span_us) fmt::print(os, "<td>{}</td>", format_ms(v));
    os << "</tr>\n";
  }
  fmt::print(os, "<tr><th>all</th><th class=\"l\">slowest rank</th><th>{}</th><th>{}</th>",
             s.kernels, format_ms(s.measured_span_us));
  for (const auto& t : s.per_target) fmt::print(os, "<th>{}</th>", format_ms(t.span_us));
  os << "</tr></table>\n";
}

}  // namespace

void write_html_report(std::ostream& os, const RunTable& table, const RunSummary& s,
                       const ReportHeading& h) {
  const std::size_t own = own_column(s);
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  fmt::print(os, "<title>{}</title>\n", esc(h.title.empty() ? "pm2lat report" : h.title));
  style(os);
  os << "</head><body>\n";
  heading_html(os, s, h, own);
  family_table(os, s, own);
  step_time_chart(os, s);
  rank_table(os, s);
  scatter_plots(os, table, s);
  error_histogram(os, table);
  top_kernels(os, table, s);
  os << "<p class=\"caption\">Error and coverage are measured on the GPU the run used, over "
        "compute kernels; "
        "communication kernels are reported but kept out of both. Generated by "
        "pm2lat.</p>\n</body></html>\n";
}

}  // namespace pm2lat::reports
