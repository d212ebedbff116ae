#include "pm2lat/models/broadcast_traffic.h"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace pm2lat {
namespace {

double product(std::span<const std::int64_t> d, std::size_t from) {
  double p = 1;
  for (std::size_t i = from; i < d.size(); ++i) p *= static_cast<double>(d[i]);
  return p;
}

// The share of L2 a reused operand can count on. The A100's and H100's L2 is two partitions
// and a line read by SMs on both sides is held in both (NVIDIA A100 Tensor Core GPU
// Architecture, "L2 cache"); and under a stream of single-use lines an element survives
// until its reuse only when the distance is well under the capacity. Half: BERT's position
// add (6 MiB between reuses, about the V100's whole 6 MB L2) runs as a full add on the V100.
constexpr double kReusableL2Share = 0.5;

bool misses_l2(const VectorShape& v, const DeviceSpec& gpu) noexcept {
  return v.broadcast_reread_bytes > 0 && gpu.l2_bytes() > 0 &&
         v.broadcast_reuse_bytes > kReusableL2Share * gpu.l2_bytes();
}

}  // namespace

void state_broadcast_reuse(std::span<const PointwiseOperand> operands,
                           std::span<const std::int64_t> out, double out_element_bytes,
                           VectorShape& v) noexcept {
  const double n_out = product(out, 0);
  double streamed = out_element_bytes;  // per output element: the output and full operands
  for (const PointwiseOperand& o : operands) {
    if (o.shape.size() > out.size()) return;
    if (product(o.shape, 0) == n_out) streamed += o.element_bytes;
  }
  double reread = 0, shortest = std::numeric_limits<double>::infinity();
  for (const PointwiseOperand& o : operands) {
    const double n = product(o.shape, 0);
    if (n <= 1 || n >= n_out) continue;
    const std::size_t pad = out.size() - o.shape.size();
    std::size_t inner = out.size();  // none yet
    for (std::size_t i = out.size(); i-- > 0;) {
      const std::int64_t own = i < pad ? 1 : o.shape[i - pad];
      if (own != out[i] && own != 1) return;  // not broadcastable to `out`
      if (own == 1 && out[i] > 1 && inner == out.size()) inner = i;
    }
    if (inner == out.size()) continue;
    // The operand's own dimensions inner to that step: all of them when it lacks the
    // dimension only by having fewer (a [S, H] operand over [B, S, H]).
    const std::size_t step = inner + 1;
    const double own_block = product(o.shape, step > pad ? step - pad : 0);
    const double distance = product(out, step) * streamed + own_block * o.element_bytes;
    if (distance < kAlwaysResidentBytes) continue;
    reread += (n_out - n) * o.element_bytes;
    shortest = std::min(shortest, distance);
  }
  if (reread <= 0) return;
  v.broadcast_reread_bytes = reread;
  v.broadcast_reuse_bytes = shortest;
}

double broadcast_bytes_read(const VectorShape& v, const DeviceSpec& gpu) noexcept {
  return v.bytes_read + (misses_l2(v, gpu) ? v.broadcast_reread_bytes : 0.0);
}

bool rereads_broadcast(const KernelRecord& record, const DeviceSpec& gpu) noexcept {
  return misses_l2(record.op.vec, gpu);
}

KernelRecord with_broadcast_rereads(const KernelRecord& record, const DeviceSpec& gpu) {
  KernelRecord r = record;
  r.op.vec.bytes_read = broadcast_bytes_read(record.op.vec, gpu);
  // Counted now: a second look must not count them again.
  r.op.vec.broadcast_reread_bytes = 0;
  r.op.vec.broadcast_reuse_bytes = 0;
  return r;
}

}  // namespace pm2lat
