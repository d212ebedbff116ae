#include "pm2lat/reports/cli/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "pm2lat/reports/input_file.h"

namespace pm2lat::reports {
namespace {

constexpr const char* kLibraryName = "libpm2lat.so";

// The child a signal handler forwards to (0 = none running).
volatile sig_atomic_t g_child = 0;

void forward_signal(int sig, siginfo_t* info, void*) {
  // si_code <= 0: sent by a process (kill, sigqueue, tgkill) to the launcher alone. Signals
  // the kernel generates for the terminal (Ctrl-C) already went to the whole foreground
  // process group, the child included: forwarding those would deliver them twice.
  if (g_child > 0 && info != nullptr && info->si_code <= 0) kill(static_cast<pid_t>(g_child), sig);
}

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

}  // namespace

std::filesystem::path executable_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : exe.parent_path();
}

std::filesystem::path find_runtime_library(const std::filesystem::path& exe_dir) {
  std::vector<std::filesystem::path> candidates;
  if (const char* env = std::getenv("PM2LAT_LIB"); env != nullptr && *env != '\0') {
    const std::filesystem::path p(env);
    candidates.push_back(std::filesystem::is_directory(p) ? p / kLibraryName : p);
  }
  candidates.push_back(exe_dir / kLibraryName);
  candidates.push_back(exe_dir / ".." / "lib" / kLibraryName);
  candidates.push_back(exe_dir / ".." / "lib" / "pm2lat" / kLibraryName);
  candidates.push_back(exe_dir / ".." / "shim" / kLibraryName);
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) return std::filesystem::weakly_canonical(c, ec);
  }
  std::string looked;
  for (const auto& c : candidates) looked += "\n  " + c.lexically_normal().string();
  throw InputError(std::string(kLibraryName) +
                   " not found; set PM2LAT_LIB to its path. Looked in:" + looked);
}

std::filesystem::path create_fresh_out_dir(const std::filesystem::path& parent) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "pm2lat-%Y%m%d-%H%M%S", &tm);
  // More runs than this started in one second in one directory is not a user at work.
  constexpr int kMostRunsPerSecond = 1000;
  for (int n = 1; n <= kMostRunsPerSecond; ++n) {
    std::filesystem::path dir =
        parent / (n == 1 ? std::string(buf) : std::string(buf) + "-" + std::to_string(n));
    std::error_code ec;
    if (std::filesystem::create_directory(dir, ec)) return dir;
    if (ec) throw InputError(dir.string() + ": cannot create directory: " + ec.message());
  }
  throw InputError((parent / buf).string() + ": " + std::to_string(kMostRunsPerSecond) +
                   " runs of this second already have a directory");
}

std::vector<std::string> child_environment(const LaunchConfig& c, const char* const* parent_env) {
  std::vector<std::string> env;
  std::string preload;
  auto ours = [](std::string_view kv) {
    constexpr std::string_view kOurs[] = {
        "LD_PRELOAD=", "PM2LAT_TARGETS=", "PM2LAT_OUT=", "PM2LAT_MEASURE=", "PM2LAT_PROFILES="};
    return std::ranges::any_of(kOurs, [kv](std::string_view k) { return kv.starts_with(k); });
  };
  bool summary_asked = false;
  for (const char* const* e = parent_env; e != nullptr && *e != nullptr; ++e) {
    const std::string_view kv(*e);
    if (kv.rfind("LD_PRELOAD=", 0) == 0) preload = std::string(kv.substr(11));
    summary_asked |= kv.starts_with("PM2LAT_SUMMARY=");
    if (!ours(kv)) env.emplace_back(kv);
  }
  // ld.so takes spaces or colons between preloads; ours goes first so it sees every library
  // the program loads.
  std::string joined = c.library.string();
  if (!preload.empty()) joined += ":" + preload;
  env.push_back("LD_PRELOAD=" + joined);
  std::string targets;
  for (const auto& t : c.targets) targets += (targets.empty() ? "" : ",") + t;
  env.push_back("PM2LAT_TARGETS=" + targets);
  env.push_back("PM2LAT_OUT=" + c.out_dir.string());
  if (!c.measure) env.push_back("PM2LAT_MEASURE=0");
  if (!c.profiles.empty()) env.push_back("PM2LAT_PROFILES=" + c.profiles);
  // The run's summary, printed once the program exits, says what the runtime's own table on
  // stderr would (from the same records and the summary file the runtime writes beside them
  // in any case): one summary, unless the user asked the runtime for its own.
  if (!summary_asked) env.emplace_back("PM2LAT_SUMMARY=none");
  return env;
}

