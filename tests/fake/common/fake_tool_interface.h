// The private channel between the fake driver and the fake CUPTI, standing in for the hooks
// NVIDIA's CUPTI has inside the real driver. The fake CUPTI resolves
// `fakecuda_attach_tool` from libcuda.so.1 and receives API enter/exit events, executed
// kernels and memory copies (with simulated timestamps) and resource events (graph nodes, modules).
#pragma once

#include <cuda.h>

#include <cstdint>

extern "C" {

struct FakeKernelExecution {
  const char* name;  // stable for the life of the process
  std::uint32_t grid[3];
  std::uint32_t block[3];
  std::uint32_t cluster[3];
  std::uint32_t dynamic_smem;
  std::uint32_t static_smem;
  std::uint16_t registers;
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint32_t device;
  std::uint32_t context_id;
  std::uint32_t stream_id;
  std::uint32_t correlation_id;
  std::uint64_t graph_node_id;  // 0 unless replayed from a graph
  std::uint32_t graph_id;
  std::uint8_t cooperative;  // 0: regular launch, 1: cooperative, 2: cooperative multi-device
};

// A memory copy or memset the simulated device ran (CUPTI's MEMCPY and MEMSET records).
struct FakeTransferExecution {
  std::uint8_t memset;     // 1: a memset, 0: a copy
  std::uint8_t copy_kind;  // CUpti_ActivityMemcpyKind of a copy
  std::uint64_t bytes;
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint32_t device;
  std::uint32_t context_id;
  std::uint32_t stream_id;
  std::uint32_t correlation_id;
};

struct FakeApiEvent {
  int site;  // 0 = enter, 1 = exit
  int cbid;  // CUpti_driver_api_trace_cbid
  const char* function_name;
  const void* params;       // the generated_cuda_meta.h params struct of the call
  const char* symbol_name;  // kernel name for launches, else null
  CUcontext context;
  std::uint32_t context_uid;
  std::uint32_t correlation_id;
  std::uint64_t* correlation_data;  // shared between enter and exit
  CUresult* return_value;           // valid at exit
};

struct FakeGraphEvent {
  int cbid;  // CUpti_CallbackIdResource
  CUcontext context;
  CUgraph graph;
  CUgraph original_graph;
  CUgraphNode node;
  CUgraphNode original_node;
  CUgraphNodeType node_type;
  CUgraphExec graph_exec;
};

struct FakeToolCallbacks {
  void (*api)(const FakeApiEvent* event);
  void (*kernel_executed)(const FakeKernelExecution* exec);
  void (*graph_event)(const FakeGraphEvent* event);
  void (*transfer_executed)(const FakeTransferExecution* exec);
};

// Attaches (or with null, detaches) the tool. Returns 0 on success.
int fakecuda_attach_tool(const FakeToolCallbacks* callbacks);
// Unique ids of graph objects, as cuptiGetGraphNodeId/cuptiGetGraphId report them.
std::uint64_t fakecuda_graph_node_id(CUgraphNode node);
std::uint32_t fakecuda_graph_id(CUgraph graph);

}  // extern "C"
