#include "run_program.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "pm2lat/test/scratch_cleaner.h"

namespace pm2lat::test {

std::string program(const std::string& name) {
  return std::string(PM2LAT_TEST_PROGRAM_DIR) + "/" + name;
}

std::string scratch_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string dir = std::string(base && *base ? base : "/tmp") + "/pm2lat-shim-test-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    throw std::runtime_error("cannot create a scratch directory: " +
                             std::string(std::strerror(errno)));
  }
  remove_when_test_passes(dir);
  return dir;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
        out.emplace_back(e->d_name);
    }
    ::closedir(d);
  }
  return out;
}

RunResult run(const RunOptions& options) {
  RunResult result;
  result.dir = scratch_dir();
  std::map<std::string, std::string> env;
  for (const char* var : {"PATH", "HOME", "LANG"}) {
    if (const char* v = std::getenv(var)) env[var] = v;
  }
  env["LD_LIBRARY_PATH"] = PM2LAT_FAKE_CUDA_DIR;
  env["PM2LAT_OUT"] = result.dir + "/records.jsonl";
  env["PM2LAT_SUMMARY"] = result.dir + "/summary.json";
  env["PM2LAT_TARGETS"] = "A100";
  env["PM2LAT_PROFILES"] = PM2LAT_TEST_PROFILE_DIR;
  env["FAKE_CUDA_LOG"] = result.dir + "/fake.log";
  env["FAKE_CUDA_LOG_KERNELS"] = "1";
  std::string preload;
  constexpr const char* kSanitizer = PM2LAT_TEST_SANITIZER_RUNTIME;  // "" when not sanitized
  if (*kSanitizer != '\0') {
    // The sanitizer runtime must be the first object loaded.
    preload = kSanitizer;
    env["ASAN_OPTIONS"] = "detect_leaks=0:verify_asan_link_order=0:abort_on_error=0:exitcode=66";
    // die_after_fork=0: a forked child that starts its own threads (the runtime does) is legal.
    env["TSAN_OPTIONS"] = "halt_on_error=1:exitcode=66:report_signal_unsafe=0:die_after_fork=0";
  }
  // PM2LAT_TEST_SHIM runs the tests against another build of the runtime (e.g. an older one,
  // to check that a test fails without the change it is about).
  const char* shim = std::getenv("PM2LAT_TEST_SHIM");
  if (options.preload_shim) {
    preload += (preload.empty() ? "" : ":") + std::string(shim && *shim ? shim : PM2LAT_SHIM_PATH);
  }
  if (!preload.empty()) env["LD_PRELOAD"] = preload;
  for (const auto& [k, v] : options.env) {
    if (v.empty()) {
      env.erase(k);
    } else {
      env[k] = v;
    }
  }
  std::vector<std::string> env_strings;
  env_strings.reserve(env.size());
  for (const auto& [k, v] : env) {
    std::string entry = k;
    entry += '=';
    entry += v;
    env_strings.push_back(std::move(entry));
  }
  std::vector<char*> envp;
  envp.reserve(env_strings.size() + 1);
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = options.argv;
  if (options.without_loader_cache) {
    // The dynamic loader run as a program: --inhibit-cache applies to every later dlopen.
    args.insert(args.begin(), {PM2LAT_TEST_DYNAMIC_LOADER, "--inhibit-cache"});
  }
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const std::string out_path = result.dir + "/stdout.txt";
  const std::string err_path = result.dir + "/stderr.txt";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addchdir_np(&actions, result.dir.c_str());
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(rc));

  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.timeout_s);
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      result.err = "timed out";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = read_file(out_path);
  result.err += read_file(err_path);
  return result;
}

Records read_records(const std::string& path) {
  Records r;
  std::ifstream in(path);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line);
    if (first) {
      r.header = std::move(j);
      first = false;
    } else {
      r.kernels.push_back(std::move(j));
    }
  }
  return r;
}

FakeLog read_fake_log(const std::string& path) {
  FakeLog log;
  std::ifstream in(path);
  std::string kind;
  while (in >> kind) {
    if (kind == "launches") {
      in >> log.launches;
    } else if (kind == "events_created") {
      in >> log.events_created;
    } else if (kind == "kernel") {
      std::string name;
      std::uint64_t count = 0, total = 0;
      in >> name >> count >> total;
      log.kernels[name] = {count, total};
    } else if (kind == "misuse") {
      std::string api;
      std::uint64_t n = 0;
      in >> api >> n;
      log.misuse[api] = n;
    } else if (kind == "exec") {
      FakeExecution e;
      in >> e.correlation >> e.name >> e.grid[0] >> e.grid[1] >> e.grid[2] >> e.block[0] >>
          e.block[1] >> e.block[2] >> e.start_ns >> e.end_ns >> e.graph_node;
      log.executions.push_back(e);
    } else {
      std::string rest;
      std::getline(in, rest);
    }
  }
  return log;
}

std::vector<std::string> notes_of(const nlohmann::json& record) {
  std::vector<std::string> out;
  if (auto rt = record.find("runtime"); rt != record.end()) {
    if (auto n = rt->find("notes"); n != rt->end()) {
      for (const auto& s : *n) out.push_back(s.get<std::string>());
    }
  }
  return out;
}

bool has_note(const nlohmann::json& record, const std::string& note) {
  return std::ranges::any_of(notes_of(record), [&](const std::string& n) { return n == note; });
}

}  // namespace pm2lat::test
