#include "cupti/cupti_activity_collector.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "diagnostics.h"

namespace pm2lat::shim {

namespace {
// CUPTI versions before API 27 (CUDA 12.9) may crash when a buffer request is refused, so
// those always get a buffer, even past the pool limit.
constexpr std::uint32_t kBufferRefusalMinVersion = 27;

void warn_other_client() {
  Diagnostics::instance().warn_once(
      "cupti-client",
      "another CUPTI client (a profiler such as torch.profiler) collects activity records: "
      "its records are handed to it and pm2lat keeps measuring");
}
}  // namespace

CuptiActivity& CuptiActivity::instance() {
  static CuptiActivity* a = new CuptiActivity();  // never destroyed: CUPTI may call at exit
  return *a;
}

bool CuptiActivity::start(const CuptiApi* api, bool external_correlation,
                          std::uint32_t flush_period_ms, std::string* reason) {
  CUptiResult r = api->activity_register_callbacks(&buffer_requested, &buffer_completed);
  if (r != CUPTI_SUCCESS) {
    *reason = "cuptiActivityRegisterCallbacks: " + api->result_string(r);
    return false;
  }
  api_ = api;
  if (client_request_.load() != nullptr) warn_other_client();
  std::uint64_t ours = bit(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (external_correlation) {
    ours |= bit(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) | bit(CUPTI_ACTIVITY_KIND_DRIVER);
  }
  our_kinds_.store(ours);
  // CONCURRENT_KERNEL, never KERNEL: the latter serialises all kernels.
  r = api->activity_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    *reason = "cuptiActivityEnable(CONCURRENT_KERNEL): " + api->result_string(r);
    api_ = nullptr;
    return false;
  }
  // The GPU's copies and memsets: not forecast, but the summary says how much of the GPU's
  // time they took. Kernels are measured without them if a CUPTI refuses them, and a kind it
  // refused is not ours (another client's enabling of it then goes through to CUPTI).
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET}) {
    if (api->activity_enable(kind) == CUPTI_SUCCESS) ours |= bit(kind);
  }
  our_kinds_.store(ours);
  if (external_correlation) {
    api->activity_enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    // External correlation records only appear for API records of enabled kinds; enable
    // just the launch calls where the driver allows choosing.
    api->activity_enable(CUPTI_ACTIVITY_KIND_DRIVER);
    if (api->activity_enable_driver_api != nullptr) {
      for (CUpti_CallbackId cbid :
           {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
            CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
            CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
            CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz}) {
        api->activity_enable_driver_api(cbid, 1);
      }
    }
  }
  if (api->activity_flush_period != nullptr && flush_period_ms > 0) {
    api->activity_flush_period(flush_period_ms);
  }
  return true;
}

void CuptiActivity::flush(bool forced) noexcept {
  if (api_ != nullptr) api_->activity_flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void CuptiActivity::buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                     std::size_t* max_records) {
  CuptiActivity& self = instance();
  *max_records = 0;
  std::lock_guard<std::mutex> lock(self.mu_);
  if (!self.free_.empty()) {
    *buffer = self.free_.back();
    self.free_.pop_back();
    *size = kBufferBytes;
    return;
  }
  const bool may_refuse = self.api_ != nullptr && self.api_->version >= kBufferRefusalMinVersion;
  if (self.allocated_ >= kMaxBuffers && may_refuse) {
    // The worker is far behind: CUPTI drops records (and counts them) instead of the
    // process growing without bound.
    ++self.refused_;
    *buffer = nullptr;
    *size = 0;
    return;
  }
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  if (*buffer) {
    ++self.allocated_;
    self.owned_.push_back(*buffer);
  }
}

bool CuptiActivity::owns(const std::uint8_t* buffer) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::ranges::find(owned_, buffer) != owned_.end();
}

void CuptiActivity::buffer_completed(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer,
                                     std::size_t size, std::size_t valid) {
  if (buffer == nullptr) return;
  CuptiActivity& self = instance();
  if (!self.owns(buffer)) {
    // A buffer the other client had before we registered: all of it is its own.
    if (auto complete = self.client_complete_.load()) complete(ctx, stream, buffer, size, valid);
    return;
  }
  self.forward_to_client(ctx, stream, buffer, valid);
  std::lock_guard<std::mutex> lock(self.mu_);
  self.completed_.push_back(Completed{buffer, valid});
}

