// Process life-cycle scenarios under the shim. Usage: lifecycle <scenario> [n]
//   exit             launch n kernels and exit(0) without synchronising
//   exit-code        launch n kernels and return 42
//   sigterm          launch n kernels and die of SIGTERM
//   fork-no-cuda     launch n, fork a child that never uses CUDA (exits 7), launch n more
//   fork-cuda        launch n, fork a child that launches its own kernels, launch n more
//   fork-before-init fork before CUDA is initialised; parent and child each launch n
// Kernel names say who launched them: parent_before, parent_after, child_kernel.
#include <cuda.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "program_support.h"

using test_program::check;

namespace {

void launch_n(const char* name, int n) {
  CUmodule m = nullptr;
  const std::string image = test_program::module_image({name});
  check(cuModuleLoadData(&m, image.c_str()), "cuModuleLoadData");
  CUfunction f = nullptr;
  check(cuModuleGetFunction(&f, m, name), "cuModuleGetFunction");
  for (int i = 0; i < n; ++i) {
    check(cuLaunchKernel(f, unsigned(i + 1), 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr), name);
  }
}

int wait_child(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// LIFECYCLE_FORK_AFTER_FILE=<path>: before forking, wait (up to a minute) until <path> has
// content, then a moment more. Sanitizer builds use it with the runtime's records file (written
// once its profiles have loaded) so that no thread of the parent is inside the sanitizer's
// allocator when it forks: that allocator is not fork-safe and the child could deadlock.
void settle_before_fork() {
  const char* path = std::getenv("LIFECYCLE_FORK_AFTER_FILE");
  if (path == nullptr) return;
  for (int i = 0; i < 6000; ++i) {
    struct stat st {};
    if (::stat(path, &st) == 0 && st.st_size > 0) break;
    ::usleep(10'000);
  }
  ::usleep(200'000);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string scenario = argv[1];
  const int n = test_program::arg_int(argc, argv, 2, 10);
  std::setvbuf(stdout, nullptr, _IONBF, 0);

  if (scenario == "fork-before-init") {
    const pid_t pid = fork();
    test_program::init_primary_context();
    launch_n(pid == 0 ? "child_kernel" : "parent_after", n);
    check(cuCtxSynchronize(), "sync");
    if (pid == 0) std::exit(0);
    std::printf("child exit %d\n", wait_child(pid));
    return 0;
  }

  test_program::init_primary_context();
  launch_n("parent_before", n);

  if (scenario == "exit") std::exit(0);
  if (scenario == "exit-code") return 42;
  if (scenario == "sigterm") {
    raise(SIGTERM);
    return 3;  // not reached
  }
  if (scenario == "fork-no-cuda" || scenario == "fork-cuda") {
    check(cuCtxSynchronize(), "sync");
    settle_before_fork();
    const pid_t pid = fork();
    if (pid == 0) {
      if (scenario == "fork-no-cuda") _exit(7);
      // A child that initialises CUDA itself (the fake driver allows it) starts afresh.
      test_program::init_primary_context();
      launch_n("child_kernel", n / 2);
      check(cuCtxSynchronize(), "sync");
      std::exit(0);
    }
    const int child = wait_child(pid);
    std::printf("child exit %d\n", child);
    launch_n("parent_after", n);
    check(cuCtxSynchronize(), "sync");
    return 0;
  }
  return 2;
}
