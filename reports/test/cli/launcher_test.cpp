// `pm2lat run`, end to end with a fake program and a fake runtime library.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <thread>

#include "pm2lat/reports/cli/launcher.h"
#include "pm2lat/reports/input_file.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

const std::string kPm2lat = PM2LAT_BINARY;
const std::string kFakeProgram = PM2LAT_FAKE_PROGRAM;
const std::string kFakeRuntime = PM2LAT_FAKE_RUNTIME;

struct RunFixture : ::testing::Test {
  std::filesystem::path profiles = test::scratch_dir("profiles");
  std::filesystem::path out = test::scratch_dir("out");
  void SetUp() override { test::write_catalogue(profiles); }
  std::vector<std::string> command(std::vector<std::string> program_args,
                                   std::vector<std::string> options = {}) const {
    std::vector<std::string> argv = {kPm2lat,     "run",       "--profiles", profiles.string(),
                                     "--targets", "H100,A100", "--out",      out.string()};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back("--");
    argv.push_back(kFakeProgram);
    argv.insert(argv.end(), program_args.begin(), program_args.end());
    return argv;
  }
  // ASan checks its runtime is the first library loaded; a preloaded library (the point of
  // the launcher) comes before it, which is fine here.
  std::vector<std::string> env() const {
    return {"PM2LAT_LIB=" + kFakeRuntime, "ASAN_OPTIONS=verify_asan_link_order=0"};
  }
};

TEST_F(RunFixture, ConfiguresTheProgramAndPassesItsExitCodeOn) {
  const auto r = test::run_process(command({"exit", "3"}), env());
  EXPECT_FALSE(r.signaled);
  EXPECT_EQ(r.code, 3) << r.err;
  const std::string seen = test::read_text(out / "env.txt");
  EXPECT_NE(seen.find("PM2LAT_TARGETS=H100-SXM,A100-SXM\n"), std::string::npos) << seen;
  EXPECT_NE(
      seen.find("PM2LAT_OUT=" + std::filesystem::absolute(out).lexically_normal().string() + "\n"),
      std::string::npos)
      << seen;
  EXPECT_NE(seen.find("PM2LAT_MEASURE=<unset>\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("LD_PRELOAD=" + std::filesystem::weakly_canonical(kFakeRuntime).string()),
            std::string::npos)
      << seen;
  EXPECT_NE(seen.find("runtime_loaded=yes"), std::string::npos) << seen;
  // The summary of what the program recorded, and the report files.
  EXPECT_NE(r.out.find("accuracy on H100-SXM: 3 kernels"), std::string::npos) << r.out;
  // What the runtime's summary says the GPU did besides the kernels (0.1 ms beside 0.03 ms).
  EXPECT_NE(r.out.find("note: not forecast: the GPU's memory copies (2, 0.090 ms) and memsets "
                       "(1, 0.010 ms) besides its kernels, 76.9 % of the GPU time measured"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(std::filesystem::exists(out / "pm2lat-report.html"));
  EXPECT_TRUE(std::filesystem::exists(out / "pm2lat-report.trace.json"));
  EXPECT_TRUE(std::filesystem::exists(out / "pm2lat-report.csv"));
  EXPECT_NE(r.out.find((out / "pm2lat-report.html").string()), std::string::npos) << r.out;
}

TEST_F(RunFixture, NoMeasureIsPassedAndStaleSettingsAreReplaced) {
  const auto r =
      test::run_process(command({"exit", "0"}, {"--no-measure"}),
                        {"PM2LAT_LIB=" + kFakeRuntime, "ASAN_OPTIONS=verify_asan_link_order=0",
                         "PM2LAT_TARGETS=stale"});
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string seen = test::read_text(out / "env.txt");
  EXPECT_NE(seen.find("PM2LAT_MEASURE=0\n"), std::string::npos) << seen;
  EXPECT_NE(seen.find("PM2LAT_TARGETS=H100-SXM,A100-SXM\n"), std::string::npos)
      << "the launcher's value wins";
}

TEST_F(RunFixture, DeathBySignalIsPassedOn) {
  const auto r = test::run_process(command({"raise", std::to_string(SIGTERM)}), env());
  EXPECT_TRUE(r.signaled) << "exit code " << r.code << ": " << r.err;
  EXPECT_EQ(r.code, SIGTERM);
  EXPECT_NE(r.err.find("killed by signal 15"), std::string::npos) << r.err;
}

TEST_F(RunFixture, SignalsSentToTheLauncherReachTheProgram) {
  std::vector<std::string> argv = command({"wait"});
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    (void)!freopen("/dev/null", "w", stdout);  // the launcher's summary is not this test's subject
    setenv("PM2LAT_LIB", kFakeRuntime.c_str(), 1);
    setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
    execv(args[0], args.data());
    _exit(127);
  }
  // Wait until the program is up, then signal the launcher only.
  for (int i = 0; i < 1000 && !std::filesystem::exists(out / "ready"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(std::filesystem::exists(out / "ready"));
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 42) << "the program got SIGTERM and exited on its own terms";
  EXPECT_EQ(test::read_text(out / "got_signal"), "15\n");
}

TEST_F(RunFixture, BadTargetsAndMissingProgramsFailBeforeOrAtLaunch) {
  auto argv = command({"exit", "0"});
  argv[5] = "H100,Z9000";
  auto r = test::run_process(argv, env());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("unknown GPU 'Z9000'"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out / "env.txt")) << "the program must not start";

  argv = command({});
  argv.back() = "/nonexistent/program";
  r = test::run_process(argv, env());
  EXPECT_EQ(r.code, 127);
  EXPECT_NE(r.err.find("cannot run '/nonexistent/program'"), std::string::npos) << r.err;

  r = test::run_process(command({"exit", "0"}), {"PM2LAT_LIB=/nonexistent/libpm2lat.so",
                                                 "ASAN_OPTIONS=verify_asan_link_order=0"});
  if (!std::filesystem::exists(std::filesystem::path(kPm2lat).parent_path() /
                               "../shim/libpm2lat.so")) {
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.err.find("libpm2lat.so not found"), std::string::npos) << r.err;
  }
}

TEST_F(RunFixture, AnOutputDirectoryHoldingAnEarlierRunsRecordsIsRefused) {
  ASSERT_EQ(test::run_process(command({"exit", "0"}), env()).code, 0);
  ASSERT_TRUE(std::filesystem::remove(out / "env.txt"));
  const auto again = test::run_process(command({"exit", "0"}), env());
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("already holds the kernel records"), std::string::npos) << again.err;
  EXPECT_FALSE(std::filesystem::exists(out / "env.txt")) << "the program must not start";
}

