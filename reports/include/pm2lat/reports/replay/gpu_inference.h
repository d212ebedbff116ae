// Which GPU a trace ran on when it does not say (a Kineto trace without `deviceProperties`):
// the architecture its kernels were built for, then the model of that architecture whose own
// calibration knows those kernels. Measured times are never looked at.
#pragma once

#include <string>
#include <vector>

#include "pm2lat/classifier.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/predictor.h"

namespace pm2lat::reports {

// The GPU a trace's kernels were built for, from architecture tokens in their names
// ("sm90_xmma..." -> "H100"), or "" when the names do not say.
std::string infer_gpu_from_kernel_names(const std::vector<std::string>& names);

// Kernel names tell a GPU's architecture, not which of its models ran them (an `sm80` kernel
// runs alike on an A100 PCIe 40 GB and an A100 SXM 80 GB). Among the catalogue's GPUs of
// `inferred`'s compute capability that have profiles of their own, the one whose own
// calibration predicts the most of `records` (neither spec-scaled from another GPU nor a
// roofline fallback); `inferred` when none predicts more than it does.
const DeviceSpec& best_calibrated_variant(Predictor& predictor, const DeviceSpec& inferred,
                                          const std::vector<KernelRecord>& records,
                                          const std::vector<const KernelClass*>& classes);

// The GPU a trace without device properties is scored as, by the two rules above, and the
// replay's note saying how it was found; both empty when the names tell no architecture. The
// one decision replay and the bounds check follow. `names`: the trace's kernel names.
struct InferredTraceGpu {
  std::string device;
  std::string note;
};
InferredTraceGpu infer_trace_gpu(Predictor& predictor, const std::vector<std::string>& names,
                                 const std::vector<KernelRecord>& records,
                                 const std::vector<const KernelClass*>& classes);

}  // namespace pm2lat::reports
