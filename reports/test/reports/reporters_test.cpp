// Output formats, pinned by structure and pattern rather than by exact text.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "pm2lat/reports/console_reporter.h"
#include "pm2lat/reports/csv_reporter.h"
#include "pm2lat/reports/html_reporter.h"
#include "pm2lat/reports/perfetto_reporter.h"
#include "pm2lat/test/occurrences.h"
#include "support/run_fixture.h"

namespace pm2lat::reports {
namespace {

TEST(ConsoleReporter, PrintsFamilyRowsTargetColumnsAndAccuracy) {
  const RunTable t = test::fixture_run(test::standard_kernels());
  std::ostringstream out;
  ReportHeading h;
  h.title = "run x";
  h.facts.emplace_back("GPU", "H100-SXM");
  print_run_summary(out, summarize(t), h);
  const std::string s = out.str();
  EXPECT_TRUE(std::regex_search(
      s, std::regex(R"(family +kernels +measured ms \| +H100-SXM ms +err% \| +A100-SXM ms)")))
      << s;
  EXPECT_TRUE(
      std::regex_search(s, std::regex(R"(\ngemm +2 +0\.200 \| +0\.200 +0\.0 \| +0\.400\n)")))
      << s;
  EXPECT_TRUE(std::regex_search(s, std::regex(R"(\ncollective\* +1 +0\.400 \| .* -)"))) << s;
  EXPECT_TRUE(std::regex_search(
      s, std::regex(R"(accuracy on H100-SXM: 3 kernels.*error 4\.0%.*coverage 80\.0%)")))
      << s;
  EXPECT_NE(s.find("spec-scaled (no profile of their own): A100-SXM"), std::string::npos) << s;
}

// A predict-only run (pm2lat run --no-measure) measured nothing: the table shows forecasts
// only, with no measured or error column to fill with zeros.
TEST(ConsoleReporter, APredictOnlyRunHasNoMeasuredColumn) {
  auto kernels = test::standard_kernels();
  for (auto& k : kernels) k.measured_us = std::nan("");
  const RunTable t = test::fixture_run(kernels);
  std::ostringstream out;
  print_run_summary(out, summarize(t), ReportHeading{});
  const std::string s = out.str();
  EXPECT_TRUE(
      std::regex_search(s, std::regex(R"(family +kernels \| +H100-SXM ms \| +A100-SXM ms)")))
      << s;
  EXPECT_EQ(s.find("measured ms"), std::string::npos) << s;
  EXPECT_EQ(s.find("err%"), std::string::npos) << s;
  EXPECT_TRUE(std::regex_search(s, std::regex(R"(\ngemm +2 \| +0\.200 \| +0\.400\n)"))) << s;
  EXPECT_TRUE(std::regex_search(s, std::regex(R"(\nkernel time +4 \| )"))) << s;
  EXPECT_EQ(s.find("\nstep time "), std::string::npos)
      << "no measured timeline to lay a step time on: " << s;
  EXPECT_NE(s.find("no kernel was measured: forecasts only"), std::string::npos) << s;
}

TEST(ConsoleReporter, RankTableHasOneLinePerRankAndATotal) {
  auto kernels = test::standard_kernels();
  kernels.push_back({"ampere_sgemm_128x64_tn", KernelFamily::kGemm, 1, 7, 0, 100, 90, 200});
  const RunTable t = test::fixture_run(kernels, 2);
  std::ostringstream out;
  print_rank_table(out, summarize(t));
  EXPECT_TRUE(std::regex_search(out.str(), std::regex(R"(\n +0 H100-SXM +4 )"))) << out.str();
  EXPECT_TRUE(std::regex_search(out.str(), std::regex(R"(\n +1 H100-SXM +1 )"))) << out.str();
  EXPECT_TRUE(std::regex_search(out.str(), std::regex(R"(\n +all \(slowest rank\) +5 )")))
      << out.str();
}

TEST(CsvReporter, SummaryIsTidyAndKernelsHaveOneColumnPerTarget) {
  const RunTable t = test::fixture_run(test::standard_kernels());
  const RunSummary s = summarize(t);
  std::ostringstream sum, ker;
  write_summary_csv(sum, s, t);
  write_kernels_csv(ker, t);
  std::vector<std::string> lines;
  std::istringstream in(sum.str());
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 1 + 2 * (3 + 1)) << "a row per family x target and a total per target";
  EXPECT_EQ(
      lines[0],
      "family,target,kernels,measured_ms,predicted_ms,error_pct,fallback_kernels,own_gpu,step_ms,"
      "band_pct");
  EXPECT_EQ(test::occurrences(sum.str(), "(total),H100-SXM,4,0.65,0.29,4,1,true,"), 1u)
      << sum.str();
  EXPECT_EQ(test::occurrences(sum.str(), "gemm,A100-SXM,2,0.2,0.4,,0,false,"), 1u) << sum.str();
  EXPECT_EQ(ker.str().substr(0, ker.str().find('\n')),
            "rank,stream,start_us,name,family,measured_us,H100-SXM_us,A100-SXM_us,"
            "H100-SXM_band_pct,A100-SXM_band_pct");
  EXPECT_EQ(test::occurrences(ker.str(), "\"vectorized_elementwise_kernel<4, add>\""), 1u)
      << "names with commas are quoted";
}

TEST(PerfettoReporter, MeasuredAndOneProcessPerTargetWithOrderedSlices) {
  const RunTable t = test::fixture_run(test::standard_kernels());
  std::ostringstream out;
  write_perfetto_trace(out, t);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> slices;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "X") slices[{e["pid"], e["tid"]}].push_back({e["ts"], e["dur"]});
  }
  ASSERT_EQ(processes.size(), 3u);
  EXPECT_EQ(processes.begin()->second, "measured on H100-SXM");
  EXPECT_EQ(std::next(processes.begin())->second, "predicted on H100-SXM");
  std::size_t total = 0;
  for (auto& [track, v] : slices) {
    total += v.size();
    for (std::size_t i = 1; i < v.size(); ++i)
      EXPECT_LE(v[i - 1].first + v[i - 1].second, v[i].first + 1e-6)
          << "slices on one stream never overlap";
  }
  EXPECT_EQ(total, 4u * 3u) << "every kernel once measured and once per target";
}

TEST(HtmlReporter, SelfContainedWithEveryPlot) {
  const RunTable t = test::fixture_run(test::standard_kernels());
  std::ostringstream out;
  ReportHeading h;
  h.title = "run <x> & y";
  write_html_report(out, t, summarize(t), h);
  const std::string s = out.str();
  EXPECT_NE(s.find("run &lt;x&gt; &amp; y"), std::string::npos);
  EXPECT_EQ(s.find("http://"), std::string::npos) << "nothing is loaded from the network";
  EXPECT_EQ(s.find("https://"), std::string::npos);
  EXPECT_EQ(s.find("<script"), std::string::npos);
  EXPECT_EQ(test::occurrences(s, "class=\"bar\""), 3u) << "measured + two targets";
  EXPECT_EQ(test::occurrences(s, "class=\"scatter\""), 3u)
      << "gemm, elementwise and the collective";
  EXPECT_EQ(test::occurrences(s, "<circle class=\"pt\""), 4u);
  EXPECT_EQ(test::occurrences(s, "class=\"hbar\""), 21u);
  EXPECT_EQ(test::occurrences(s, "<details class=\"topk\""), 2u);
}

}  // namespace
}  // namespace pm2lat::reports
