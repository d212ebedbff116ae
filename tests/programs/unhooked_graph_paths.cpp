// Launch paths the runtime has no hook for, whose kernels only CUPTI sees: a cooperative
// multi-device launch, a graph built node by node (cuGraphAddKernelNode), and a captured graph
// whose kernel node is changed in the executable (cuGraphExecKernelNodeSetParams).
// Usage: unhooked_graph_paths <replays>
#include <cuda.h>

#include <cstdio>
#include <string>

#include "program_support.h"

using test_program::check;

namespace {

CUDA_KERNEL_NODE_PARAMS kernel_node(CUfunction f, unsigned grid, unsigned block) {
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = f;
  p.gridDimX = grid;
  p.gridDimY = 1;
  p.gridDimZ = 1;
  p.blockDimX = block;
  p.blockDimY = 1;
  p.blockDimZ = 1;
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const int replays = test_program::arg_int(argc, argv, 1, 3);
  test_program::init_primary_context();
  const std::string image = test_program::module_image(
      {"multi_device_kernel", "explicit_node_kernel", "captured_then_updated_kernel"});
  CUmodule m = nullptr;
  check(cuModuleLoadData(&m, image.c_str()), "cuModuleLoadData");
  CUfunction multi = nullptr, explicit_node = nullptr, updated = nullptr;
  check(cuModuleGetFunction(&multi, m, "multi_device_kernel"), "get");
  check(cuModuleGetFunction(&explicit_node, m, "explicit_node_kernel"), "get");
  check(cuModuleGetFunction(&updated, m, "captured_then_updated_kernel"), "get");
  CUstream s = nullptr;
  check(cuStreamCreate(&s, 0), "cuStreamCreate");

  // 1. Cooperative launch on every device (deprecated in CUDA 13, still exported).
  CUDA_LAUNCH_PARAMS launch{};
  launch.function = multi;
  launch.gridDimX = 4;
  launch.gridDimY = launch.gridDimZ = 1;
  launch.blockDimX = 128;
  launch.blockDimY = launch.blockDimZ = 1;
  launch.hStream = s;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  check(cuLaunchCooperativeKernelMultiDevice(&launch, 1, 0), "multi-device launch");
#pragma GCC diagnostic pop

  // 2. A graph built node by node, replayed.
  CUgraph built = nullptr;
  check(cuGraphCreate(&built, 0), "cuGraphCreate");
  CUgraphNode node = nullptr;
  const CUDA_KERNEL_NODE_PARAMS explicit_params = kernel_node(explicit_node, 8, 64);
  check(cuGraphAddKernelNode(&node, built, nullptr, 0, &explicit_params), "add kernel node");
  CUgraphExec built_exec = nullptr;
  check(cuGraphInstantiate(&built_exec, built, 0), "instantiate");
  for (int i = 0; i < replays; ++i) check(cuGraphLaunch(built_exec, s), "graph launch");

  // 3. A captured graph replayed once, then its kernel node changed in the executable.
  CUstream capture = nullptr;
  check(cuStreamCreate(&capture, 0), "cuStreamCreate");
  check(cuStreamBeginCapture(capture, CU_STREAM_CAPTURE_MODE_GLOBAL), "begin capture");
  check(cuLaunchKernel(updated, 2, 1, 1, 32, 1, 1, 0, capture, nullptr, nullptr), "capture");
  CUgraph captured = nullptr;
  check(cuStreamEndCapture(capture, &captured), "end capture");
  CUgraphExec exec = nullptr;
  check(cuGraphInstantiate(&exec, captured, 0), "instantiate");
  check(cuGraphLaunch(exec, s), "graph launch");
  CUgraphNode captured_node = nullptr;
  size_t n = 1;
  check(cuGraphGetNodes(captured, &captured_node, &n), "cuGraphGetNodes");
  const CUDA_KERNEL_NODE_PARAMS bigger = kernel_node(updated, 16, 32);
  check(cuGraphExecKernelNodeSetParams(exec, captured_node, &bigger), "exec set params");
  for (int i = 0; i < replays; ++i) check(cuGraphLaunch(exec, s), "graph launch");
  check(cuStreamSynchronize(s), "sync");
  std::printf("replays %d\n", replays);
  return 0;
}
