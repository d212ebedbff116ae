// CUPTI, loaded at run time: the shim must start (and fall back) where CUPTI is missing,
// and must reuse the copy a program already loaded (PyTorch ships its own) rather than bring
// a second one that would fight for the same driver hooks. Types come from the CUDA 13.0
// CUPTI headers; only the functions are resolved dynamically.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>

namespace pm2lat::shim {

struct CuptiApi {
  void* library = nullptr;
  std::string path;
  std::uint32_t version = 0;

  decltype(&cuptiGetVersion) get_version = nullptr;
  decltype(&cuptiGetResultString) get_result_string = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiSubscribe_v2) subscribe_v2 = nullptr;  // optional (CUDA 13)
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) activity_register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) activity_enable = nullptr;
  decltype(&cuptiActivityDisable) activity_disable = nullptr;
  decltype(&cuptiActivityFlushAll) activity_flush_all = nullptr;
  decltype(&cuptiActivityFlushPeriod) activity_flush_period = nullptr;  // optional
  decltype(&cuptiActivityGetNextRecord) activity_get_next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) activity_get_num_dropped_records = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) push_external_correlation = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) pop_external_correlation = nullptr;
  decltype(&cuptiActivityEnableDriverApi) activity_enable_driver_api = nullptr;  // optional
  decltype(&cuptiGetGraphNodeId) get_graph_node_id = nullptr;
  decltype(&cuptiGetGraphId) get_graph_id = nullptr;

  // Loads `path` when given, else a CUPTI the process already has, else libcupti.so.13, .12 or
  // libcupti.so from LD_LIBRARY_PATH, $CUDA_HOME or $CUDA_PATH (lib64, where CUDA 13 installs
  // it, then extras/CUPTI/lib64), the loader's default search, then /usr/local/cuda. Returns
  // false
  // with a reason when CUPTI is missing or lacks a required function.
  bool load(const std::string& explicit_path, std::string* reason);

  std::string result_string(CUptiResult r) const;
};

}  // namespace pm2lat::shim
