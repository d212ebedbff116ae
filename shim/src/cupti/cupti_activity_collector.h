// CUPTI activity collection: a bounded pool of 8-byte aligned buffers handed to CUPTI, the
// queue of completed buffers the worker takes, and the parser that turns records into the
// two things the worker joins on: kernel timings and external correlations.
//
// CUPTI has one pair of buffer callbacks per process. When the program starts a profiler of
// its own (torch.profiler: kineto registers its callbacks, enables kinds, disables them when
// it stops) its calls come here (cupti_interposers.cpp): ours stay registered, the client's
// records are copied into buffers it asked for and handed to it before our buffer is parsed
// (so its forced flush still delivers everything), and kinds we need stay enabled whatever it
// disables.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "cupti/cupti_api.h"

namespace pm2lat::shim {

// One kernel as CUPTI measured it (fields present in CUpti_ActivityKernel8 and later).
struct KernelTiming {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t correlation_id = 0;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  std::uint32_t grid[3] = {1, 1, 1};
  std::uint32_t block[3] = {1, 1, 1};
  std::uint32_t cluster[3] = {1, 1, 1};
  std::uint32_t smem = 0;
  std::uint32_t registers = 0;
  std::uint64_t graph_node_id = 0;
  std::uint32_t graph_id = 0;
  bool cooperative = false;    // a cooperative launch (single or multi-device)
  const char* name = nullptr;  // CUPTI's shared string, valid for the session
};

// One memory copy or memset as CUPTI measured it. Every field read is at the same place in
// every version of CUPTI's MEMCPY and MEMSET records (CUpti_ActivityMemcpy and
// CUpti_ActivityMemset onwards: fields are only appended).
struct TransferTiming {
  enum class Kind : std::uint8_t {
    kHostToDevice,
    kDeviceToHost,
    kDeviceToDevice,
    kPeerToPeer,
    kOtherCopy,  // host to host, or to or from a CUDA array
    kMemset,
  };
  Kind kind = Kind::kOtherCopy;
  std::uint64_t bytes = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

// The name a summary gives each kind ("host_to_device", ..., "memset").
const char* transfer_kind_name(TransferTiming::Kind kind) noexcept;

struct ExternalCorrelation {
  std::uint32_t correlation_id = 0;
  std::uint64_t external_id = 0;
};

class CuptiActivity {
 public:
  // A buffer holds about 4,800 kernel records (CUpti_ActivityKernel10, 216 bytes). Launches
  // wait for their record until the buffer holding it completes, so the size bounds how many
  // wait (each a launch slot's copy) as much as it bounds the buffers' own memory. A worker
  // that keeps up has two to six in flight; the pool's limit is reached only when it is kept
  // from running (CUPTI then drops records, and counts them).
  static constexpr std::size_t kBufferBytes = std::size_t(1) << 20;
  static constexpr std::size_t kMaxBuffers = 32;  // 32 MiB at most in flight

  static CuptiActivity& instance();

  // Registers the buffer callbacks and enables kernel, memory copy and memset records (and
  // external correlation records when `external_correlation`). Returns false with a reason.
  bool start(const CuptiApi* api, bool external_correlation, std::uint32_t flush_period_ms,
             std::string* reason);
  bool started() const noexcept { return api_ != nullptr; }
  // Asks CUPTI to hand over what it has (forced: incomplete buffers too).
  void flush(bool forced) noexcept;

  struct Completed {
    std::uint8_t* data;
    std::size_t valid;
  };
  // Worker: the buffers completed so far.
  void take_completed(std::vector<Completed>& out);
  // Worker: parses one buffer, then returns it to the pool.
  template <typename OnKernel, typename OnExternal, typename OnTransfer>
  void parse(const Completed& buffer, OnKernel&& on_kernel, OnExternal&& on_external,
             OnTransfer&& on_transfer);

  std::uint64_t buffers_refused() const noexcept { return refused_; }
  std::uint64_t records_dropped() noexcept;

  // Another CUPTI client's calls (`real_*`: the CUPTI functions it meant to call).
  CUptiResult client_registers_callbacks(CUpti_BuffersCallbackRequestFunc request,
                                         CUpti_BuffersCallbackCompleteFunc complete,
                                         decltype(&cuptiActivityRegisterCallbacks) real);
  CUptiResult client_enables(CUpti_ActivityKind kind, decltype(&cuptiActivityEnable) real);
  CUptiResult client_disables(CUpti_ActivityKind kind, decltype(&cuptiActivityDisable) real);
  // Records handed to the other client, and records it lost (it gave no buffer).
  std::uint64_t client_records() const noexcept { return client_records_.load(); }
  std::uint64_t client_records_lost() const noexcept { return client_lost_.load(); }

  void reset_after_fork() noexcept;

 private:
  static void buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
  static void buffer_completed(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer,
                               std::size_t size, std::size_t valid);
  void release(std::uint8_t* buffer);
  bool owns(const std::uint8_t* buffer);
  // Copies the records the other client enabled into buffers it provides and hands them over.
  void forward_to_client(CUcontext ctx, std::uint32_t stream, const std::uint8_t* buffer,
                         std::size_t valid) noexcept;
  static std::uint64_t bit(CUpti_ActivityKind kind) noexcept {
    return std::uint64_t{1} << static_cast<unsigned>(kind);
  }
  // What a record is: kNone, or the one of `timing`, `corr` and `transfer` it filled in.
  enum class Visited : std::uint8_t { kNone, kKernel, kExternal, kTransfer };
  Visited visit(const CUpti_Activity* record, KernelTiming* timing, ExternalCorrelation* corr,
                TransferTiming* transfer) const noexcept;

  const CuptiApi* api_ = nullptr;
  std::mutex mu_;
  std::vector<std::uint8_t*> free_;
  std::size_t allocated_ = 0;
  std::uint64_t refused_ = 0;
  std::vector<Completed> completed_;
  std::vector<std::uint8_t*> owned_;  // every buffer of the pool

  // The other client, if any (set from its thread, read from CUPTI's).
  std::atomic<CUpti_BuffersCallbackRequestFunc> client_request_{nullptr};
  std::atomic<CUpti_BuffersCallbackCompleteFunc> client_complete_{nullptr};
  std::atomic<std::uint64_t> client_kinds_{0};  // bit per CUpti_ActivityKind it enabled
  std::atomic<std::uint64_t> our_kinds_{0};     // bit per kind the runtime needs
  std::atomic<std::uint64_t> client_records_{0};
  std::atomic<std::uint64_t> client_lost_{0};
};

static_assert(CUPTI_ACTIVITY_KIND_COUNT <= 64, "activity kinds are kept as bits of a word");

template <typename OnKernel, typename OnExternal, typename OnTransfer>
void CuptiActivity::parse(const Completed& buffer, OnKernel&& on_kernel, OnExternal&& on_external,
                          OnTransfer&& on_transfer) {
  CUpti_Activity* record = nullptr;
  while (api_->activity_get_next_record(buffer.data, buffer.valid, &record) == CUPTI_SUCCESS) {
    KernelTiming timing;
    ExternalCorrelation corr;
    TransferTiming transfer;
    switch (visit(record, &timing, &corr, &transfer)) {
      case Visited::kKernel: on_kernel(timing); break;
      case Visited::kExternal: on_external(corr); break;
      case Visited::kTransfer: on_transfer(transfer); break;
      case Visited::kNone: break;
    }
  }
  release(buffer.data);
}

}  // namespace pm2lat::shim
