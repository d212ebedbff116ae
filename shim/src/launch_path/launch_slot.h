// The fixed-size record the launch path writes into a per-thread ring: everything the worker
// needs to build a kernel record later, as plain data (no pointers it would have to chase,
// no allocation). Also carries the few non-launch events the worker must see in launch
// order (graph instantiation, destruction, node clones).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "pm2lat/op_context.h"

namespace pm2lat::shim {

enum class SlotKind : std::uint8_t {
  kKernel = 0,
  kGraphLaunch,         // graph_exec + stream
  kGraphInstantiate,    // graph -> graph_exec
  kGraphExecDestroy,    // graph_exec
  kGraphDestroy,        // graph
  kGraphNodeCloned,     // graph_node (original) -> graph_exec (used as the clone id)
  kGraphNodeDestroyed,  // graph_node
  kLibraryCall,         // op: a library call's context, before the kernels it launches
};

// The API a launch came through: the driver entry point, and, when a runtime call led to it,
// the runtime entry point (LaunchSlot::runtime_api).
enum class LaunchApi : std::uint8_t {
  kUnknown = 0,
  kCuLaunchKernel,
  kCuLaunchKernelPtsz,
  kCuLaunchKernelEx,
  kCuLaunchKernelExPtsz,
  kCuLaunchCooperativeKernel,
  kCuLaunchCooperativeKernelPtsz,
  kCuGraphLaunch,
  kCuGraphLaunchPtsz,
  kCudaLaunchKernel,
  kCudaLaunchKernelPtsz,
  kCudaLaunchKernelExC,
  kCudaLaunchKernelExCPtsz,
  kCudaLaunchKernelInternal,      // __cudaLaunchKernel (CUDA 13 <<<>>>)
  kCudaLaunchKernelInternalPtsz,  // __cudaLaunchKernel_ptsz
};

const char* to_string(LaunchApi api) noexcept;
bool is_per_thread_stream(LaunchApi api) noexcept;

// Where a library call context came from and which entry point made it.
enum class LibrarySource : std::uint8_t { kNone = 0, kCublas, kCublasLt, kCudnn };
enum class LibraryApi : std::uint8_t {
  kNone = 0,
  kCublasLtMatmul,
  kCublasGemmEx,
  kCublasGemmEx64,
  kCublasGemmStridedBatchedEx,
  kCublasGemmStridedBatchedEx64,
  kCublasGemmBatchedEx,
  kCublasGemmBatchedEx64,
  kCublasSgemm,
  kCublasHgemm,
  kCublasSgemmStridedBatched,
  kCudnnConvolutionForward,
  kCudnnBackendExecute,
};

const char* to_string(LibrarySource s) noexcept;
const char* to_string(LibraryApi a) noexcept;

// A library call's context as plain data; the worker turns it into an OpContext. A call
// describes a GEMM or a convolution, never both: the shape that is set follows `kind`
// (gemm() for kGemm, conv() for kConv; neither is read for another kind).
struct OpPod {
  std::uint64_t call_id = 0;  // 0 = no library call
  OpKind kind = OpKind::kUnknown;
  LibrarySource source = LibrarySource::kNone;
  LibraryApi api = LibraryApi::kNone;

  OpPod() noexcept : shape_{} {}
  // The GEMM shape (kind kGemm), set to the default shape when the other one was written.
  GemmShape& gemm() noexcept { return holds(kGemmShape) ? shape_.gemm : set(GemmShape{}); }
  ConvShape& conv() noexcept { return holds(kConvShape) ? shape_.conv : set(ConvShape{}); }
  // What a reader sees: the shape, or the default one when the other is set.
  GemmShape gemm_or_default() const noexcept {
    return held_ == kGemmShape ? shape_.gemm : GemmShape{};
  }
  ConvShape conv_or_default() const noexcept {
    return held_ == kConvShape ? shape_.conv : ConvShape{};
  }
  bool operator==(const OpPod& o) const noexcept {
    return call_id == o.call_id && kind == o.kind && source == o.source && api == o.api &&
           held_ == o.held_ && gemm_or_default() == o.gemm_or_default() &&
           conv_or_default() == o.conv_or_default();
  }

