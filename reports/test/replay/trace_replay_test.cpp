// Replay of a real trace (TraceLens's BERT-small on an H100, from the public measurements in
// PM2LAT_DATA_DIR; skipped without them) and of a synthetic one, with a catalogue-only
// predictor: checks the plumbing and the invariants, not the models' accuracy.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "pm2lat/reports/input_file.h"
#include "pm2lat/reports/records_file.h"
#include "pm2lat/reports/replay/trace_replay.h"
#include "pm2lat/reports/replay_json_reporter.h"
#include "pm2lat/test/measurement_data.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

constexpr const char* kBertSmall = "traces/tracelens_h100_bert-small.json.gz";

TEST(TraceReplay, EveryKernelOfARealTraceBecomesARecordWithShapes) {
  const auto trace = test::measurement_file(kBertSmall);
  if (!trace) GTEST_SKIP() << test::missing_measurements(kBertSmall);
  Predictor predictor = test::catalogue_predictor();
  ReplayOptions opt;
  opt.targets = {"A100", "L4"};
  opt.keep_records = true;
  const TraceReplay r = replay_trace(*trace, predictor, opt);
  EXPECT_EQ(r.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.gpu, "H100-SXM");
  EXPECT_EQ(r.table.size(), 60u);
  EXPECT_EQ(r.linked, 60u);
  EXPECT_EQ(r.with_shape, 60u) << "every kernel of this trace has operator shapes";
  EXPECT_EQ(r.table.targets(), (std::vector<std::string>{"A100-SXM", "L4", "H100-SXM"}))
      << "own GPU added last";
  for (std::size_t i = 0; i < r.table.size(); ++i) {
    for (std::size_t t = 0; t < 3; ++t) EXPECT_GT(r.table.predicted_us(i, t), 0) << "row " << i;
  }
  ASSERT_TRUE(r.summary.accuracy.available);
  EXPECT_NEAR(r.summary.accuracy.measured_us, r.summary.measured_us, 1e-6);
  EXPECT_NEAR(r.summary.measured_us, 307.3, 1.0) << "sum of the trace's kernel durations";
  EXPECT_GE(r.summary.accuracy.coverage_pct, 0.0);
  EXPECT_LE(r.summary.accuracy.coverage_pct, 100.0);
  std::size_t gemms = 0, attention = 0;
  for (const auto& rec : r.records) {
    gemms += rec.op.kind == OpKind::kGemm && rec.op.gemm.valid();
    attention += rec.op.kind == OpKind::kAttention && rec.op.attention.valid();
  }
  EXPECT_EQ(gemms, 26u);
  EXPECT_EQ(attention, 4u);
}

TEST(TraceReplay, JsonHasTheDocumentedFields) {
  const auto trace = test::measurement_file(kBertSmall);
  if (!trace) GTEST_SKIP() << test::missing_measurements(kBertSmall);
  Predictor predictor = test::catalogue_predictor();
  ReplayOptions opt;
  opt.targets = {"H100"};
  const TraceReplay r = replay_trace(*trace, predictor, opt);
  const nlohmann::json j = replay_json({&r});
  ASSERT_EQ(j["traces"].size(), 1u);
  const auto& t = j["traces"][0];
  for (const char* key :
       {"trace", "device", "kernels", "coverage_time_pct", "measured_ms", "predicted_ms",
        "error_pct", "families", "per_kernel_median_ape_pct", "coverage_by_reason_pct",
        "worst_major_family", "band_coverage_pct", "timer_resolution_us"}) {
    EXPECT_TRUE(t.contains(key)) << key;
  }
  EXPECT_EQ(t["timer_resolution_us"], 0.0) << "a trace of fractional microseconds";
  // Coverage and the reasons for the rest account for all compared kernel time.
  double reasons = 0;
  for (const auto& [reason, pct] : t["coverage_by_reason_pct"].items())
    reasons += pct.get<double>();
  EXPECT_NEAR(reasons, 100.0, 1e-6);
  EXPECT_NEAR(t["coverage_by_reason_pct"]["covered"].get<double>(),
              t["coverage_time_pct"].get<double>(), 1e-6);
  ASSERT_TRUE(t["worst_major_family"].is_object());
  EXPECT_GE(t["worst_major_family"]["share_pct"].get<double>(), 5.0);
  EXPECT_EQ(t["kernels"], 60);
  double fam_measured = 0;
  for (const auto& f : t["families"]) {
    for (const char* key : {"family", "kernels", "measured_ms", "predicted_ms", "error_pct"})
      EXPECT_TRUE(f.contains(key));
    fam_measured += f["measured_ms"].get<double>();
  }
  EXPECT_NEAR(fam_measured, t["measured_ms"].get<double>(), 1e-9);
}

