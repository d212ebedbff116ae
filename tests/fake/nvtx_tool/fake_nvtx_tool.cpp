// A fake NVTX tool (what Nsight Systems is to NVTX): loaded through NVTX_INJECTION64_PATH,
// it fills the CORE2 callback table with functions that record domain creation, registered
// strings and domain range pushes, and writes them to $FAKE_NVTX_LOG at exit, one per line:
//   domain <name>
//   push <domain> <message> <payload>
#include <nvtx3/nvToolsExt.h>  // also declares the injection types (nvtxDetail/nvtxTypes.h)

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

std::mutex g_mu;
std::vector<std::string>* g_domains = new std::vector<std::string>();
std::vector<std::string>* g_strings = new std::vector<std::string>();
std::vector<std::string>* g_lines = new std::vector<std::string>();

std::string domain_name(nvtxDomainHandle_t d) {
  const auto i = reinterpret_cast<std::uintptr_t>(d);
  return (i >= 1 && i <= g_domains->size()) ? (*g_domains)[i - 1] : "?";
}

nvtxDomainHandle_t NVTX_API domain_create(const char* name) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_domains->push_back(name ? name : "");
  g_lines->push_back("domain " + g_domains->back());
  return reinterpret_cast<nvtxDomainHandle_t>(g_domains->size());
}

nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t, const char* s) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_strings->push_back(s ? s : "");
  return reinterpret_cast<nvtxStringHandle_t>(g_strings->size());
}

int NVTX_API range_push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::string message = "?";
  if (attr != nullptr && attr->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
    const auto i = reinterpret_cast<std::uintptr_t>(attr->message.registered);
    if (i >= 1 && i <= g_strings->size()) message = (*g_strings)[i - 1];
  } else if (attr != nullptr && attr->messageType == NVTX_MESSAGE_TYPE_ASCII) {
    message = attr->message.ascii;
  }
  std::string payload = "none";
  if (attr != nullptr && attr->payloadType == NVTX_PAYLOAD_TYPE_DOUBLE) {
    payload = std::to_string(attr->payload.dValue);
  }
  g_lines->push_back("push " + domain_name(domain) + " " + message + " " + payload);
  return 0;
}

int NVTX_API range_pop(nvtxDomainHandle_t) { return 0; }

void write_log() {
  const char* path = std::getenv("FAKE_NVTX_LOG");
  if (path == nullptr) return;
  std::lock_guard<std::mutex> lock(g_mu);
  if (std::FILE* f = std::fopen(path, "w")) {
    for (const auto& l : *g_lines) std::fprintf(f, "%s\n", l.c_str());
    std::fclose(f);
  }
}

void set(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn) {
  if (id <= size && table[id] != nullptr) *table[id] = fn;
}

}  // namespace

// For test programs that must wait for an asynchronous effect: how many ranges pushed so far
// carry a payload and have `text` in their message.
extern "C" __attribute__((visibility("default"))) int fake_nvtx_payload_pushes(const char* text) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_lines == nullptr) return 0;
  int n = 0;
  for (const auto& l : *g_lines) {
    if (l.rfind("push ", 0) == 0 && l.find(text) != std::string::npos &&
        l.compare(l.size() - 5, 5, " none") != 0) {
      ++n;
    }
  }
  return n;
}

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_table) {
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable == nullptr) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || table == nullptr) {
    return 0;
  }
  set(table, size, NVTX_CBID_CORE2_DomainCreateA,
      reinterpret_cast<NvtxFunctionPointer>(domain_create));
  set(table, size, NVTX_CBID_CORE2_DomainRegisterStringA,
      reinterpret_cast<NvtxFunctionPointer>(register_string));
  set(table, size, NVTX_CBID_CORE2_DomainRangePushEx,
      reinterpret_cast<NvtxFunctionPointer>(range_push));
  set(table, size, NVTX_CBID_CORE2_DomainRangePop,
      reinterpret_cast<NvtxFunctionPointer>(range_pop));
  std::atexit(write_log);
  return 1;
}
