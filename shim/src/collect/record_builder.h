// Turns a joined kernel into a record of the shared schema: the launch's geometry, name,
// arguments and library call, the measurement, the kernel's class and configuration, and the
// runtime's notes (how it was seen and measured). What the predictor will be asked about is
// settled here; predicting and writing are the record sink's.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "collect/held_kernels.h"
#include "collect/record_joiner.h"
#include "collect/record_notes.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/record_jsonl.h"

namespace pm2lat::shim {

class RecordSink;

// A record ready for its predictions.
struct BuiltRecord {
  PredictedRecord pr;  // everything but `gpu` and `predictions`
  RecordNotes notes;
  const KernelClass* cls = nullptr;  // owned by the builder, lives as long as it
  std::uint32_t name_id = 0;
  std::uint64_t measured_ns = 0;  // exact when CUPTI measured it
  std::uint64_t handle = 0;       // the launched handle, for predictions shown in NVTX
  std::uint64_t geometry = 0;     // geometry_digest() of the launch (0: no launch)
};

class RecordBuilder final : public JoinedKernelSink {
 public:
  RecordBuilder(std::int32_t rank, RecordSink& sink);

  void on_kernel(const JoinedKernel& kernel) override;
  // Hands on what was held back, once the sink no longer waits for the profiles.
  void release_held();
  std::size_t held() const noexcept { return held_.size(); }

  // Fills `b` with the record of joined kernel `k` (what on_kernel hands to the sink). `b`
  // may hold a previous record: its buffers are reused, every field is rewritten.
  void build(const JoinedKernel& k, BuiltRecord& b);

 private:
  const KernelClass& classify(std::uint32_t name_id);
  std::uint32_t name_id_of(const JoinedKernel& kernel);
  void carry_split_k(GemmShape& g, KernelFamily family, std::uint64_t call);

  std::int32_t rank_;
  RecordSink& sink_;
  std::unordered_map<std::uint32_t, KernelClass> classes_;      // by name id
  std::unordered_map<const char*, std::uint32_t> cupti_names_;  // CUPTI's strings are stable
  BuiltRecord scratch_;  // one record at a time: its strings and vectors are reused
  HeldKernels held_;     // while the profiles load
  // The last GEMM kernel a library call launched, and its split-K slices (carry_split_k).
  std::uint64_t last_gemm_call_ = 0;
  std::int32_t last_gemm_split_k_ = 0;
};

}  // namespace pm2lat::shim
