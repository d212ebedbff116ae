// What the runtime adds to a kernel record beyond the shared record schema: how the launch
// was seen and measured, written as the record's "runtime" object (pm2lat/record_jsonl.h):
//
//   "runtime":{"api":"cuLaunchKernelEx","via":"cudaLaunchKernelExC","corr":812,"call":44,
//              "args":[4096,128],"notes":["first_launch","graph_replay"]}
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "pm2lat/record_jsonl.h"

namespace pm2lat::shim {

namespace notes {
inline constexpr std::uint32_t kFirstLaunch = 1u << 0;    // first launch of this kernel handle
inline constexpr std::uint32_t kUnmeasured = 1u << 1;     // no duration (predict-only, lost)
inline constexpr std::uint32_t kUnhooked = 1u << 2;       // seen by CUPTI only: no hook saw it
inline constexpr std::uint32_t kRuntimeOnly = 1u << 3;    // seen by a runtime hook only
inline constexpr std::uint32_t kGraphReplay = 1u << 4;    // a node of a graph launch
inline constexpr std::uint32_t kLaunchDropped = 1u << 5;  // its launch slot was dropped
inline constexpr std::uint32_t kEventsTiming = 1u << 6;   // timed with CUDA events
inline constexpr std::uint32_t kPredictOnly = 1u << 7;    // another tool owns CUPTI
inline constexpr std::uint32_t kTimingLost = 1u << 8;     // CUPTI never delivered its record
inline constexpr std::uint32_t kCooperative = 1u << 9;

// Names in bit order, as they appear in "notes" (static strings).
std::vector<std::string_view> names(std::uint32_t bits);
}  // namespace notes

struct RecordNotes {
  const char* api = nullptr;  // driver entry point, null when unknown
  const char* via = nullptr;  // runtime entry point that led to it, if any
  std::uint32_t correlation = 0;
  std::uint64_t call = 0;  // library call id (kernels of one call share it)
  std::vector<std::int64_t> args;
  std::uint32_t bits = 0;
};

// The record's "runtime" object for the records writer.
RecordRuntime record_runtime(const RecordNotes& n);

}  // namespace pm2lat::shim
