// The shim's life cycle inside someone else's process: programs that never use CUDA are
// untouched; records are flushed when the program exits without synchronising or dies of
// SIGTERM, with the exit status unchanged; fork children start clean.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "run_program.h"

namespace pm2lat::test {
namespace {

std::map<std::string, int> count_by_name(const Records& r) {
  std::map<std::string, int> m;
  for (const auto& k : r.kernels) ++m[k.at("name").get<std::string>()];
  return m;
}

std::vector<std::string> records_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& f : list_dir(dir)) {
    if (f.rfind("records", 0) == 0 && f.size() > 6 && f.compare(f.size() - 6, 6, ".jsonl") == 0) {
      out.push_back(f);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Lifecycle, ProgramsThatNeverUseCudaAreUntouched) {
  const RunResult t = run({{"/bin/true"}, {}});
  EXPECT_EQ(t.exit_code, 0);
  EXPECT_EQ(t.err, "");
  EXPECT_TRUE(records_files(t.dir).empty());
  EXPECT_FALSE(file_exists(t.dir + "/summary.json"));

  const RunResult sh = run({{"/bin/sh", "-c", "echo hello; echo oops >&2; exit 3"}, {}});
  EXPECT_EQ(sh.exit_code, 3);
  EXPECT_EQ(sh.out, "hello\n");
  EXPECT_EQ(sh.err, "oops\n");
  EXPECT_TRUE(records_files(sh.dir).empty());
}

TEST(Lifecycle, ExitWithoutSynchronisingStillWritesEveryRecord) {
  const RunResult r = run({{program("lifecycle"), "exit", "25"}, {}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  ASSERT_EQ(records.kernels.size(), 25u);
  for (const auto& k : records.kernels) EXPECT_TRUE(k.at("measured_us").is_number()) << k.dump();
  EXPECT_TRUE(file_exists(r.dir + "/summary.json"));
}

TEST(Lifecycle, TheProgramsExitCodeIsKept) {
  const RunResult r = run({{program("lifecycle"), "exit-code", "5"}, {}});
  EXPECT_EQ(r.exit_code, 42) << r.err;
  EXPECT_EQ(read_records(r.dir + "/records.jsonl").kernels.size(), 5u);
}

TEST(Lifecycle, SigtermFlushesRecordsAndTheProgramStillDiesOfSigterm) {
  const RunResult r = run({{program("lifecycle"), "sigterm", "30"}, {}});
  EXPECT_EQ(r.signal, SIGTERM) << "exit " << r.exit_code << " " << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  EXPECT_EQ(records.kernels.size(), 30u);
  EXPECT_TRUE(file_exists(r.dir + "/summary.json"));
}

TEST(Lifecycle, ASigtermBeforeTheProfilesLoadStillWritesTheRecordsWithoutPredictions) {
  // A profile directory whose catalogue is a FIFO nobody writes: loading blocks for ever,
  // as a slow file system or a starved CPU would make it take longer than the signal allows.
  const std::string profiles = scratch_dir();
  ASSERT_EQ(::mkfifo((profiles + "/devices.json").c_str(), 0600), 0);

  const RunResult r =
      run({{program("lifecycle"), "sigterm", "30"}, {{"PM2LAT_PROFILES", profiles}}});
  EXPECT_EQ(r.signal, SIGTERM) << "exit " << r.exit_code << " " << r.err;
  const Records records = read_records(r.dir + "/records.jsonl");
  ASSERT_EQ(records.kernels.size(), 30u);
  for (const auto& k : records.kernels) {
    EXPECT_TRUE(k.at("measured_us").is_number()) << k.dump();
    EXPECT_TRUE(k.value("predicted_us", nlohmann::json::object()).empty()) << k.dump();
  }
  const auto summary = nlohmann::json::parse(read_file(r.dir + "/summary.json"));
  bool warned = false;
  for (const auto& w : summary.at("warnings")) {
    warned |= w.get<std::string>().find("before the profiles loaded") != std::string::npos;
  }
  EXPECT_TRUE(warned) << summary.dump();
}

// Forking while another thread allocates is fine with glibc's malloc, not with the allocator
// of this compiler's AddressSanitizer: sanitized runs let the parent settle first.
std::map<std::string, std::string> fork_env() {
#ifdef PM2LAT_TEST_UNDER_SANITIZER
  return {{"LIFECYCLE_FORK_AFTER_FILE", "records.jsonl"}};
#else
  return {};
#endif
}

TEST(Lifecycle, AChildThatNeverUsesCudaIsUntouchedAndTheParentKeepsRecording) {
  const RunResult r = run({{program("lifecycle"), "fork-no-cuda", "10"}, fork_env()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("child exit 7"), std::string::npos) << r.out;
  EXPECT_EQ(records_files(r.dir), (std::vector<std::string>{"records.jsonl"}));
  const auto counts = count_by_name(read_records(r.dir + "/records.jsonl"));
  EXPECT_EQ(counts, (std::map<std::string, int>{{"parent_before", 10}, {"parent_after", 10}}));
}

TEST(Lifecycle, AChildThatUsesCudaStartsCleanInItsOwnFile) {
#ifdef PM2LAT_TEST_UNDER_TSAN
  // ThreadSanitizer keeps the parent's threads in the child's registry and aborts when a new
  // thread reuses one's id ("dup thread with used id"): it cannot follow a child that starts
  // threads after a multithreaded fork. The other builds run this test.
  GTEST_SKIP() << "ThreadSanitizer does not support threads started after a multithreaded fork";
#endif
  const RunResult r = run({{program("lifecycle"), "fork-cuda", "10"}, fork_env()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("child exit 0"), std::string::npos) << r.out;
  const auto files = records_files(r.dir);
  ASSERT_EQ(files.size(), 2u) << ::testing::PrintToString(files);
  const auto parent = count_by_name(read_records(r.dir + "/records.jsonl"));
  EXPECT_EQ(parent, (std::map<std::string, int>{{"parent_before", 10}, {"parent_after", 10}}));
  const std::string child_file = files[0] == "records.jsonl" ? files[1] : files[0];
  const Records child = read_records(r.dir + "/" + child_file);
  EXPECT_EQ(count_by_name(child), (std::map<std::string, int>{{"child_kernel", 5}}));
  EXPECT_NE(child.header.at("pid"), read_records(r.dir + "/records.jsonl").header.at("pid"));
}

TEST(Lifecycle, ForkBeforeCudaInitialisationGivesEachProcessItsOwnRecords) {
  const RunResult r = run({{program("lifecycle"), "fork-before-init", "8"}, {}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto files = records_files(r.dir);
  ASSERT_EQ(files.size(), 2u) << ::testing::PrintToString(files);
  std::map<std::string, int> all;
  for (const auto& f : files) {
    const auto c = count_by_name(read_records(r.dir + "/" + f));
    ASSERT_EQ(c.size(), 1u) << f;  // each file holds one process's kernels only
    all.insert(c.begin(), c.end());
  }
  EXPECT_EQ(all, (std::map<std::string, int>{{"child_kernel", 8}, {"parent_after", 8}}));
}

TEST(Lifecycle, PmRunOutputDirectoryGetsOneRecordsFilePerProcess) {
  const std::string out = scratch_dir() + "/";
  const RunResult r =
      run({{program("lifecycle"), "exit", "4"}, {{"PM2LAT_OUT", out}, {"RANK", "3"}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_records(out + "records.3.jsonl").kernels.size(), 4u);
  EXPECT_TRUE(file_exists(out + "summary.3.json"));
  EXPECT_EQ(read_records(out + "records.3.jsonl").header.at("rank"), 3);
}

}  // namespace
}  // namespace pm2lat::test