void CuptiActivity::forward_to_client(CUcontext ctx, std::uint32_t stream,
                                      const std::uint8_t* buffer, std::size_t valid) noexcept {
  const std::uint64_t kinds = client_kinds_.load();
  const auto request = client_request_.load();
  const auto complete = client_complete_.load();
  if (kinds == 0 || request == nullptr || complete == nullptr || api_ == nullptr) return;
  auto* data = const_cast<std::uint8_t*>(buffer);
  std::uint8_t* out = nullptr;
  std::size_t out_size = 0, used = 0;
  CUpti_Activity* record = nullptr;
  bool have = api_->activity_get_next_record(data, valid, &record) == CUPTI_SUCCESS;
  while (have) {
    // A record's size is the distance to the next one (records are padded to 8 bytes).
    CUpti_Activity* next = record;
    const bool more = api_->activity_get_next_record(data, valid, &next) == CUPTI_SUCCESS;
    const auto* start = reinterpret_cast<const std::uint8_t*>(record);
    const std::size_t bytes = static_cast<std::size_t>(
        (more ? reinterpret_cast<const std::uint8_t*>(next) : buffer + valid) - start);
    bool wanted = (kinds & bit(record->kind)) != 0;
    if (wanted && record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      // Our own correlation ids are not the client's.
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      wanted = e->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
    }
    if (wanted) {
      if (out != nullptr && used + bytes > out_size) {
        complete(ctx, stream, out, out_size, used);
        out = nullptr;
      }
      if (out == nullptr) {
        std::size_t max_records = 0;
        request(&out, &out_size, &max_records);
        used = 0;
        if (out != nullptr && out_size < bytes) {
          complete(ctx, stream, out, out_size, 0);
          out = nullptr;
        }
      }
      if (out != nullptr) {
        std::memcpy(out + used, start, bytes);
        used += bytes;
        client_records_.fetch_add(1, std::memory_order_relaxed);
      } else {
        client_lost_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    record = next;
    have = more;
  }
  if (out != nullptr) complete(ctx, stream, out, out_size, used);
}

CUptiResult CuptiActivity::client_registers_callbacks(
    CUpti_BuffersCallbackRequestFunc request, CUpti_BuffersCallbackCompleteFunc complete,
    decltype(&cuptiActivityRegisterCallbacks) real) {
  if (request == nullptr || complete == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  client_request_.store(request);
  client_complete_.store(complete);
  // Not collecting (yet): the registration is the client's. If we start later, buffers it
  // was given then are recognised as its own.
  if (api_ == nullptr) return real ? real(request, complete) : CUPTI_ERROR_NOT_INITIALIZED;
  warn_other_client();
  return CUPTI_SUCCESS;
}

CUptiResult CuptiActivity::client_enables(CUpti_ActivityKind kind,
                                          decltype(&cuptiActivityEnable) real) {
  if (static_cast<unsigned>(kind) < 64) client_kinds_.fetch_or(bit(kind));
  if (static_cast<unsigned>(kind) < 64 && (our_kinds_.load() & bit(kind)) != 0)
    return CUPTI_SUCCESS;
  return real ? real(kind) : CUPTI_ERROR_NOT_INITIALIZED;
}

CUptiResult CuptiActivity::client_disables(CUpti_ActivityKind kind,
                                           decltype(&cuptiActivityDisable) real) {
  if (static_cast<unsigned>(kind) < 64 && (client_kinds_.load() & bit(kind)) != 0) {
    // What was recorded while the client had the kind enabled is still its own: hand it over
    // now (a profiler disables its kinds, then flushes, and expects everything up to then).
    if (api_ != nullptr) api_->activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    client_kinds_.fetch_and(~bit(kind));
  }
  // A kind we need stays enabled: the client stopping must not stop our measurements.
  if (static_cast<unsigned>(kind) < 64 && (our_kinds_.load() & bit(kind)) != 0)
    return CUPTI_SUCCESS;
  return real ? real(kind) : CUPTI_ERROR_NOT_INITIALIZED;
}

void CuptiActivity::take_completed(std::vector<Completed>& out) {
  std::lock_guard<std::mutex> lock(mu_);
  out.insert(out.end(), completed_.begin(), completed_.end());
  completed_.clear();
}

void CuptiActivity::release(std::uint8_t* buffer) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(buffer);
}

std::uint64_t CuptiActivity::records_dropped() noexcept {
  if (api_ == nullptr) return 0;
  std::size_t dropped = 0;
  if (api_->activity_get_num_dropped_records(nullptr, 0, &dropped) != CUPTI_SUCCESS) return 0;
  return dropped;
}

const char* transfer_kind_name(TransferTiming::Kind kind) noexcept {
  switch (kind) {
    case TransferTiming::Kind::kHostToDevice: return "host_to_device";
    case TransferTiming::Kind::kDeviceToHost: return "device_to_host";
    case TransferTiming::Kind::kDeviceToDevice: return "device_to_device";
    case TransferTiming::Kind::kPeerToPeer: return "peer_to_peer";
    case TransferTiming::Kind::kOtherCopy: return "other_copy";
    case TransferTiming::Kind::kMemset: return "memset";
  }
  return "other_copy";
}

namespace {

// A MEMCPY record's kind of copy, as the summary groups them.
TransferTiming::Kind copy_kind_of(std::uint8_t copy_kind) noexcept {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return TransferTiming::Kind::kHostToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return TransferTiming::Kind::kDeviceToHost;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return TransferTiming::Kind::kDeviceToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return TransferTiming::Kind::kPeerToPeer;
    default: return TransferTiming::Kind::kOtherCopy;
  }
}

// What a MEMCPY and a MEMSET record both say: every version has these fields at the same
// places (CUpti_ActivityMemcpy and CUpti_ActivityMemset onwards).
template <typename Record>
void read_transfer(const CUpti_Activity* record, TransferTiming* transfer) noexcept {
  const auto* r = reinterpret_cast<const Record*>(record);
  transfer->bytes = r->bytes;
  transfer->start_ns = r->start;
  transfer->end_ns = r->end;
}

}  // namespace

CuptiActivity::Visited CuptiActivity::visit(const CUpti_Activity* record, KernelTiming* timing,
                                            ExternalCorrelation* corr,
                                            TransferTiming* transfer) const noexcept {
  if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
    read_transfer<CUpti_ActivityMemcpy6>(record, transfer);
    transfer->kind = copy_kind_of(reinterpret_cast<const CUpti_ActivityMemcpy6*>(record)->copyKind);
    return Visited::kTransfer;
  }
  if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
    read_transfer<CUpti_ActivityMemset4>(record, transfer);
    transfer->kind = TransferTiming::Kind::kMemset;
    return Visited::kTransfer;
  }
  if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
      record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
    // Kernel records are append-only across versions; every field read here exists since
    // CUpti_ActivityKernel8, the minimum the loader accepts.
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    timing->start_ns = k->start;
    timing->end_ns = k->end;
    timing->correlation_id = k->correlationId;
    timing->device = k->deviceId;
    timing->stream = k->streamId;
    timing->grid[0] = static_cast<std::uint32_t>(k->gridX);
    timing->grid[1] = static_cast<std::uint32_t>(k->gridY);
    timing->grid[2] = static_cast<std::uint32_t>(k->gridZ);
    timing->block[0] = static_cast<std::uint32_t>(k->blockX);
    timing->block[1] = static_cast<std::uint32_t>(k->blockY);
    timing->block[2] = static_cast<std::uint32_t>(k->blockZ);
    timing->cluster[0] = k->clusterX ? k->clusterX : 1;
    timing->cluster[1] = k->clusterY ? k->clusterY : 1;
    timing->cluster[2] = k->clusterZ ? k->clusterZ : 1;
    timing->smem = static_cast<std::uint32_t>(k->staticSharedMemory + k->dynamicSharedMemory);
    timing->registers = k->registersPerThread;
    timing->graph_node_id = k->graphNodeId;
    timing->graph_id = k->graphId;
    timing->cooperative = k->launchType != CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
    timing->name = k->name;
    return Visited::kKernel;
  }
  if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
    const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
    if (e->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2) return Visited::kNone;
    corr->correlation_id = e->correlationId;
    corr->external_id = e->externalId;
    return Visited::kExternal;
  }
  return Visited::kNone;
}

void CuptiActivity::reset_after_fork() noexcept {
  // The parent's CUPTI session does not exist in the child; start over empty.
  new (&mu_) std::mutex();
  api_ = nullptr;
  completed_.clear();
  owned_.clear();
  client_request_.store(nullptr);
  client_complete_.store(nullptr);
  client_kinds_.store(0);
  our_kinds_.store(0);
}

}  // namespace pm2lat::shim
