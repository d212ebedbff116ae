#include <gtest/gtest.h>

#include "pm2lat/reports/input_file.h"
#include "pm2lat/reports/records_file.h"
#include "pm2lat/reports/run_predictor.h"
#include "pm2lat/reports/run_summary.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

RecordsHeader header(int rank) {
  RecordsHeader h;
  h.gpu = "H100-SXM";
  h.targets = {"H100-SXM", "A100-SXM"};
  h.rank = rank;
  h.pid = 100 + rank;
  h.command = "python train.py";
  return h;
}

PredictedRecord record(std::uint64_t seq, double measured) {
  PredictedRecord r;
  r.record.seq = seq;
  r.record.ts_ns = seq * 1000;
  r.record.stream = 7;
  r.record.launch.name = "ampere_sgemm_128x64_tn";
  r.record.measured_us = measured;
  r.family = KernelFamily::kGemm;
  Prediction p;
  p.us = measured * 1.1;
  p.model = ModelKind::kGemmWave;
  r.predictions.emplace_back("H100-SXM", p);
  p.us = measured * 2;
  r.predictions.emplace_back("A100-SXM", p);
  return r;
}

std::string error_of(const std::vector<std::filesystem::path>& files) {
  try {
    read_run(files);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(RecordsFile, RoundTripsRanksIntoOneTable) {
  const auto dir = test::scratch_dir("records");
  write_records_file(dir / "records.0.jsonl", header(0), {record(0, 10), record(1, 20)});
  write_records_file(dir / "records.1.jsonl", header(1), {record(0, 30)});
  test::write_text(dir / "summary.json", "{}");
  const auto files = find_records_files({dir.string()});
  ASSERT_EQ(files.size(), 2u) << "only records.*.jsonl files belong to the run";
  const RunInput in = read_run(files);
  ASSERT_EQ(in.table.ranks().size(), 2u);
  EXPECT_EQ(in.table.ranks()[1].rank, 1);
  EXPECT_EQ(in.table.ranks()[0].command, "python train.py");
  ASSERT_EQ(in.table.size(), 3u);
  EXPECT_EQ(in.table.targets(), (std::vector<std::string>{"H100-SXM", "A100-SXM"}));
  EXPECT_DOUBLE_EQ(in.table.predicted_us(2, 1), 60);
  EXPECT_EQ(in.table.own_target(2), 0u);
  EXPECT_TRUE(in.notes.empty());
}

TEST(RecordsFile, ReadsGzipRecords) {
  const auto dir = test::scratch_dir("records");
  const std::string text = header_to_jsonl(header(0)) + "\n" + record_to_jsonl(record(0, 5)) + "\n";
  test::write_gzip(dir / "records.0.jsonl.gz", text);
  EXPECT_EQ(read_run(find_records_files({dir.string()})).table.size(), 1u);
}

TEST(RecordsFile, BadFilesGiveOneClearError) {
  const auto dir = test::scratch_dir("records");
  test::write_text(dir / "empty.jsonl", "");
  test::write_text(dir / "noheader.jsonl", record_to_jsonl(record(0, 5)) + "\n");
  test::write_text(dir / "headeronly.jsonl", header_to_jsonl(header(0)) + "\n");
  test::write_text(dir / "garbled.jsonl",
                   header_to_jsonl(header(0)) + "\n" + record_to_jsonl(record(0, 5)) +
                       "\n{\"seq\": oops}\n" + record_to_jsonl(record(1, 5)) + "\n");
  EXPECT_NE(error_of({dir / "empty.jsonl"}).find("empty"), std::string::npos);
  EXPECT_NE(error_of({dir / "noheader.jsonl"}).find("not a pm2lat records file"),
            std::string::npos);
  EXPECT_NE(error_of({dir / "headeronly.jsonl"}).find("no kernel records"), std::string::npos);
  EXPECT_NE(error_of({dir / "garbled.jsonl"}).find("garbled.jsonl:3"), std::string::npos);
  EXPECT_THROW(find_records_files({(dir / "missing").string()}), InputError);
  EXPECT_THROW(find_records_files({test::scratch_dir("none").string()}), InputError);
}

TEST(RecordsFile, ACutOffLastLineIsSkippedWithANote) {
  const auto dir = test::scratch_dir("records");
  const std::string last = record_to_jsonl(record(1, 5));
  test::write_text(dir / "records.0.jsonl", header_to_jsonl(header(0)) + "\n" +
                                                record_to_jsonl(record(0, 5)) + "\n" +
                                                last.substr(0, last.size() / 2));
  const RunInput in = read_run({dir / "records.0.jsonl"});
  EXPECT_EQ(in.table.size(), 1u);
  ASSERT_EQ(in.notes.size(), 1u);
  EXPECT_NE(in.notes[0].find("cut-off"), std::string::npos);
}

TEST(RecordsFile, RecordsCanBePredictedAgainForOtherTargets) {
  const auto dir = test::scratch_dir("records");
  PredictedRecord r = record(0, 10);
  r.record.op.kind = OpKind::kGemm;
  r.record.op.gemm.m = r.record.op.gemm.n = r.record.op.gemm.k = 1024;
  r.record.op.gemm.a = DType::kFp32;
  write_records_file(dir / "records.0.jsonl", header(0), {r});
  Predictor predictor = test::catalogue_predictor();
  RunPredictor again(predictor, {"L4"});
  const RunInput in = read_run({dir / "records.0.jsonl"}, &again);
  const std::size_t l4 = in.table.target_index("L4");
  ASSERT_NE(l4, RunTable::npos);
  EXPECT_GT(in.table.predicted_us(0, l4), 0);
  EXPECT_DOUBLE_EQ(in.table.predicted_us(0, in.table.target_index("A100-SXM")), 20)
      << "recorded ones stay";
}

TEST(RecordsFile, RecordsOfAnotherGpuThanTheHeadersAreARankOfTheirOwn) {
  // A process that drove an H100 (device 0, the header's) and an A100: the A100's kernels are
  // scored against the A100, as a rank of their own; a record naming no GPU ran on the
  // header's.
  const auto dir = test::scratch_dir("records");
  PredictedRecord on_a100 = record(1, 20);
  on_a100.gpu = "A100-SXM";
  on_a100.record.device = 1;
  PredictedRecord on_h100 = record(2, 10);
  on_h100.gpu = "H100-SXM";
  write_records_file(dir / "records.0.jsonl", header(0), {record(0, 10), on_a100, on_h100});
  const RunInput in = read_run(find_records_files({dir.string()}));
  ASSERT_EQ(in.table.ranks().size(), 2u);
  EXPECT_EQ(in.table.ranks()[0].gpu, "H100-SXM");
  EXPECT_EQ(in.table.ranks()[1].gpu, "A100-SXM");
  EXPECT_EQ(in.table.ranks()[1].rank, 0);
  EXPECT_EQ(in.table.ranks()[1].source, (dir / "records.0.jsonl").string() + " (A100-SXM)");
  ASSERT_EQ(in.table.size(), 3u);
  EXPECT_EQ(in.table.kernels()[0].rank_index, 0);
  EXPECT_EQ(in.table.kernels()[1].rank_index, 1);
  EXPECT_EQ(in.table.kernels()[2].rank_index, 0);
  EXPECT_EQ(in.table.own_target(0), 0u);
  EXPECT_EQ(in.table.own_target(1), 1u) << "the A100's kernel is compared with the A100";
  EXPECT_EQ(rank_gpus(summarize(in.table)), (std::vector<std::string>{"H100-SXM", "A100-SXM"}))
      << "what a report's heading names";

  // A process that ran only on its second device: one rank, its GPU's.
  const auto second = test::scratch_dir("records");
  write_records_file(second / "records.0.jsonl", header(0), {on_a100});
  const RunInput only = read_run(find_records_files({second.string()}));
  ASSERT_EQ(only.table.ranks().size(), 1u);
  EXPECT_EQ(only.table.ranks()[0].gpu, "A100-SXM");
  EXPECT_EQ(rank_gpus(summarize(only.table)), std::vector<std::string>{"A100-SXM"});
}

}  // namespace
}  // namespace pm2lat::reports
