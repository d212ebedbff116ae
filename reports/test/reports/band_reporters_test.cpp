// Error bands in the reports: "0.200 ±12 %" in the tables, band coverage in the replay JSON,
// a band column in the CSV files.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "pm2lat/reports/console_reporter.h"
#include "pm2lat/reports/csv_reporter.h"
#include "pm2lat/reports/html_reporter.h"
#include "pm2lat/reports/records_file.h"
#include "pm2lat/reports/replay/trace_replay.h"
#include "pm2lat/reports/replay_json_reporter.h"
#include "support/run_fixture.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

// The standard fixture with H100 bands: gemm 90 µs (band 20 %, measured 100: inside) and
// 110 µs (band 5 %, measured 100: outside), elementwise 60 µs (band 25 %, measured 50:
// inside), the collective 30 µs (band 10 %: communication, not judged). No A100 bands.
RunTable banded_run() {
  RunTable t = test::fixture_run(test::standard_kernels());
  const double bands[] = {20, 5, 25, 10};
  for (std::size_t row = 0; row < t.size(); ++row) {
    Prediction p = test::prediction(t.predicted_us(row, 0), t.flags(row, 0), t.model(row, 0));
    p.band_pct = bands[row];
    t.set_prediction(row, 0, p);
  }
  return t;
}

TEST(BandFormat, WholePercentOnceWideOneDecimalBelowNothingWithoutBand) {
  EXPECT_EQ(format_band(11.75), "±12 %");
  EXPECT_EQ(format_band(4.54), "±4.5 %");
  EXPECT_EQ(format_band(std::nan("")), "");
  EXPECT_EQ(format_ms_with_band(430, 12), "0.430 ±12 %");
  EXPECT_EQ(format_ms_with_band(430, std::nan("")), "0.430");
}

TEST(BandFormat, FamilyBandIsThePredictionWeightedMeanOfItsKernels) {
  const RunSummary s = summarize(banded_run());
  ASSERT_EQ(s.families.front().family, KernelFamily::kCollective);  // most measured time
  for (const auto& f : s.families) {
    if (f.family == KernelFamily::kGemm) {
      EXPECT_NEAR(f.band_pct(0), (90 * 20 + 110 * 5) / 200.0, 1e-9);
      EXPECT_TRUE(std::isnan(f.band_pct(1))) << "no band on A100";
    }
  }
}

TEST(BandFormat, ConsoleAndHtmlShowValuePlusMinusBand) {
  const RunTable t = banded_run();
  const RunSummary s = summarize(t);
  std::ostringstream out;
  print_run_summary(out, s, ReportHeading{});
  EXPECT_TRUE(std::regex_search(out.str(), std::regex(R"(\ngemm +2 +0\.200 \| +0\.200 ±12 % )")))
      << out.str();
  std::ostringstream html;
  write_html_report(html, t, s, ReportHeading{});
  EXPECT_NE(html.str().find(">0.200 ±12 %<"), std::string::npos);
}

TEST(BandFormat, CsvCarriesTheBandInItsOwnColumns) {
  const RunTable t = banded_run();
  std::ostringstream sum, ker;
  write_summary_csv(sum, summarize(t), t);
  write_kernels_csv(ker, t);
  EXPECT_NE(sum.str().find("gemm,H100-SXM,2,0.2,0.2,0,0,true,,11.75\n"), std::string::npos)
      << sum.str();
  EXPECT_NE(sum.str().find("gemm,A100-SXM,2,0.2,0.4,,0,false,,\n"), std::string::npos) << sum.str();
  EXPECT_EQ(ker.str().substr(0, ker.str().find('\n')),
            "rank,stream,start_us,name,family,measured_us,H100-SXM_us,A100-SXM_us,"
            "H100-SXM_band_pct,A100-SXM_band_pct");
  EXPECT_NE(ker.str().find(",90,200,20,\n"), std::string::npos) << ker.str();
}