 private:
  enum Held : std::uint8_t { kNoShape = 0, kGemmShape, kConvShape };
  bool holds(Held h) const noexcept { return held_ == h; }
  GemmShape& set(const GemmShape& g) noexcept {
    held_ = kGemmShape;
    return shape_.gemm = g;
  }
  ConvShape& set(const ConvShape& c) noexcept {
    held_ = kConvShape;
    return shape_.conv = c;
  }
  Held held_ = kNoShape;
  union Shape {
    std::uint8_t none;
    GemmShape gemm;
    ConvShape conv;
  } shape_;
};
static_assert(std::is_trivially_copyable_v<OpPod>);

namespace slot_flags {
inline constexpr std::uint16_t kCaptured = 1u << 0;     // recorded into a graph, not run
inline constexpr std::uint16_t kRuntimeOnly = 1u << 1;  // seen by a runtime hook only
inline constexpr std::uint16_t kFirstLaunch = 1u << 2;  // first launch of this handle
inline constexpr std::uint16_t kEventsTimed = 1u << 3;  // events recorded around it
inline constexpr std::uint16_t kCooperative = 1u << 4;
inline constexpr std::uint16_t kFromCallback = 1u << 5;         // recorded by the CUPTI callback
inline constexpr std::uint16_t kExternalCorrelation = 1u << 6;  // seq pushed to CUPTI
}  // namespace slot_flags

inline constexpr int kMaxSlotArgs = 8;

// The external correlation id pushed around a launch whose slot could not be reserved (a full
// ring): its kernel record is then known to come from a hooked launch that was dropped, not
// from a path the hooks miss.
inline constexpr std::uint64_t kDroppedLaunchSeq = ~std::uint64_t{0};

// 184 bytes: a thread's ring holds thousands, and each launch waiting for its measurement is
// one more copy. The first 16 bytes are what every kind of slot uses; a kLibraryCall slot
// carries its OpPod in the kernel fields after them (library_call(), set_library_call()).
struct LaunchSlot {
  std::uint64_t seq;
  std::int32_t result;  // CUresult / cudaError_t of the real call
  std::uint16_t flags;
  SlotKind kind;
  LaunchApi api;
  // Kernel fields.
  std::uint64_t host_ts_ns;
  std::uint64_t handle;  // CUfunction / CUkernel / host stub, as launched
  std::uint64_t stream;
  std::uint64_t graph;       // CUgraph, or the CUPTI graph id
  std::uint64_t graph_node;  // CUgraphNode, or the CUPTI node id (kFromCallback)
  // The library call the kernel was launched in (0 = none). Its context travels once, in a
  // kLibraryCall slot ahead of the kernels, so kernel slots stay small.
  std::uint64_t call_id;
  std::uint32_t name_id;
  std::uint32_t correlation_id;  // CUPTI correlation id (callback mode), else 0
  std::uint32_t grid[3];
  std::uint32_t block[3];
  std::uint32_t cluster[3];
  std::uint32_t smem;        // dynamic + static
  std::uint16_t regs;        // registers per thread (at most 255)
  std::uint16_t event_pair;  // the CUDA event pair timing it (kEventsTimed): pool, pair
  LaunchApi runtime_api;
  std::uint8_t n_args;
  std::uint8_t arg_is_8byte;  // bit i: args[i] came from an 8-byte parameter
  // The device ordinal of the context it was launched in, when the launch path knows it (a
  // launch timed with events: the events' context); else 0 (CUPTI's record says it).
  std::uint8_t device;
  union {
    std::int64_t args[kMaxSlotArgs];  // kKernel
    std::uint64_t graph_exec;         // CUgraphExec (or the clone's node id for kGraphNodeCloned)
  };

  LaunchSlot() noexcept {}  // slots live in raw ring memory; every field is set when filled
};
static_assert(sizeof(LaunchSlot) == 184);

// Where a kLibraryCall slot's OpPod lies: over the kernel fields, after what every slot uses.
inline constexpr std::size_t kLibraryCallOffset = offsetof(LaunchSlot, host_ts_ns);
static_assert(kLibraryCallOffset == 16 && kLibraryCallOffset + sizeof(OpPod) <= sizeof(LaunchSlot));

inline void set_library_call(LaunchSlot& s, const OpPod& op) noexcept {
  std::memcpy(reinterpret_cast<unsigned char*>(&s) + kLibraryCallOffset, &op, sizeof(OpPod));
}
inline OpPod library_call(const LaunchSlot& s) noexcept {
  OpPod op;
  std::memcpy(static_cast<void*>(&op),
              reinterpret_cast<const unsigned char*>(&s) + kLibraryCallOffset, sizeof(OpPod));
  return op;
}
static_assert(std::is_trivially_copyable_v<LaunchSlot>);

}  // namespace pm2lat::shim