TEST(TraceReplay, KernelsOnGpusOfSeveralModelsAreEachScoredOnTheirOwn) {
  // One process driving an H100 and an A100: every other kernel of the layer on the A100.
  std::string text = test::transformer_layer_trace();
  const std::string devices = R"("deviceProperties":[)";
  ASSERT_NE(text.find(devices), std::string::npos);
  text.insert(text.find(devices) + devices.size(),
              R"({"id":1,"name":"NVIDIA A100-SXM4-80GB","computeMajor":8,"computeMinor":0,)"
              R"("numSms":108},)");
  const std::string on_first = R"("device":0,)";
  std::size_t moved = 0;
  bool every_other = false;
  for (std::size_t at = text.find(on_first); at != std::string::npos;
       at = text.find(on_first, at + on_first.size())) {
    if (every_other) {
      text.replace(at, on_first.size(), R"("device":1,)");
      ++moved;
    }
    every_other = !every_other;
  }
  ASSERT_GT(moved, 0u);
  const std::filesystem::path dir = test::scratch_dir("replay-models");
  test::write_text(dir / "two.json", text);
  Predictor predictor = test::catalogue_predictor();
  ReplayOptions opt;
  opt.targets = {"L4"};
  opt.keep_records = true;
  const TraceReplay r = replay_trace(dir / "two.json", predictor, opt);
  EXPECT_EQ(r.gpu, "H100-SXM");
  ASSERT_EQ(r.table.ranks().size(), 2u);
  EXPECT_EQ(r.table.ranks()[0].gpu, "H100-SXM");
  EXPECT_EQ(r.table.ranks()[1].gpu, "A100-SXM");
  std::size_t on_a100 = 0;
  for (std::size_t row = 0; row < r.table.size(); ++row) {
    const std::size_t rank = static_cast<std::size_t>(r.table.kernels()[row].rank_index);
    EXPECT_EQ(r.table.targets()[r.table.own_target(row)], r.table.ranks()[rank].gpu)
        << "row " << row << " is compared with its own GPU's forecast";
    on_a100 += rank == 1 ? 1 : 0;
  }
  EXPECT_EQ(on_a100, moved);
  EXPECT_EQ(r.table.size(), test::kTransformerLayerTraceKernels);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.back().find("GPUs of 2 models"), std::string::npos) << r.notes.back();

  // Written back, each model's kernels are a records file headed by their GPU.
  write_replay_records(r, dir / "records.two.jsonl");
  EXPECT_EQ(read_records_header(dir / "records.two.jsonl").gpu, "H100-SXM");
  EXPECT_EQ(read_records_header(dir / "records.two.A100-SXM.jsonl").gpu, "A100-SXM");

  // Named with --gpu, the trace is one GPU's.
  opt.gpu = "H100";
  EXPECT_EQ(replay_trace(dir / "two.json", predictor, opt).table.ranks().size(), 1u);

  // Two models the catalogue does not list, both standing in as the H100 (same compute
  // capability and SMs): two ranks of one GPU, each written to a file of its own.
  std::string three = test::transformer_layer_trace();
  three.insert(three.find(devices) + devices.size(),
               R"({"id":1,"name":"NVIDIA Next One","computeMajor":9,"computeMinor":0,)"
               R"("numSms":132},{"id":2,"name":"NVIDIA Next Two","computeMajor":9,)"
               R"("computeMinor":0,"numSms":132},)");
  int next = 0;
  for (std::size_t at = three.find(on_first); at != std::string::npos;
       at = three.find(on_first, at + on_first.size())) {
    three.replace(at, on_first.size(), R"("device":)" + std::to_string(next++ % 3) + ",");
  }
  test::write_text(dir / "three.json", three);
  opt.gpu.clear();
  const TraceReplay t = replay_trace(dir / "three.json", predictor, opt);
  ASSERT_EQ(t.table.ranks().size(), 3u);
  EXPECT_EQ(t.table.ranks()[1].gpu, "H100-SXM");
  EXPECT_EQ(t.table.ranks()[2].gpu, "H100-SXM");
  write_replay_records(t, dir / "records.three.jsonl");
  std::size_t written = 0;
  for (const char* f :
       {"records.three.jsonl", "records.three.H100-SXM.jsonl", "records.three.H100-SXM-2.jsonl"}) {
    ASSERT_TRUE(std::filesystem::exists(dir / f)) << f;
    const std::string text_of = test::read_text(dir / f);
    written += static_cast<std::size_t>(std::count(text_of.begin(), text_of.end(), '\n')) - 1;
  }
  EXPECT_EQ(written, t.table.size()) << "every kernel's record written once (a header a file)";
}

