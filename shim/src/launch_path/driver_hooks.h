// The bodies of the driver interposers. Each takes the real entry point it stands in front
// of (the one the exported symbol shadows, or the one cuGetProcAddress/dlsym returned), so
// cuLaunchKernel and cuLaunchKernel_ptsz share one body and keep their own semantics.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include "launch_path/launch_slot.h"

namespace pm2lat::shim::hooks {

CUresult init(PFN_cuInit_v2000 real, unsigned int flags) noexcept;

CUresult launch_kernel(PFN_cuLaunchKernel_v4000 real, LaunchApi api, CUfunction f, unsigned int gx,
                       unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                       unsigned int bz, unsigned int smem, CUstream stream, void** params,
                       void** extra) noexcept;
CUresult launch_kernel_ex(PFN_cuLaunchKernelEx_v11060 real, LaunchApi api,
                          const CUlaunchConfig* config, CUfunction f, void** params,
                          void** extra) noexcept;
CUresult launch_cooperative(PFN_cuLaunchCooperativeKernel_v9000 real, LaunchApi api, CUfunction f,
                            unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                            unsigned int by, unsigned int bz, unsigned int smem, CUstream stream,
                            void** params) noexcept;
CUresult graph_launch(PFN_cuGraphLaunch_v10000 real, LaunchApi api, CUgraphExec exec,
                      CUstream stream) noexcept;

CUresult graph_instantiate_with_flags(PFN_cuGraphInstantiateWithFlags_v11040 real,
                                      CUgraphExec* exec, CUgraph graph,
                                      unsigned long long flags) noexcept;
CUresult graph_instantiate_with_params(PFN_cuGraphInstantiateWithParams_v12000 real,
                                       CUgraphExec* exec, CUgraph graph,
                                       CUDA_GRAPH_INSTANTIATE_PARAMS* params) noexcept;
CUresult graph_exec_destroy(PFN_cuGraphExecDestroy_v10000 real, CUgraphExec exec) noexcept;
CUresult graph_destroy(PFN_cuGraphDestroy_v10000 real, CUgraph graph) noexcept;

CUresult begin_capture(PFN_cuStreamBeginCapture_v10010 real, CUstream stream,
                       CUstreamCaptureMode mode) noexcept;
CUresult begin_capture_to_graph(PFN_cuStreamBeginCaptureToGraph_v12030 real, CUstream stream,
                                CUgraph graph, const CUgraphNode* deps,
                                const CUgraphEdgeData* edges, size_t n,
                                CUstreamCaptureMode mode) noexcept;
CUresult end_capture(PFN_cuStreamEndCapture_v10000 real, CUstream stream, CUgraph* graph) noexcept;

CUresult module_unload(PFN_cuModuleUnload_v2000 real, CUmodule module) noexcept;
CUresult library_unload(PFN_cuLibraryUnload_v12000 real, CUlibrary library) noexcept;

}  // namespace pm2lat::shim::hooks
