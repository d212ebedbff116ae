#include "pm2lat/reports/runtime_summaries.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

// Each process writes its summary beside its records; the summaries of the records read are
// summed, and a summary that is missing, cut short or not the runtime's adds nothing.
TEST(RuntimeSummaries, TheSummariesBesideTheRecordsReadAreSummed) {
  const std::filesystem::path dir = test::scratch_dir("summaries");
  test::write_text(dir / "summary.0.json",
                   R"({"schema":"pm2lat.summary","transfers":[)"
                   R"({"kind":"host_to_device","count":2,"bytes":8,"measured_ms":0.5},)"
                   R"({"kind":"memset","count":1,"bytes":4,"measured_ms":0.25}],)"
                   R"("counters":{"dropped":3,"cupti_dropped":0,"timing_lost":1}})");
  test::write_text(dir / "summary.1.json",
                   R"({"schema":"pm2lat.summary","transfers":[)"
                   R"({"kind":"device_to_host","count":1,"bytes":8,"measured_ms":1.0}],)"
                   R"("counters":{"dropped":2,"cupti_dropped":5}})");
  test::write_text(dir / "summary.2.json", R"({"schema":"pm2lat.summary","trans)");
  test::write_text(dir / "summary.3.json", R"({"schema":"something.else","transfers":[)"
                                           R"({"kind":"memset","count":9,"measured_ms":9}],)"
                                           R"("counters":{"dropped":9}})");
  // A records file named by the user: its summary is <stem>.summary.json.
  test::write_text(dir / "step.summary.json",
                   R"({"schema":"pm2lat.summary","transfers":[)"
                   R"({"kind":"device_to_device","count":4,"bytes":8,"measured_ms":0.5}]})");
  std::vector<std::filesystem::path> records;
  for (const char* r : {"records.0.jsonl", "records.1.jsonl", "records.2.jsonl", "records.3.jsonl",
                        "records.4.jsonl", "step.jsonl"})
    records.push_back(dir / r);
  const RuntimeSummaries s = read_runtime_summaries(records);
  EXPECT_EQ(s.transfers.copies, 7u);
  EXPECT_DOUBLE_EQ(s.transfers.copy_us, 2000.0);
  EXPECT_EQ(s.transfers.memsets, 1u);
  EXPECT_DOUBLE_EQ(s.transfers.memset_us, 250.0);
  EXPECT_EQ(s.lost.dropped, 5u);
  EXPECT_EQ(s.lost.cupti_dropped, 5u);
  EXPECT_EQ(s.lost.timing_lost, 1u);
  // Only the records read count: rank 1's summary is not rank 0's.
  const RuntimeSummaries rank0 = read_runtime_summaries({dir / "records.0.jsonl"});
  EXPECT_EQ(rank0.transfers.copies, 2u);
  EXPECT_EQ(rank0.lost.dropped, 3u);
  const RuntimeSummaries none = read_runtime_summaries({});
  EXPECT_FALSE(none.transfers.any());
  EXPECT_FALSE(none.lost.any());
}

// What the records lack is said, cause by cause; nothing when nothing was lost.
TEST(RuntimeSummaries, TheNotesSayTheTransfersAndEachCauseOfLostLaunches) {
  RuntimeSummaries s;
  EXPECT_TRUE(runtime_summary_notes(s, 1000).empty());
  s.lost.dropped = 12;
  s.lost.timing_lost = 2;
  EXPECT_EQ(lost_launches_note(s.lost),
            "lost: 12 launches not recorded (a launching thread's ring was full), 2 launches whose "
            "measurement never came");
  s.transfers.copies = 1;
  s.transfers.copy_us = 1000;
  const std::vector<std::string> notes = runtime_summary_notes(s, 1000);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0],
            "not forecast: the GPU's memory copies (1, 1.000 ms) and memsets (0, 0.000 ms) besides "
            "its kernels, 50.0 % of the GPU time measured");
  EXPECT_EQ(notes[1], lost_launches_note(s.lost));
}

}  // namespace
}  // namespace pm2lat::reports
