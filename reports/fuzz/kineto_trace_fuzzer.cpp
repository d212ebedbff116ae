// Any bytes through the whole trace importer: JSON parse, event extraction, kernel-to-
// operator linking and the operator shape rules. The only acceptable failure is the
// importer's own InputError; anything else (a crash, a sanitizer report, another exception)
// is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pm2lat/reports/input_file.h"
#include "pm2lat/reports/replay/kernel_class_cache.h"
#include "pm2lat/reports/replay/kineto_trace.h"
#include "pm2lat/reports/replay/trace_records.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pm2lat::reports;
  try {
    KinetoTrace trace =
        parse_kineto_trace(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    KernelClassCache classes;
    const TraceRecords records = records_from_trace(trace, classes);
    if (records.records.size() != trace.kernels.size()) __builtin_trap();
  } catch (const InputError&) {}
  return 0;
}
