// Launches kernels on one stream and, while they run, captures another stream into a CUDA
// graph in global mode (torch.cuda.graph, torch.compile(mode="reduce-overhead")). Whatever a
// tool does meanwhile on its own threads must not invalidate the capture. Prints "capture ok".
// Usage: capture_while_timed <eager launches> <capture window ms>
#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "program_support.h"

using test_program::check;

int main(int argc, char** argv) {
  const int eager = test_program::arg_int(argc, argv, 1, 4);
  const int window_ms = test_program::arg_int(argc, argv, 2, 100);
  test_program::init_primary_context();
  const std::string image = test_program::module_image({"eager_busy_kernel", "captured_kernel"});
  CUmodule m = nullptr;
  check(cuModuleLoadData(&m, image.c_str()), "cuModuleLoadData");
  CUfunction busy = nullptr, captured = nullptr;
  check(cuModuleGetFunction(&busy, m, "eager_busy_kernel"), "get");
  check(cuModuleGetFunction(&captured, m, "captured_kernel"), "get");
  CUstream work = nullptr, graph_stream = nullptr;
  check(cuStreamCreate(&work, 0), "cuStreamCreate");
  check(cuStreamCreate(&graph_stream, 0), "cuStreamCreate");

  // About a millisecond each on the simulated GPU: still running when the capture begins.
  for (int i = 0; i < eager; ++i) {
    check(cuLaunchKernel(busy, 16384, 1, 1, 1024, 1, 1, 0, work, nullptr, nullptr), "eager");
  }
  check(cuStreamBeginCapture(graph_stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "begin capture");
  check(cuLaunchKernel(captured, 8, 1, 1, 128, 1, 1, 0, graph_stream, nullptr, nullptr),
        "capture launch");
  std::this_thread::sleep_for(std::chrono::milliseconds(window_ms));
  CUgraph graph = nullptr;
  check(cuStreamEndCapture(graph_stream, &graph), "end capture");
  CUgraphExec exec = nullptr;
  check(cuGraphInstantiate(&exec, graph, 0), "instantiate");
  check(cuGraphLaunch(exec, graph_stream), "graph launch");
  check(cuStreamSynchronize(graph_stream), "sync");
  check(cuStreamSynchronize(work), "sync");
  std::printf("capture ok\n");
  return 0;
}
