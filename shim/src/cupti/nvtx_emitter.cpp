#include "cupti/nvtx_emitter.h"

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <string>

#include "launch_path/string_table.h"

namespace pm2lat::shim {

namespace {

std::atomic<nvtxDomainHandle_t> g_domain{nullptr};
std::string* g_prefix = nullptr;  // "<target>: "

}  // namespace

void NvtxEmitter::start(const std::string& first_target) {
  if (g_domain.load(std::memory_order_acquire) != nullptr) return;
  g_prefix = new std::string(first_target.empty() ? "" : first_target + ": ");
  g_domain.store(nvtxDomainCreateA("pm2lat"), std::memory_order_release);
}

bool NvtxEmitter::started() noexcept { return g_domain.load(std::memory_order_acquire) != nullptr; }

void NvtxEmitter::push(KernelInfo* info, std::uint64_t geometry) noexcept {
  nvtxDomainHandle_t domain = g_domain.load(std::memory_order_acquire);
  if (domain == nullptr || info == nullptr) return;
  std::atomic_ref<void*> stored_message(info->nvtx_message);
  void* message = stored_message.load(std::memory_order_acquire);
  if (message == nullptr) {
    // First launch of this kernel: register its label once.
    std::string label = *g_prefix;
    label += StringTable::instance().get(info->name_id);
    message = nvtxDomainRegisterStringA(domain, label.c_str());
    stored_message.store(message, std::memory_order_release);
  }
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = static_cast<nvtxStringHandle_t>(message);
  if (std::atomic_ref<std::uint64_t>(info->last_geometry).load(std::memory_order_acquire) ==
      geometry) {
    attr.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    attr.payload.dValue =
        std::atomic_ref<double>(info->last_prediction_us).load(std::memory_order_relaxed);
  }
  nvtxDomainRangePushEx(domain, &attr);
}

void NvtxEmitter::pop() noexcept {
  if (nvtxDomainHandle_t domain = g_domain.load(std::memory_order_acquire)) {
    nvtxDomainRangePop(domain);
  }
}

}  // namespace pm2lat::shim