TEST(BandCoverage, ShareOfJudgedKernelsInsideTheirOwnGpuBand) {
  TraceReplay r;
  r.trace = "t.json.gz";
  r.gpu = "H100-SXM";
  r.table = banded_run();
  r.summary = summarize(r.table);
  // 2 of the 3 compute kernels lie inside their band; the collective is not judged.
  EXPECT_NEAR(r.summary.accuracy.band_coverage_pct(), 200.0 / 3.0, 1e-9);
  const nlohmann::json j = replay_json({&r});
  const auto& t = j["traces"][0];
  EXPECT_NEAR(t["band_coverage_pct"].get<double>(), 200.0 / 3.0, 1e-9);
  EXPECT_NEAR(t["band_coverage_by_reason_pct"]["covered"]["pct"].get<double>(), 50.0, 1e-9);
  EXPECT_EQ(t["band_coverage_by_reason_pct"]["covered"]["kernels"], 2);
  EXPECT_NEAR(t["band_coverage_by_reason_pct"]["fallback"]["pct"].get<double>(), 100.0, 1e-9);
  EXPECT_NEAR(j["band_coverage_pct"].get<double>(), 200.0 / 3.0, 1e-9);
  EXPECT_EQ(j["banded_kernels"], 3);

  // Without bands the coverage is null, not zero.
  TraceReplay plain;
  plain.gpu = "H100-SXM";
  plain.table = test::fixture_run(test::standard_kernels());
  plain.summary = summarize(plain.table);
  const nlohmann::json k = replay_json({&plain});
  EXPECT_TRUE(k["traces"][0]["band_coverage_pct"].is_null());
  EXPECT_TRUE(k["band_coverage_pct"].is_null());
}

TEST(BandCoverage, ATimeReadInWholeMicrosecondsIsInsideWhenADurationItMayBeIs) {
  // The 110 µs GEMM measured at 100 with a band of 9 %: durations 100.9-120.9 µs are inside.
  TraceReplay r;
  r.gpu = "H100-SXM";
  r.table = banded_run();
  Prediction p =
      test::prediction(r.table.predicted_us(1, 0), r.table.flags(1, 0), r.table.model(1, 0));
  p.band_pct = 9;
  r.table.set_prediction(1, 0, p);
  EXPECT_NEAR(summarize(r.table).accuracy.band_coverage_pct(), 200.0 / 3.0, 1e-9)
      << "read in nanoseconds, 100 µs is outside";
  r.table.ranks().front().timer_resolution_us = 1;
  r.summary = summarize(r.table);
  EXPECT_NEAR(r.summary.accuracy.band_coverage_pct(), 100.0, 1e-9)
      << "read as 100 of whole microseconds, it may have been 100.9";
  EXPECT_EQ(replay_json({&r})["traces"][0]["timer_resolution_us"], 1.0);
  // A whole microsecond does not excuse more: with a band of 5 % (104.8-115.8 µs) it misses.
  p.band_pct = 5;
  r.table.set_prediction(1, 0, p);
  EXPECT_NEAR(summarize(r.table).accuracy.band_coverage_pct(), 200.0 / 3.0, 1e-9);
}

TEST(BandRecords, ReplayRecordsCarryEachPredictionsBand) {
  // What `pm2lat replay --out` writes is read back by `report` and `check` with the bands the
  // replay showed: the runtime's records carry them, so the replay's must too.
  TraceReplay r;
  r.trace = "t.json.gz";
  r.gpu = "H100-SXM";
  r.table = banded_run();
  for (std::size_t row = 0; row < r.table.size(); ++row) {
    KernelRecord rec;
    rec.launch.name = r.table.name(r.table.kernels()[row].name);
    rec.measured_us = r.table.kernels()[row].measured_us;
    r.records.push_back(rec);
  }
  const auto file = test::scratch_dir("band_records") / "records.0.jsonl";
  write_replay_records(r, file);
  const RunTable back = read_run({file}).table;
  ASSERT_EQ(back.size(), r.table.size());
  const double bands[] = {20, 5, 25, 10};
  for (std::size_t row = 0; row < back.size(); ++row) {
    EXPECT_EQ(back.band_pct(row, 0), bands[row]) << "row " << row;
    EXPECT_TRUE(std::isnan(back.band_pct(row, 1))) << "no A100 band, row " << row;
  }
}

}  // namespace
}  // namespace pm2lat::reports
