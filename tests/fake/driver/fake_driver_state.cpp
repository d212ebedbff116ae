// The fake driver's simulated device: kernel timing on one serial engine, stream capture,
// graph replay, handle bookkeeping and the ground-truth log tests compare against.
#include "fake_driver_state.h"

#include <pthread.h>
#include <time.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>
#include <thread>

#include "fake_sim.h"

namespace fake_cuda {

namespace {

State* g_state = nullptr;

void reset_in_child() {
  // A forked child starts with a fresh driver, as if the process had just started, so
  // tests can check that the shim also starts clean. The parent's objects are leaked.
  g_state = new State();
}

}  // namespace

State& state() {
  static const bool once = [] {
    g_state = new State();
    pthread_atfork(nullptr, nullptr, reset_in_child);
    return true;
  }();
  (void)once;
  return *g_state;
}

int driver_version() {
  static const int version = [] {
    const char* v = std::getenv("FAKE_CUDA_DRIVER_VERSION");
    return v != nullptr ? std::atoi(v) : 13000;
  }();
  return version;
}

const char* intern(const std::string& name) { return state().names.insert(name).first->c_str(); }

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000ull + std::uint64_t(ts.tv_nsec);
}

Stream* resolve_stream(CUstream stream) {
  if (stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) {
    return &state().default_stream;
  }
  return reinterpret_cast<Stream*>(stream);
}

std::uint64_t capture_thread_id() {
  static std::atomic<std::uint64_t> next{1};
  thread_local const std::uint64_t id = next.fetch_add(1);
  return id;
}

CUstreamCaptureMode& thread_capture_mode() {
  thread_local CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  return mode;
}

CUresult check_capture_safety_locked(State& s) {
  if (thread_capture_mode() == CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_SUCCESS;
  bool violated = false;
  for (Stream* st : s.capturing) {
    const bool conflicts = st->capture_mode == CU_STREAM_CAPTURE_MODE_GLOBAL ||
                           (st->capture_mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
                            st->capture_thread == capture_thread_id());
    if (!conflicts) continue;
    st->capture_invalidated = true;
    violated = true;
  }
  return violated ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

std::vector<KernelDecl> parse_module_image(const void* image) {
  std::vector<KernelDecl> out;
  if (image == nullptr) return out;
  const char* text = static_cast<const char*>(image);
  static constexpr char kHeader[] = "FAKECUBIN\n";
  if (std::strncmp(text, kHeader, sizeof(kHeader) - 1) != 0) return out;
  std::istringstream in(text + sizeof(kHeader) - 1);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    KernelDecl d;
    std::size_t colon = line.find(':');
    d.name = line.substr(0, colon);
    while (colon != std::string::npos) {
      std::size_t next = line.find(':', colon + 1);
      std::string field =
          line.substr(colon + 1, next == std::string::npos ? next : next - colon - 1);
      if (field.rfind("regs=", 0) == 0) {
        d.registers = std::atoi(field.c_str() + 5);
      } else if (field.rfind("smem=", 0) == 0) {
        d.static_smem = std::atoi(field.c_str() + 5);
      } else {
        d.params_known = true;
        std::istringstream sizes(field);
        std::string s;
        while (std::getline(sizes, s, ',')) {
          if (!s.empty()) d.param_sizes.push_back(std::strtoull(s.c_str(), nullptr, 10));
        }
      }
      colon = next;
    }
    out.push_back(std::move(d));
  }
  return out;
}

Function* new_function(const KernelDecl& decl, Module* module, std::uint32_t magic) {
  State& s = state();
  Function* f = nullptr;
  if (!s.free_functions.empty()) {
    f = s.free_functions.back();
    s.free_functions.pop_back();
    f->~Function();  // the unloaded function's declaration goes with it
    f = new (f) Function();
  } else {
    f = new Function();
  }
  f->magic = magic;
  f->decl = decl;
  f->name = intern(decl.name);
  f->module = module;
  return f;
}

void free_function(Function* f) {
  f->magic = kDeadMagic;
  state().free_functions.push_back(f);
}

Function* launchable(CUfunction handle) {
  auto* f = reinterpret_cast<Function*>(handle);
  if (f == nullptr) return nullptr;
  if (f->magic == kFunctionMagic) return f;
  if (f->magic == kKernelMagic) return f;  // a CUkernel cast to CUfunction
  return nullptr;
}

void notify_graph_event(const FakeGraphEvent& e) {
  const FakeToolCallbacks* tool = state().tool.load(std::memory_order_acquire);
  if (tool != nullptr && tool->graph_event != nullptr) tool->graph_event(&e);
}

namespace {

// Runs one kernel on the simulated engine. Caller holds the lock.
FakeKernelExecution execute_locked(State& s, Stream* stream, const char* name,
                                   const std::uint32_t grid[3], const std::uint32_t block[3],
                                   const std::uint32_t cluster[3], std::uint32_t smem,
                                   int registers, int static_smem, std::uint32_t correlation,
                                   std::uint64_t node_id, std::uint32_t graph_id,
                                   std::uint8_t cooperative, const fake_sim::GemmWork* gemm) {
  const int device = stream->device >= 0 ? stream->device : current_device();
  const std::uint64_t dur =
      gemm != nullptr
          ? fake_sim::gemm_duration_ns(name, grid, *gemm, fake_sim::device_model(device).sm_count)
          : fake_sim::kernel_duration_ns(name, grid[0], grid[1], grid[2], block[0], block[1],
                                         block[2]);
  const std::uint64_t now = now_ns();
  std::uint64_t start = now;
  if (s.device_ready_ns > start) start = s.device_ready_ns;
  if (stream->ready_ns > start) start = stream->ready_ns;
  const std::uint64_t end = start + dur;
  s.device_ready_ns = end;
  stream->ready_ns = end;
  KernelStats& st = s.stats[name];
  st.count++;
  st.total_ns += dur;
  s.launches++;
  if (s.log_kernels) {
    std::ostringstream line;
    line << "exec " << correlation << ' ' << name << ' ' << grid[0] << ' ' << grid[1] << ' '
         << grid[2] << ' ' << block[0] << ' ' << block[1] << ' ' << block[2] << ' ' << start << ' '
         << end << ' ' << node_id;
    s.exec_log.push_back(line.str());
  }
  FakeKernelExecution e{};
  e.name = name;
  std::memcpy(e.grid, grid, sizeof(e.grid));
  std::memcpy(e.block, block, sizeof(e.block));
  std::memcpy(e.cluster, cluster, sizeof(e.cluster));
  e.dynamic_smem = smem;
  e.static_smem = std::uint32_t(static_smem);
  e.registers = std::uint16_t(registers);
  e.start_ns = start;
  e.end_ns = end;
  e.device = static_cast<std::uint32_t>(device);
  e.context_id = 1;
  e.stream_id = stream->id;
  e.correlation_id = correlation;
  e.graph_node_id = node_id;
  e.graph_id = graph_id;
  e.cooperative = cooperative;
  return e;
}

// Like a real launch queue that is full, a launch blocks while the simulated device is too
// far behind the host. This is the back-pressure real programs feel from a busy GPU. The queue
// has two marks, as a driver's push buffer does: once it is full, launches wait until it has
// drained to a quarter, then go on without waiting until it is full again. (Waiting at a
// single mark would wake every launching thread for every kernel the device retires.)
std::atomic<bool> g_queue_full{false};

void throttle(std::uint64_t device_ready, std::uint64_t max_backlog) {
  const std::uint64_t now = now_ns();
  const std::uint64_t low = max_backlog / 4;
  if (device_ready > now + max_backlog) g_queue_full.store(true, std::memory_order_relaxed);
  if (!g_queue_full.load(std::memory_order_relaxed)) return;
  if (device_ready > now + low) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(device_ready - now - low));
  }
  g_queue_full.store(false, std::memory_order_relaxed);
}

