#include "cupti/cupti_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "interpose/real_dl.h"

namespace pm2lat::shim {

namespace {

// The oldest CUPTI whose kernel records carry every field the shim reads (graph node ids,
// cluster dimensions: CUpti_ActivityKernel8 and later, CUDA 12.0).
constexpr std::uint32_t kMinimumCuptiApiVersion = 18;

template <typename T>
bool bind(void* lib, const char* name, T& out, bool required, std::string* missing) {
  out = reinterpret_cast<T>(real_dlsym(lib, name));
  if (out == nullptr && required && missing->empty()) *missing = name;
  return out != nullptr || !required;
}

void* open_cupti(const std::string& explicit_path, std::string* path) {
  if (!explicit_path.empty()) {
    *path = explicit_path;
    return dlopen(explicit_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
    if (void* h = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) {
      *path = name;
      return h;
    }
  }
  std::vector<std::string> candidates = {"libcupti.so.13", "libcupti.so"};
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* root = std::getenv(var); root != nullptr && *root != '\0') {
      candidates.push_back(std::string(root) + "/extras/CUPTI/lib64/libcupti.so");
    }
  }
  candidates.push_back("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so");
  for (const std::string& c : candidates) {
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      *path = c;
      return h;
    }
  }
  return nullptr;
}

}  // namespace

bool CuptiApi::load(const std::string& explicit_path, std::string* reason) {
  library = open_cupti(explicit_path, &path);
  if (library == nullptr) {
    const char* err = dlerror();
    *reason = explicit_path.empty() ? "libcupti.so not found"
                                    : (err ? err : "cannot load " + explicit_path);
    return false;
  }
  std::string missing;
  bool ok = true;
  ok &= bind(library, "cuptiGetVersion", get_version, true, &missing);
  ok &= bind(library, "cuptiGetResultString", get_result_string, true, &missing);
  ok &= bind(library, "cuptiSubscribe", subscribe, true, &missing);
  ok &= bind(library, "cuptiSubscribe_v2", subscribe_v2, false, &missing);
  ok &= bind(library, "cuptiUnsubscribe", unsubscribe, true, &missing);
  ok &= bind(library, "cuptiEnableCallback", enable_callback, true, &missing);
  ok &=
      bind(library, "cuptiActivityRegisterCallbacks", activity_register_callbacks, true, &missing);
  ok &= bind(library, "cuptiActivityEnable", activity_enable, true, &missing);
  ok &= bind(library, "cuptiActivityDisable", activity_disable, true, &missing);
  ok &= bind(library, "cuptiActivityFlushAll", activity_flush_all, true, &missing);
  ok &= bind(library, "cuptiActivityFlushPeriod", activity_flush_period, false, &missing);
  ok &= bind(library, "cuptiActivityGetNextRecord", activity_get_next_record, true, &missing);
  ok &= bind(library, "cuptiActivityGetNumDroppedRecords", activity_get_num_dropped_records, true,
             &missing);
  ok &= bind(library, "cuptiActivityPushExternalCorrelationId", push_external_correlation, true,
             &missing);
  ok &= bind(library, "cuptiActivityPopExternalCorrelationId", pop_external_correlation, true,
             &missing);
  ok &= bind(library, "cuptiActivityEnableDriverApi", activity_enable_driver_api, false, &missing);
  ok &= bind(library, "cuptiGetGraphNodeId", get_graph_node_id, true, &missing);
  ok &= bind(library, "cuptiGetGraphId", get_graph_id, true, &missing);
  if (!ok) {
    *reason = path + " lacks " + missing;
    return false;
  }
  if (get_version(&version) != CUPTI_SUCCESS || version < kMinimumCuptiApiVersion) {
    *reason = path + " is too old (CUPTI API version " + std::to_string(version) + ")";
    return false;
  }
  return true;
}

std::string CuptiApi::result_string(CUptiResult r) const {
  const char* s = nullptr;
  if (get_result_string != nullptr && get_result_string(r, &s) == CUPTI_SUCCESS && s != nullptr) {
    return s;
  }
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

}  // namespace pm2lat::shim