TEST(TraceReplay, GpuOverrideAndUnknownGpus) {
  const std::filesystem::path trace = test::scratch_dir("replay") / "layer.json";
  test::write_text(trace, test::transformer_layer_trace());
  Predictor predictor = test::catalogue_predictor();
  ReplayOptions opt;
  opt.targets = {"H100"};
  opt.gpu = "Some Future GPU";
  const TraceReplay r = replay_trace(trace, predictor, opt);
  EXPECT_EQ(r.gpu, "");
  EXPECT_FALSE(r.summary.accuracy.available);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.back().find("not in the device catalogue"), std::string::npos);

  // A name the catalogue does not list, of a model it knows: accuracy on that model's entry,
  // with a note saying so.
  opt.gpu = "NVIDIA H100 80GB HBM2e";
  const TraceReplay relative = replay_trace(trace, predictor, opt);
  EXPECT_EQ(relative.gpu, "H100-SXM");
  EXPECT_TRUE(relative.summary.accuracy.available);
  ASSERT_FALSE(relative.notes.empty());
  EXPECT_NE(relative.notes.front().find("closest relative H100-SXM"), std::string::npos);
  ASSERT_EQ(relative.table.ranks().size(), 1u);
  EXPECT_EQ(relative.table.ranks().front().timer_resolution_us, 1.0)
      << "every timestamp of this trace is a whole microsecond";

  // A model the catalogue does not list at all, named by the trace itself: the trace's device
  // properties (compute capability 9.0, 132 SMs) find the GPU that stands in, said so.
  const std::filesystem::path unlisted = test::scratch_dir("replay") / "unlisted.json";
  std::string text = test::transformer_layer_trace();
  const std::string listed = "NVIDIA H100 80GB HBM3";
  ASSERT_NE(text.find(listed), std::string::npos);
  text.replace(text.find(listed), listed.size(), "NVIDIA Next Accelerator");
  test::write_text(unlisted, text);
  opt.gpu.clear();
  const TraceReplay by_hardware = replay_trace(unlisted, predictor, opt);
  EXPECT_EQ(by_hardware.gpu, "H100-SXM");
  EXPECT_TRUE(by_hardware.summary.accuracy.available);
  ASSERT_FALSE(by_hardware.notes.empty());
  EXPECT_NE(by_hardware.notes.front().find("same compute capability (9.0)"), std::string::npos);
  EXPECT_NE(by_hardware.notes.front().find("132 against its 132"), std::string::npos);

  // A kernel event the replay cannot use is said, not lost silently.
  const std::filesystem::path unusable = test::scratch_dir("replay") / "unusable.json";
  text = test::transformer_layer_trace();
  const std::size_t first_kernel = text.find(R"("cat":"kernel")");
  ASSERT_NE(first_kernel, std::string::npos);
  const std::size_t its_duration = text.find(R"("dur":)", first_kernel);
  ASSERT_NE(its_duration, std::string::npos);
  text.insert(its_duration + 6, "-");  // the first kernel's duration made negative
  test::write_text(unusable, text);
  const TraceReplay skipped = replay_trace(unusable, predictor, opt);
  EXPECT_EQ(skipped.table.size(), r.table.size() - 1);
  ASSERT_FALSE(skipped.notes.empty());
  EXPECT_NE(skipped.notes.front().find("1 kernel event(s) not replayed"), std::string::npos)
      << skipped.notes.front();

  // The GPU's memory copies and memsets are not kernels: not forecast, and said so with the
  // share of the GPU time they took, not lost silently.
  const std::filesystem::path transfers = test::scratch_dir("replay") / "transfers.json";
  text = test::transformer_layer_trace();
  const std::size_t events = text.find(R"("traceEvents":[)");
  ASSERT_NE(events, std::string::npos);
  text.insert(events + 15,
              R"json({"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)",)json"
              R"json("ts":10,"dur":1500,"args":{"device":0,"stream":7,"bytes":8388608}},)json"
              R"json({"ph":"X","cat":"gpu_memset","name":"Memset (Device)","ts":20,"dur":2,)json"
              R"json("args":{"device":0,"stream":7,"bytes":1024}},)json");
  test::write_text(transfers, text);
  const TraceReplay with_transfers = replay_trace(transfers, predictor, opt);
  EXPECT_EQ(with_transfers.table.size(), r.table.size()) << "no kernel added or lost";
  const auto said =
      std::find_if(with_transfers.notes.begin(), with_transfers.notes.end(),
                   [](const std::string& n) { return n.starts_with("not forecast"); });
  ASSERT_NE(said, with_transfers.notes.end());
  EXPECT_NE(said->find("memory copies (1, 1.500 ms) and memsets (1, 0.002 ms)"), std::string::npos)
      << *said;

  opt.targets = {"H1OO-typo"};
  EXPECT_THROW(replay_trace(trace, predictor, opt), UnknownDeviceError);
}

}  // namespace
}  // namespace pm2lat::reports