// FAKE_CUDA_STALL_LAUNCH=N:MS: the N-th kernel the device runs (counted from 1) holds its
// launching thread MS milliseconds after its record is out, as a thread descheduled inside
// the driver call would be.
struct LaunchStall {
  std::uint64_t launch = 0;
  std::chrono::milliseconds length{0};
};

const LaunchStall& launch_stall() {
  static const LaunchStall stall = [] {
    LaunchStall st;
    const char* v = std::getenv("FAKE_CUDA_STALL_LAUNCH");
    if (v == nullptr) return st;
    char* end = nullptr;
    st.launch = std::strtoull(v, &end, 10);
    if (*end == ':') st.length = std::chrono::milliseconds(std::strtoull(end + 1, nullptr, 10));
    return st;
  }();
  return stall;
}

void deliver(const FakeKernelExecution& e) {
  const FakeToolCallbacks* tool = state().tool.load(std::memory_order_acquire);
  if (tool != nullptr && tool->kernel_executed != nullptr) tool->kernel_executed(&e);
}

}  // namespace

CUresult launch(const LaunchSpec& spec, std::uint32_t correlation) {
  State& s = state();
  Function* f = spec.function;
  Function* ctx_f = (f->magic == kKernelMagic && f->context_function) ? f->context_function : f;
  FakeKernelExecution exec{};
  bool executed = false;
  FakeGraphEvent created{};
  bool captured = false;
  std::uint64_t ready = 0;
  bool stall = false;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Stream* stream = resolve_stream(spec.stream);
    if (stream->capturing) {
      if (stream->capture_invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
      auto* node = new Node();
      node->id = s.next_node_id++;
      node->name = f->name;
      std::memcpy(node->grid, spec.grid, sizeof(node->grid));
      std::memcpy(node->block, spec.block, sizeof(node->block));
      std::memcpy(node->cluster, spec.cluster, sizeof(node->cluster));
      node->smem = spec.smem;
      node->registers = ctx_f->decl.registers;
      node->static_smem = ctx_f->decl.static_smem;
      node->has_gemm_work = spec.has_gemm_work;
      node->gemm_work = spec.gemm_work;
      stream->capture_graph->nodes.push_back(node);
      stream->last_node = reinterpret_cast<CUgraphNode>(node);
      created = FakeGraphEvent{13 /*CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED*/,
                               nullptr,
                               reinterpret_cast<CUgraph>(stream->capture_graph),
                               nullptr,
                               reinterpret_cast<CUgraphNode>(node),
                               nullptr,
                               CU_GRAPH_NODE_TYPE_KERNEL,
                               nullptr};
      captured = true;
    } else {
      exec = execute_locked(s, stream, f->name, spec.grid, spec.block, spec.cluster, spec.smem,
                            ctx_f->decl.registers, ctx_f->decl.static_smem, correlation, 0, 0,
                            spec.cooperative, spec.has_gemm_work ? &spec.gemm_work : nullptr);
      executed = true;
      ready = s.device_ready_ns;
      stall = launch_stall().launch != 0 && s.launches == launch_stall().launch;
    }
  }
  if (captured) notify_graph_event(created);
  if (executed) {
    deliver(exec);
    throttle(ready, s.max_backlog_ns);
    if (stall) std::this_thread::sleep_for(launch_stall().length);
  }
  return CUDA_SUCCESS;
}

