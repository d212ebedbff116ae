#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "pm2lat/calibrate/run/calibration_journal.h"
#include "scratch_directory.h"

namespace pm2lat::calibrate::run {
namespace {

namespace fs = std::filesystem;

fs::path journal_scratch(const std::string& name) { return test::scratch_file("journal-" + name); }

JournalIdentity journal_identity() {
  return JournalIdentity{"NVIDIA H100 80GB HBM3",
                         {{"driver_version", "13.0"}, {"cublaslt_version", "130000"}}};
}

TaskResult result(const std::string& id) {
  TaskResult r;
  r.task_id = id;
  r.kind = TaskKind::kMemory;
  r.memory_kernel.name = "pm2lat_copy_kernel_vec4";
  r.memory_timing.median_us = 3.25;
  return r;
}

TEST(CalibrationJournal, ReopeningResumesWhereItStopped) {
  const fs::path f = journal_scratch("resume.jsonl");
  {
    auto j = CalibrationJournal::open(f, journal_identity());
    EXPECT_TRUE(j.results().empty());
    j.append(result("a"));
    j.append(result("b"));
  }
  auto j = CalibrationJournal::open(f, journal_identity());
  ASSERT_EQ(j.results().size(), 2u);
  EXPECT_EQ(j.results()[1].task_id, "b");
  j.append(result("c"));
  const JournalContents c = read_journal(f);
  ASSERT_EQ(c.results.size(), 3u);
  EXPECT_EQ(c.identity.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(c.results[2].memory_timing.median_us, 3.25);
}

TEST(CalibrationJournal, ALineCutShortIsDroppedAndOverwritten) {
  const fs::path f = journal_scratch("cut.jsonl");
  {
    auto j = CalibrationJournal::open(f, journal_identity());
    j.append(result("a"));
  }
  {
    std::ofstream out(f, std::ios::app);
    out << R"({"task":"b","kind":"memory","wall_s":0.1,"kernel":{"na)";  // the process died
                                                                         // mid-write
  }
  auto j = CalibrationJournal::open(f, journal_identity());
  EXPECT_EQ(j.results().size(), 1u);
  EXPECT_EQ(j.dropped_lines(), 1u);
  j.append(result("b"));
  const JournalContents c = read_journal(f);
  ASSERT_EQ(c.results.size(), 2u);
  EXPECT_EQ(c.results[1].task_id, "b");
  EXPECT_EQ(c.dropped_lines, 0u);
}

TEST(CalibrationJournal, AnotherSetupIsRefusedUnlessRestarted) {
  const fs::path f = journal_scratch("other.jsonl");
  {
    auto j = CalibrationJournal::open(f, journal_identity());
    j.append(result("a"));
  }
  JournalIdentity other = journal_identity();
  other.versions["cublaslt_version"] = "130100";
  try {
    CalibrationJournal::open(f, other);
    FAIL() << "a journal of another cuBLASLt was accepted";
  } catch (const JournalError& e) {
    EXPECT_NE(std::string(e.what()).find("cublaslt_version"), std::string::npos) << e.what();
  }
  other = journal_identity();
  other.device = "NVIDIA A100-SXM4-80GB";
  EXPECT_THROW(CalibrationJournal::open(f, other), JournalError);
  auto j = CalibrationJournal::open(f, other, /*restart=*/true);
  EXPECT_TRUE(j.results().empty());
  EXPECT_EQ(read_journal(f).identity.device, "NVIDIA A100-SXM4-80GB");
}

TEST(CalibrationJournal, RefusesFilesThatAreNotJournals) {
  const fs::path f = journal_scratch("notajournal.jsonl");
  {
    std::ofstream out(f);
    out << R"({"schema":"pm2lat.profile","version":1})"
        << "\n";
  }
  EXPECT_THROW(CalibrationJournal::open(f, journal_identity()), JournalError);
}

}  // namespace
}  // namespace pm2lat::calibrate::run
