#include "pm2lat/reports/replay/gpu_inference.h"

#include <cstddef>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/target_set.h"

namespace pm2lat::reports {

std::string infer_gpu_from_kernel_names(const std::vector<std::string>& names) {
  // Newest architecture first: a Hopper run also uses sm80 kernels, never the reverse.
  struct Arch {
    const char* token;
    const char* gpu;
  };
  static constexpr Arch kArchs[] = {
      {"sm100", "B200"}, {"Sm100", "B200"}, {"sm90", "H100"},    {"Sm90", "H100"},
      {"sm80", "A100"},  {"Sm80", "A100"},  {"ampere_", "A100"}, {"cutlass_80_", "A100"},
      {"sm75", "T4"},    {"turing_", "T4"}, {"sm70", "V100"},    {"volta_", "V100"},
  };
  for (const auto& a : kArchs) {
    for (const auto& n : names) {
      if (n.find(a.token) != std::string::npos) return a.gpu;
    }
  }
  return "";
}

namespace {

// Kernels of `records` the GPU's own profiles predict as its own GPU (the way replay scores
// them): a dedicated or fitted model of that GPU, not another GPU's scaled by spec ratios nor
// the roofline. Communication kernels say nothing of the GPU's calibration.
std::size_t own_calibrated_kernels(Predictor& predictor, const DeviceSpec& gpu,
                                   const std::vector<KernelRecord>& records,
                                   const std::vector<const KernelClass*>& classes) {
  // The distinct (kernel, shape) pairs of one trace; repeats of a step are served by the cache.
  constexpr std::size_t kCacheEntries = std::size_t{1} << 14;
  TargetSet targets(predictor, kCacheEntries);
  targets.add(gpu);
  if (targets.target(0).spec_scaled) return 0;
  PredictOptions options;
  options.source_spec = &gpu;
  constexpr std::uint32_t kNotOwn = prediction_flags::kSpecScaled | prediction_flags::kFallback;
  std::size_t own = 0;
  for (std::size_t i = 0; i < records.size() && i < classes.size(); ++i) {
    const Prediction& p = targets.predict(records[i], *classes[i], options).front();
    if (!p.has(prediction_flags::kCommunication) && (p.flags & kNotOwn) == 0) ++own;
  }
  return own;
}

}  // namespace

const DeviceSpec& best_calibrated_variant(Predictor& predictor, const DeviceSpec& inferred,
                                          const std::vector<KernelRecord>& records,
                                          const std::vector<const KernelClass*>& classes) {
  const DeviceSpec* best = &inferred;
  std::size_t best_own = own_calibrated_kernels(predictor, inferred, records, classes);
  for (const DeviceSpec& candidate : predictor.catalogue().devices()) {
    if (&candidate == &inferred || candidate.cc_major != inferred.cc_major ||
        candidate.cc_minor != inferred.cc_minor)
      continue;
    const std::size_t own = own_calibrated_kernels(predictor, candidate, records, classes);
    if (own > best_own) {
      best = &candidate;
      best_own = own;
    }
  }
  return *best;
}

InferredTraceGpu infer_trace_gpu(Predictor& predictor, const std::vector<std::string>& names,
                                 const std::vector<KernelRecord>& records,
                                 const std::vector<const KernelClass*>& classes) {
  const std::string architecture = infer_gpu_from_kernel_names(names);
  InferredTraceGpu out{architecture, {}};
  if (architecture.empty()) return out;
  const DeviceSpec* named = predictor.catalogue().find(architecture);
  if (named == nullptr) {  // a catalogue without that architecture's entry
    out.note = "GPU not recorded in the trace: inferred from kernel names";
    return out;
  }
  out.device = best_calibrated_variant(predictor, *named, records, classes).name;
  out.note = "GPU not recorded in the trace: " + architecture +
             " by its kernels' names, scored as " + out.device +
             " (of that architecture, the GPU whose calibration knows most of them)";
  return out;
}

}  // namespace pm2lat::reports