std::uint64_t transfer(CUstream stream_handle, bool memset, std::uint8_t copy_kind,
                       std::uint64_t bytes, std::uint32_t correlation) {
  State& s = state();
  FakeTransferExecution e{};
  {
    std::lock_guard<std::mutex> lock(s.mu);
    Stream* stream = resolve_stream(stream_handle);
    // CUpti_ActivityMemcpyKind: only host-to-device (1) and device-to-host (2) copies cross the
    // host link.
    const bool host_link = !memset && (copy_kind == 1 || copy_kind == 2);
    const std::uint64_t dur = fake_sim::transfer_duration_ns(bytes, host_link);
    std::uint64_t start = now_ns();
    if (s.device_ready_ns > start) start = s.device_ready_ns;
    if (stream->ready_ns > start) start = stream->ready_ns;
    const std::uint64_t end = start + dur;
    s.device_ready_ns = end;
    stream->ready_ns = end;
    e.memset = memset ? 1 : 0;
    e.copy_kind = copy_kind;
    e.bytes = bytes;
    e.start_ns = start;
    e.end_ns = end;
    e.device = static_cast<std::uint32_t>(stream->device >= 0 ? stream->device : current_device());
    e.context_id = 1;
    e.stream_id = stream->id;
    e.correlation_id = correlation;
  }
  const FakeToolCallbacks* tool = s.tool.load(std::memory_order_acquire);
  if (tool != nullptr && tool->transfer_executed != nullptr) tool->transfer_executed(&e);
  return e.end_ns;
}

CUresult replay(GraphExec* exec, CUstream stream_handle, std::uint32_t correlation) {
  State& s = state();
  std::vector<FakeKernelExecution> done;
  std::uint64_t ready = 0;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
    Stream* stream = resolve_stream(stream_handle);
    if (stream->capturing) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    for (Node* n : exec->nodes) {
      done.push_back(execute_locked(s, stream, n->name, n->grid, n->block, n->cluster, n->smem,
                                    n->registers, n->static_smem, correlation, n->id,
                                    exec->graph_id, 0, n->has_gemm_work ? &n->gemm_work : nullptr));
    }
    ready = s.device_ready_ns;
  }
  for (const auto& e : done) deliver(e);
  throttle(ready, s.max_backlog_ns);
  return CUDA_SUCCESS;
}

void log_exit_handler() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.log_path.empty()) return;
  std::FILE* f = std::fopen(s.log_path.c_str(), "w");
  if (f == nullptr) return;
  std::fprintf(f, "launches %llu\n", static_cast<unsigned long long>(s.launches));
  std::fprintf(f, "events_created %llu\n",
               static_cast<unsigned long long>(s.events_created.load()));
  for (const auto& [name, st] : s.stats) {
    std::fprintf(f, "kernel %s %llu %llu\n", name, static_cast<unsigned long long>(st.count),
                 static_cast<unsigned long long>(st.total_ns));
  }
  for (const auto& [api, n] : s.misuse) {
    std::fprintf(f, "misuse %s %llu\n", api.c_str(), static_cast<unsigned long long>(n));
  }
  for (const auto& line : s.exec_log) std::fprintf(f, "%s\n", line.c_str());
  std::fclose(f);
}

}  // namespace fake_cuda
