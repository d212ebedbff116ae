// The fake driver's objects and global state. One mutex guards everything: this is test
// scaffolding, correctness and determinism matter, not speed.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "fake_gemm_law.h"
#include "fake_tool_interface.h"

namespace fake_cuda {

inline constexpr std::uint32_t kFunctionMagic = 0x464e4331;  // "FNC1"
inline constexpr std::uint32_t kKernelMagic = 0x4b524e31;    // "KRN1"
inline constexpr std::uint32_t kDeadMagic = 0xdeaddead;

// What a module image says about one kernel: its parameter sizes (when the image lists
// them) and its register count.
struct KernelDecl {
  std::string name;
  std::vector<std::size_t> param_sizes;
  bool params_known = false;
  int registers = 32;
  int static_smem = 0;
};

struct Module;

// Both CUfunction and CUkernel handles point at one of these; `magic` tells them apart,
// like the real driver which accepts a CUkernel cast to CUfunction in launches.
struct Function {
  std::uint32_t magic = kFunctionMagic;
  const char* name = nullptr;  // interned: stable for the process
  KernelDecl decl;
  Module* module = nullptr;
  Function* context_function = nullptr;  // for a CUkernel: its CUfunction in the context
};

struct Module {
  std::vector<KernelDecl> declared;
  std::vector<Function*> functions;
  bool is_library = false;
};

struct Node {
  std::uint64_t id = 0;
  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_KERNEL;
  const char* name = nullptr;
  std::uint32_t grid[3] = {1, 1, 1};
  std::uint32_t block[3] = {1, 1, 1};
  std::uint32_t cluster[3] = {1, 1, 1};
  std::uint32_t smem = 0;
  int registers = 0;
  int static_smem = 0;
  bool has_gemm_work = false;  // captured from the launch's Params (fake_gemm_law.h)
  fake_sim::GemmWork gemm_work;
  Node* original = nullptr;  // for a node of an executable graph: the node it was cloned from
};

struct Graph {
  std::uint32_t id = 0;
  std::vector<Node*> nodes;
};

struct GraphExec {
  std::uint32_t graph_id = 0;
  std::vector<Node*> nodes;  // clones, in launch order
};

struct Stream {
  std::uint32_t id = 0;
  // The device of the context it was created in; -1 for the default streams, whose work runs
  // on the device of the context current where it is launched.
  int device = -1;
  std::uint64_t ready_ns = 0;  // simulated time when the last queued work finishes
  bool capturing = false;
  bool capture_invalidated = false;
  CUstreamCaptureMode capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  std::uint64_t capture_thread = 0;  // capture_thread_id() of the thread that began it
  std::uint64_t capture_id = 0;
  Graph* capture_graph = nullptr;
  CUgraphNode last_node = nullptr;
};

struct Event {
  std::uint64_t time_ns = 0;
  bool recorded = false;
  // The device of the context current at its creation: it may be recorded only on that
  // context's streams (cuda.h, cuEventRecord: CUDA_ERROR_INVALID_HANDLE otherwise).
  int device = 0;
};

struct KernelStats {
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
};

struct State {
  std::mutex mu;
  bool initialized = false;
  std::atomic<const FakeToolCallbacks*> tool{nullptr};
  std::atomic<std::uint32_t> next_correlation{1};
  std::uint64_t device_ready_ns = 0;
  std::uint32_t next_stream_id = 13;
  std::uint32_t next_graph_id = 1;
  std::uint64_t next_node_id = 1;
  std::uint64_t next_capture_id = 1;
  Stream default_stream;
  std::set<Stream*> capturing;            // streams with a capture in progress
  std::set<std::string> names;            // interned kernel names
  std::vector<Function*> free_functions;  // recycled handles (so unloads reuse addresses)
  std::map<const char*, KernelStats> stats;
  std::uint64_t launches = 0;
  std::atomic<std::uint64_t> events_created{0};
  std::map<std::string, std::uint64_t> misuse;  // calls of cuFunc*/cuKernel* on the other kind
  std::vector<std::string> exec_log;            // FAKE_CUDA_LOG_KERNELS=1
  bool log_kernels = false;
  std::string log_path;
  std::uint64_t max_backlog_ns = 2'000'000;
};

State& state();
// The CUDA version this driver implements: FAKE_CUDA_DRIVER_VERSION (e.g. 12020 for an r535
// driver), 13000 by default.
int driver_version();
const char* intern(const std::string& name);
std::uint64_t now_ns();

// Resolves the NULL / legacy / per-thread handles to the default stream.
Stream* resolve_stream(CUstream stream);

// Stream capture modes (cuda.h, CUstreamCaptureMode): a "potentially unsafe" call (queries,
// synchronisation) from a thread whose own mode is not RELAXED, while a GLOBAL capture runs in
// any thread or a THREAD_LOCAL one in this thread, fails and invalidates those captures.
// Returns CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED then, else CUDA_SUCCESS. Caller holds the lock.
CUresult check_capture_safety_locked(State& s);
std::uint64_t capture_thread_id();
CUstreamCaptureMode& thread_capture_mode();

// Parses a module image: "FAKECUBIN\n" followed by lines
// "name[:size,size,...][:regs=N][:smem=N]". Anything else (a real fatbin) declares nothing;
// kernels are then created on demand by name.
std::vector<KernelDecl> parse_module_image(const void* image);

Function* new_function(const KernelDecl& decl, Module* module, std::uint32_t magic);
void free_function(Function* f);
// Validates a handle passed as CUfunction (a CUfunction or a CUkernel cast to one).
Function* launchable(CUfunction f);

struct LaunchSpec {
  Function* function = nullptr;
  std::uint32_t grid[3] = {1, 1, 1};
  std::uint32_t block[3] = {1, 1, 1};
  std::uint32_t cluster[3] = {1, 1, 1};
  std::uint32_t smem = 0;
  CUstream stream = nullptr;
  std::uint8_t cooperative = 0;  // FakeKernelExecution::cooperative
  void** kernel_params = nullptr;
  bool has_gemm_work = false;  // the first argument describes a GEMM (fake_gemm_law.h)
  fake_sim::GemmWork gemm_work;
};

// Notifies the tool of an API call around `body` and returns its result.
template <typename Body>
CUresult with_api_callbacks(int cbid, const char* fname, const void* params, const char* symbol,
                            std::uint32_t* correlation_out, Body&& body);

// The device of the calling thread's current context (0 without one).
int current_device();

// Executes or captures one launch (called with the lock not held).
CUresult launch(const LaunchSpec& spec, std::uint32_t correlation);
// Runs one memory copy (`memset` false, `copy_kind` a CUpti_ActivityMemcpyKind) or memset of
// `bytes` on the simulated device after the work queued on `stream`, and tells the tool
// (called with the lock not held; the caller has checked the stream may take it). Returns
// the simulated time it ends, which a synchronous copy waits for.
std::uint64_t transfer(CUstream stream, bool memset, std::uint8_t copy_kind, std::uint64_t bytes,
                       std::uint32_t correlation);
// Replays a graph executable on a stream.
CUresult replay(GraphExec* exec, CUstream stream, std::uint32_t correlation);

void notify_graph_event(const FakeGraphEvent& e);
void log_exit_handler();

template <typename Body>
CUresult with_api_callbacks(int cbid, const char* fname, const void* params, const char* symbol,
                            std::uint32_t* correlation_out, Body&& body) {
  const FakeToolCallbacks* tool = state().tool.load(std::memory_order_acquire);
  std::uint32_t corr = state().next_correlation.fetch_add(1, std::memory_order_relaxed);
  if (correlation_out != nullptr) *correlation_out = corr;
  if (tool == nullptr || tool->api == nullptr) return body(corr);
  std::uint64_t corr_data = 0;
  CUresult result = CUDA_SUCCESS;
  FakeApiEvent ev{0, cbid, fname, params, symbol, nullptr, 1, corr, &corr_data, &result};
  tool->api(&ev);
  result = body(corr);
  ev.site = 1;
  tool->api(&ev);
  return result;
}

}  // namespace fake_cuda
