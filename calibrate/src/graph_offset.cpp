#include "pm2lat/calibrate/graph_offset.h"

#include <algorithm>

#include "pm2lat/classifier.h"
#include "pm2lat/median.h"

namespace pm2lat::calibrate {
namespace {

constexpr double kOffsetKernelMaxUs = 20.0;  // "small": the offset is a large part of them
constexpr std::size_t kMinOffsetKernels = 8;
constexpr double kMaxOffsetUs = 10.0;

}  // namespace

double graph_kernel_offset_us(Predictor& graph_tables, const DeviceSpec& spec,
                              const std::vector<const KernelRecord*>& kernels) {
  const TargetId t = graph_tables.add_target(spec.name);
  std::vector<double> gaps;
  for (const KernelRecord* r : kernels) {
    const DType a = r->op.gemm.a;
    if (!r->measured_us || r->op.kind != OpKind::kGemm || !r->op.gemm.valid() ||
        (a != DType::kBf16 && a != DType::kFp16))
      continue;
    const KernelClass cls = classify_kernel(r->launch.name);
    if (cls.family != KernelFamily::kGemm) continue;
    PredictOptions opt;
    opt.graph_replay = true;
    opt.source_spec = &spec;
    const Prediction p = graph_tables.predict(*r, cls, t, opt);
    if (p.model != ModelKind::kGemmWave || p.us <= 0 || p.us > kOffsetKernelMaxUs) continue;
    gaps.push_back(*r->measured_us - p.us);
  }
  if (gaps.size() < kMinOffsetKernels) return 0;
  return std::clamp(upper_median(std::move(gaps)), 0.0, kMaxOffsetUs);
}

}  // namespace pm2lat::calibrate