ChildStatus run_child(const std::vector<std::string>& command,
                      const std::vector<std::string>& env) {
  if (command.empty()) throw InputError("no command to run (give it after '--')");
  std::vector<char*> argv, envp;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  // Handlers go in before the fork so no signal slips between the child's start and them.
  struct sigaction forward {
  }, previous[sizeof(kForwarded) / sizeof(int)];
  forward.sa_sigaction = forward_signal;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  for (std::size_t i = 0; i < sizeof(kForwarded) / sizeof(int); ++i)
    sigaction(kForwarded[i], &forward, &previous[i]);
  auto restore = [&] {
    g_child = 0;
    for (std::size_t i = 0; i < sizeof(kForwarded) / sizeof(int); ++i)
      sigaction(kForwarded[i], &previous[i], nullptr);
  };

  // Held until g_child names the child: a signal that arrives while the child starts (it may
  // run, and be signalled through the launcher, before fork returns here) is forwarded once
  // the launcher knows whom to, not dropped.
  sigset_t forwarded, unblocked;
  sigemptyset(&forwarded);
  for (int sig : kForwarded) sigaddset(&forwarded, sig);
  pthread_sigmask(SIG_BLOCK, &forwarded, &unblocked);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    pthread_sigmask(SIG_SETMASK, &unblocked, nullptr);
    restore();
    throw std::runtime_error(std::string("cannot start the program: fork failed: ") +
                             std::strerror(err));
  }
  if (pid == 0) {
    // The child takes the default dispositions back before becoming the program.
    for (std::size_t i = 0; i < sizeof(kForwarded) / sizeof(int); ++i)
      sigaction(kForwarded[i], &previous[i], nullptr);
    sigprocmask(SIG_SETMASK, &unblocked, nullptr);
    execvpe(argv[0], argv.data(), envp.data());
    const int err = errno;
    const char* what = std::strerror(err);
    // Only async-signal-safe calls between fork and _exit.
    (void)!write(STDERR_FILENO, "pm2lat: cannot run '", 20);
    (void)!write(STDERR_FILENO, argv[0], std::strlen(argv[0]));
    (void)!write(STDERR_FILENO, "': ", 3);
    (void)!write(STDERR_FILENO, what, std::strlen(what));
    (void)!write(STDERR_FILENO, "\n", 1);
    _exit(err == ENOENT ? 127 : 126);
  }
  g_child = pid;
  pthread_sigmask(SIG_SETMASK, &unblocked, nullptr);
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, 0);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      const int err = errno;
      restore();
      throw std::runtime_error(std::string("waiting for the program failed: ") +
                               std::strerror(err));
    }
  }
  restore();
  ChildStatus s;
  if (WIFSIGNALED(status)) {
    s.signaled = true;
    s.code = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    s.code = WEXITSTATUS(status);
  }
  return s;
}

int exit_like(const ChildStatus& s) {
  if (!s.signaled) return s.code;
  std::fflush(nullptr);
  // Die the same death so the caller (a shell, torchrun, Slurm) sees the signal, not a code;
  // without a core file of our own (the program's crash is not the launcher's).
  struct rlimit no_core {
    0, 0
  };
  setrlimit(RLIMIT_CORE, &no_core);
  signal(s.code, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, s.code);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(s.code);
  return 128 + s.code;  // the signal's default action does not terminate (e.g. SIGCHLD)
}

}  // namespace pm2lat::reports
