// Work of the memory-bound helper kernels a heavy operator launches besides its main kernel:
// cuDNN's layout transforms and scalings inside a convolution, the bias copy or split-K
// partial sums of a GEMM. The operator's tensors are candidates; the launch says which.
#include <algorithm>
#include <cmath>

#include "op_inputs.h"
#include "op_shape_rules.h"

namespace pm2lat::reports::trace_rules {
namespace {

// A candidate tensor stands for the helper's work only within this factor of the elements
// the launch covers: a launch of a few thousand threads never touches a 400 MB tensor.
constexpr double kHelperReach = 16.0;

}  // namespace

std::optional<MemoryWork> helper_work(const TraceOp& op, std::string_view op_name,
                                      const KernelClass& cls, const TraceKernel& kernel) {
  const std::string_view a = aten_name(op_name);
  std::vector<std::pair<std::vector<std::int64_t>, double>> candidates;  // shape, element bytes
  for (const auto& t : trace_inputs::tensors(op))
    candidates.emplace_back(*t.shape, t.element_bytes);
  if (is_conv_op(a)) {
    if (auto c = conv_shape(op, a)) {
      const double eb = std::max(0.5, dtype_bytes(c->dtype));
      candidates.push_back({{c->batch, c->out_channels, c->out_h(), c->out_w()}, eb});
    }
  } else if (is_matmul_op(a)) {
    if (auto g = gemm_shape(op, a, false)) {
      candidates.clear();  // the output (bias copy, split-K partial sums) is what helpers touch
      candidates.push_back({{g->batch, g->m, g->n}, dtype_bytes(g->a)});
    }
  }
  if (candidates.empty()) return std::nullopt;
  // Elements the launch covers: cuDNN's layout transforms move one 32x32 tile per block,
  // other helpers about four elements per thread.
  const bool transform = cls.config.find("nchwTo") != std::string::npos ||
                         cls.config.find("nhwcTo") != std::string::npos;
  const double covered = static_cast<double>(kernel.grid.volume()) *
                         (transform ? 1024.0 : static_cast<double>(kernel.block.volume()) * 4.0);
  const auto* best = &candidates.front();
  double best_gap = 1e300;
  for (const auto& c : candidates) {
    const double n = static_cast<double>(std::max<std::int64_t>(1, trace_inputs::numel(c.first)));
    const double gap = std::fabs(std::log(n / std::max(1.0, covered)));
    if (gap < best_gap) {
      best_gap = gap;
      best = &c;
    }
  }
  const OpKind kind = transform ? OpKind::kCopy : op_kind_for_family(cls.family);
  MemoryWork w;
  w.kind = kind;
  w.vec.dtype = DType::kUnknown;
  if (best_gap > std::log(kHelperReach)) {
    // No operand is the size of what the launch covers: the launch is the helper's work.
    const auto elements = static_cast<std::int64_t>(std::max(1.0, covered));
    w.vec.rows = static_cast<std::int64_t>(std::max<std::uint64_t>(1, kernel.grid.volume()));
    w.vec.cols = std::max<std::int64_t>(1, elements / w.vec.rows);
    w.vec.bytes_read = w.vec.bytes_written = static_cast<double>(elements) * best->second;
    return w;
  }
  const std::int64_t n = trace_inputs::numel(best->first);
  const double bytes = static_cast<double>(n) * best->second;
  w.vec.cols = best->first.empty() ? 1 : std::max<std::int64_t>(1, best->first.back());
  w.vec.rows = std::max<std::int64_t>(1, n / w.vec.cols);
  w.vec.bytes_read = w.vec.bytes_written = bytes;
  return w;
}

}  // namespace pm2lat::reports::trace_rules
