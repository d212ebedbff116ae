#include "pm2lat/reports/gpu_transfers.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

TEST(GpuTransfers, TheNoteSaysCountsTimesAndTheirShareOfTheGpuTime) {
  GpuTransfers t;
  t.copies = 3;
  t.copy_us = 1500;
  t.memsets = 1;
  t.memset_us = 500;
  // 2 ms of transfers beside 2 ms of kernels: half the GPU's time.
  EXPECT_EQ(transfers_note(t, 2000, "the GPU time measured"),
            "not forecast: the GPU's memory copies (3, 1.500 ms) and memsets (1, 0.500 ms) "
            "besides its kernels, 50.0 % of the GPU time measured");
  // Kernels not measured (a run that only predicted): no share is claimed.
  EXPECT_EQ(transfers_note(t, 0, "the GPU time measured"),
            "not forecast: the GPU's memory copies (3, 1.500 ms) and memsets (1, 0.500 ms) "
            "besides its kernels");
  EXPECT_FALSE(GpuTransfers{}.any());
  EXPECT_TRUE(t.any());
}

// Each process writes its summary beside its records; the summaries of the records read are
// summed, and a summary that is missing, cut short or not the runtime's adds nothing.
TEST(GpuTransfers, TheSummariesBesideTheRecordsReadAreSummed) {
  const std::filesystem::path dir = test::scratch_dir("transfers");
  test::write_text(dir / "summary.0.json",
                   R"({"schema":"pm2lat.summary","transfers":[)"
                   R"({"kind":"host_to_device","count":2,"bytes":8,"measured_ms":0.5},)"
                   R"({"kind":"memset","count":1,"bytes":4,"measured_ms":0.25}]})");
  test::write_text(dir / "summary.1.json",
                   R"({"schema":"pm2lat.summary","transfers":[)"
                   R"({"kind":"device_to_host","count":1,"bytes":8,"measured_ms":1.0}]})");
  test::write_text(dir / "summary.2.json", R"({"schema":"pm2lat.summary","trans)");
  test::write_text(dir / "summary.3.json", R"({"schema":"something.else","transfers":[)"
                                           R"({"kind":"memset","count":9,"measured_ms":9}]})");
  // A records file named by the user: its summary is <stem>.summary.json.
  test::write_text(dir / "step.summary.json",
                   R"({"schema":"pm2lat.summary","transfers":[)"
                   R"({"kind":"device_to_device","count":4,"bytes":8,"measured_ms":0.5}]})");
  std::vector<std::filesystem::path> records;
  for (const char* r : {"records.0.jsonl", "records.1.jsonl", "records.2.jsonl", "records.3.jsonl",
                        "records.4.jsonl", "step.jsonl"})
    records.push_back(dir / r);
  const GpuTransfers t = summary_transfers(records);
  EXPECT_EQ(t.copies, 7u);
  EXPECT_DOUBLE_EQ(t.copy_us, 2000.0);
  EXPECT_EQ(t.memsets, 1u);
  EXPECT_DOUBLE_EQ(t.memset_us, 250.0);
  // Only the records read count: rank 1's summary is not rank 0's.
  const GpuTransfers rank0 = summary_transfers({dir / "records.0.jsonl"});
  EXPECT_EQ(rank0.copies, 2u);
  EXPECT_FALSE(summary_transfers({}).any());
}

}  // namespace
}  // namespace pm2lat::reports
