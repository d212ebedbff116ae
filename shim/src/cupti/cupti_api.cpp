#include "cupti/cupti_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <iterator>
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

// CUPTI's names, newest first: CUDA 13 ships libcupti.so.13, CUDA 12 (and its pip wheels,
// nvidia-cuda-cupti-cu12) libcupti.so.12; the unversioned name is a development symlink.
constexpr const char* kCuptiNames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
// Where a toolkit keeps it: lib64 since CUDA 13, extras/CUPTI/lib64 before.
constexpr const char* kToolkitDirs[] = {"lib64", "extras/CUPTI/lib64"};
constexpr const char* kDefaultToolkit = "/usr/local/cuda";

void* open_cupti(const std::string& explicit_path, std::string* path) {
  if (!explicit_path.empty()) {
    *path = explicit_path;
    return dlopen(explicit_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  // A CUPTI the program already loaded (PyTorch brings its own): never a second one.
  for (const char* name : kCuptiNames) {
    if (void* h = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) {
      *path = name;
      return h;
    }
  }
  // The loader's own override first (LD_LIBRARY_PATH), then the toolkit the environment names
  // (its lib64 before extras/CUPTI/lib64), then the loader's default search (its cache), then
  // the default toolkit.
  std::vector<std::string> candidates;
  auto add_dir = [&](const std::string& dir) {
    for (const char* name : kCuptiNames) candidates.push_back(dir + "/" + name);
  };
  if (const char* path = std::getenv("LD_LIBRARY_PATH"); path != nullptr) {
    std::string dirs = path;
    for (std::size_t start = 0, end; start <= dirs.size(); start = end + 1) {
      end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      if (end > start) add_dir(dirs.substr(start, end - start));
    }
  }
  auto add_toolkit = [&](const std::string& root) {
    for (const char* dir : kToolkitDirs) add_dir(root + "/" + dir);
  };
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* root = std::getenv(var); root != nullptr && *root != '\0') add_toolkit(root);
  }
  candidates.insert(candidates.end(), std::begin(kCuptiNames), std::end(kCuptiNames));
  add_toolkit(kDefaultToolkit);
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