TEST(Launcher, ChildEnvironmentPrependsThePreload) {
  LaunchConfig c;
  c.library = "/opt/pm2lat/lib/libpm2lat.so";
  c.targets = {"H100-SXM", "L4"};
  c.out_dir = "/runs/x";
  c.measure = false;
  const char* parent[] = {"PATH=/bin", "LD_PRELOAD=/usr/lib/libfoo.so", "PM2LAT_OUT=/old", nullptr};
  const auto env = child_environment(c, parent);
  auto has = [&](const std::string& kv) {
    return std::find(env.begin(), env.end(), kv) != env.end();
  };
  EXPECT_TRUE(has("PATH=/bin"));
  EXPECT_TRUE(has("LD_PRELOAD=/opt/pm2lat/lib/libpm2lat.so:/usr/lib/libfoo.so"));
  EXPECT_TRUE(has("PM2LAT_TARGETS=H100-SXM,L4"));
  EXPECT_TRUE(has("PM2LAT_OUT=/runs/x"));
  EXPECT_TRUE(has("PM2LAT_MEASURE=0"));
  EXPECT_FALSE(has("PM2LAT_OUT=/old"));
  // One summary, the run's, unless the user asked the runtime for its own.
  EXPECT_TRUE(has("PM2LAT_SUMMARY=none"));
  const char* asking[] = {"PM2LAT_SUMMARY=stderr", nullptr};
  const auto asked = child_environment(c, asking);
  EXPECT_NE(std::find(asked.begin(), asked.end(), "PM2LAT_SUMMARY=stderr"), asked.end());
  EXPECT_EQ(std::find(asked.begin(), asked.end(), "PM2LAT_SUMMARY=none"), asked.end());
}

TEST(Launcher, FindsTheLibraryFromTheEnvironmentOrNextToTheExecutable) {
  const auto dir = test::scratch_dir("lib");
  test::write_text(dir / "libpm2lat.so", "");
  setenv("PM2LAT_LIB", dir.c_str(), 1);
  EXPECT_EQ(find_runtime_library("/nowhere/bin"),
            std::filesystem::weakly_canonical(dir / "libpm2lat.so"));
  unsetenv("PM2LAT_LIB");
  EXPECT_EQ(find_runtime_library(dir), std::filesystem::weakly_canonical(dir / "libpm2lat.so"));
  EXPECT_THROW(find_runtime_library(test::scratch_dir("empty")), std::exception);
}

TEST(Launcher, RunsStartedInTheSameSecondGetDirectoriesOfTheirOwn) {
  const auto parent = test::scratch_dir("runs");
  std::set<std::filesystem::path> dirs;
  for (int i = 0; i < 3; ++i) {
    const std::filesystem::path d = create_fresh_out_dir(parent);
    EXPECT_TRUE(std::filesystem::is_directory(d)) << d;
    EXPECT_EQ(d.filename().string().rfind("pm2lat-", 0), 0u) << d;
    dirs.insert(d);
  }
  EXPECT_EQ(dirs.size(), 3u) << "three runs, three directories";
  EXPECT_THROW(create_fresh_out_dir(parent / "missing" / "deeper"), InputError);
}

}  // namespace
}  // namespace pm2lat::reports
