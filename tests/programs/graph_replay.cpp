// Captures three kernels into a CUDA graph, instantiates it, destroys the graph (keeping the
// executable, as frameworks often do) and replays it. Usage: graph_replay <replays>
#include <cuda.h>

#include <cstdio>
#include <string>

#include "program_support.h"

using test_program::check;

int main(int argc, char** argv) {
  const int replays = test_program::arg_int(argc, argv, 1, 1000);
  test_program::init_primary_context();
  const std::string image =
      test_program::module_image({"graph_gemm_like", "graph_elementwise:8,8,4", "graph_reduce"});
  CUmodule m = nullptr;
  check(cuModuleLoadData(&m, image.c_str()), "cuModuleLoadData");
  CUfunction gemm = nullptr, ew = nullptr, reduce = nullptr;
  check(cuModuleGetFunction(&gemm, m, "graph_gemm_like"), "get");
  check(cuModuleGetFunction(&ew, m, "graph_elementwise"), "get");
  check(cuModuleGetFunction(&reduce, m, "graph_reduce"), "get");
  CUstream s = nullptr;
  check(cuStreamCreate(&s, 0), "cuStreamCreate");

  // An eager launch before capture, to check capture does not disturb normal recording.
  check(cuLaunchKernel(reduce, 1, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr), "eager");

  check(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), "begin capture");
  CUdeviceptr a = 0, b = 0;
  check(cuMemAlloc(&a, 1024), "alloc");
  check(cuMemAlloc(&b, 1024), "alloc");
  int n = 1 << 20;
  void* args[] = {&a, &b, &n};
  check(cuLaunchKernel(gemm, 16, 8, 1, 256, 1, 1, 0, s, nullptr, nullptr), "capture gemm");
  check(cuLaunchKernel(ew, 1024, 1, 1, 256, 1, 1, 0, s, args, nullptr), "capture ew");
  check(cuLaunchKernel(reduce, 128, 1, 1, 512, 1, 1, 0, s, nullptr, nullptr), "capture reduce");
  CUgraph graph = nullptr;
  check(cuStreamEndCapture(s, &graph), "end capture");
  CUgraphExec exec = nullptr;
  check(cuGraphInstantiate(&exec, graph, 0), "instantiate");
  check(cuGraphDestroy(graph), "graph destroy");
  for (int i = 0; i < replays; ++i) check(cuGraphLaunch(exec, s), "graph launch");
  check(cuStreamSynchronize(s), "sync");
  check(cuGraphExecDestroy(exec), "exec destroy");
  std::printf("replays %d\n", replays);
  return 0;
}
