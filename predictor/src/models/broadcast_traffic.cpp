#include "pm2lat/models/broadcast_traffic.h"

namespace pm2lat {
namespace {

constexpr double kBytesPerMb = 1024.0 * 1024.0;
// The share of L2 a reused operand can count on. The A100's and H100's L2 is two partitions
// and a line read by SMs on both sides is held in both (NVIDIA A100 Tensor Core GPU
// Architecture, "L2 cache"); and under a stream of single-use lines an element survives
// until its reuse only when the distance is well under the capacity. Half: BERT's position
// add (reuse distance exactly the V100's 6 MB L2) runs as a full add on the V100.
constexpr double kReusableL2Share = 0.5;

bool misses_l2(const VectorShape& v, const DeviceSpec& gpu) noexcept {
  return v.broadcast_reread_bytes > 0 && gpu.l2_mb > 0 &&
         v.broadcast_reuse_bytes > kReusableL2Share * gpu.l2_mb * kBytesPerMb;
}

}  // namespace

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
