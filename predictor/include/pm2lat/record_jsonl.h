// The kernel-record JSONL schema ("pm2lat.record" version 1): one line per kernel, written by
// the runtime and by replay, read by every report. Field names: pm2lat/record_fields.h.
//
//   {"seq":12,"ts_ns":1234,"rank":0,"device":0,"gpu":"H100-SXM","stream":7,
//    "name":"<kernel name>","family":"gemm","config":"<normalised name>",
//    "grid":[x,y,z],"block":[x,y,z],"cluster":[x,y,z],"smem":0,"regs":0,
//    "graph":{"id":1,"node":2}                                  (only for graph launches)
//    "op":{"kind":"gemm","source":"cublasLt","name":"cublasLtMatmul",
//          "b":1,"m":4096,"n":4096,"k":4096,"trans_a":false,"trans_b":true,
//          "dtype":"bf16","compute":"fp32",
//          "algo_tile":[128,256],"algo_stages":4,"algo_split_k":1}      (gemm; algo_* if known)
//         {"kind":"conv","n":..,"c":..,"h":..,"w":..,"k":..,"r":..,"s":..,"stride":[..],
//          "pad":[..],"dilation":[..],"groups":..,"dtype":..}
//         {"kind":"attention","b":..,"sq":..,"skv":..,"h":..,"hkv":..,"d":..,"causal":..,
//          "backward":..,"dtype":..[,"window":..][,"kv_dtype":..]}
//         {"kind":"collective","bytes":..,"ranks":..}
//         {"kind":"elementwise","rows":..,"cols":..,"bytes_read":..,"bytes_written":..,
//          "dtype":..}                                          (memory-bound kinds)
//    "measured_us":12.3,                                        (null when not measured)
//    "basis":"kernel",
//    "predicted_us":{"H100-SXM":12.0,"A100-SXM":20.1},
//    "model":{"H100-SXM":"gemm_wave","A100-SXM":"gemm_wave"},
//    "flags":{"H100-SXM":"","A100-SXM":"config_chosen"}
//    [,"runtime":{"api":..,"via":..,"corr":..,"call":..,"args":[..],"notes":[..]}]}
//
// The first line of a records file is a header:
//   {"schema":"pm2lat.record","version":1,"gpu":"H100-SXM","targets":["H100-SXM",...],
//    "pid":123,"rank":0,"host":"...","command":"..."[,"runtime":{"mode":..,"version":..}]}
//
// The "runtime" objects are what libpm2lat.so adds (how it saw and measured the program);
// readers that do not need them ignore them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/prediction.h"

namespace pm2lat {

inline constexpr const char* kRecordSchemaName = "pm2lat.record";
inline constexpr int kRecordSchemaVersion = 1;

struct RecordsHeader {
  std::string gpu;  // canonical name of the GPU the run used ("" = unknown)
  std::vector<std::string> targets;
  std::int64_t pid = 0;
  std::int32_t rank = 0;
  std::string host;
  std::string command;
};

// One kernel with its predictions, as a records file holds it.
struct PredictedRecord {
  KernelRecord record;
  std::int32_t rank = 0;
  std::string gpu;  // canonical name of the GPU it ran on
  KernelFamily family = KernelFamily::kUnknown;
  std::string config;
  std::vector<std::pair<std::string, Prediction>> predictions;  // by target name

  const Prediction* prediction_for(std::string_view target) const noexcept;
};

// The runtime's additions: how the program was observed (header), and how each kernel was
// seen and measured (records).
struct RuntimeHeader {
  std::string mode;  // e.g. "cupti-callbacks+cupti-activity"
  std::string version;
};

struct RecordRuntime {
  std::string_view api;  // driver entry point ("" when unknown); views of static strings
  std::string_view via;  // the runtime entry point that led to it, if any
  std::uint32_t correlation = 0;
  std::uint64_t call = 0;  // library call id (kernels of one call share it)
  std::vector<std::int64_t> args;
  std::vector<std::string_view> notes;  // static strings
};

std::string header_to_jsonl(const RecordsHeader& h, const RuntimeHeader* runtime_info = nullptr);
std::string record_to_jsonl(const PredictedRecord& r, const RecordRuntime* runtime_info = nullptr);

// Parsing. Throws std::runtime_error with `where` (file:line) on malformed lines.
RecordsHeader header_from_jsonl(std::string_view line, const std::string& where);
PredictedRecord record_from_jsonl(std::string_view line, const std::string& where);

}  // namespace pm2lat
