// DRAM traffic of an operand broadcast over a memory-bound kernel's output, on one GPU.
//
// PyTorch's elementwise kernels walk the output in order; an operand broadcast over an output
// dimension (a [1, S, H] position embedding added to [B, S, H] activations, a [B, 1, S, S]
// mask added to [B, heads, S, S] scores) is used again every step of that dimension. Between
// two uses of one of its elements the kernel streams one step of every operand and of the
// output: the reuse distance (VectorShape::broadcast_reuse_bytes). Where it fits in L2 the
// reuse hits and the operand costs its own bytes once; where it does not, every use reads it
// from DRAM again, as if it were materialised. NeuSight's model runs show both sides of the
// line: the [B, 1, 2048, 2048] mask add of OPT (50 MB between reuses) runs at the speed of a
// full three-tensor add on every GPU timed (V100 6 MB L2 to A100 40 MB), BERT's [1, 512, 1024]
// position add (6.3 MB) at a full add's speed on the 2-6 MB L2 GPUs and faster on the A100
// (40 MB), and BERT's [B, 1, 1, 512] attention mask (6 KB) at a two-tensor speed everywhere.
#pragma once

#include <cstdint>
#include <span>

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/op_context.h"

namespace pm2lat {

// One operand of a pointwise kernel: its shape (broadcasting aligns shapes from the right)
// and its element size.
struct PointwiseOperand {
  std::span<const std::int64_t> shape;
  double element_bytes = 4;
};

// Broadcast operands reused within this many bytes are left out: the share the predictor
// counts on (half, broadcast_traffic.cpp) of the smallest L2 in the catalogue (2 MB: the P4,
// A2, A16). Any L2 holds them.
inline constexpr double kAlwaysResidentBytes = 1e6;

// States in `v` the reuse of the operands broadcast over `out` (fewer elements than it, more
// than one), whose elements are `out_element_bytes` each. An element of such an operand is
// used again every step of the innermost output dimension it lacks; in between, the kernel
// streams that dimension's inner block of the output and of every full-size operand, and the
// operand's own block. Of the operands whose distance reaches kAlwaysResidentBytes the
// re-reads add up and the shortest distance stands for them all. Nothing is stated when an
// operand does not broadcast to `out`.
void state_broadcast_reuse(std::span<const PointwiseOperand> operands,
                           std::span<const std::int64_t> out, double out_element_bytes,
                           VectorShape& v) noexcept;

// The bytes `v` reads from DRAM on `gpu`: its stated reads, plus the broadcast operand's
// re-reads where their reuse distance exceeds the GPU's L2 (no L2 size known: no re-reads).
double broadcast_bytes_read(const VectorShape& v, const DeviceSpec& gpu) noexcept;

// Whether `record` states a broadcast operand that `gpu`'s L2 cannot hold between reuses.
bool rereads_broadcast(const KernelRecord& record, const DeviceSpec& gpu) noexcept;

// `record` with its broadcast re-reads on `gpu` counted in its bytes read: what the models,
// which know bytes, not reuse, are asked about.
KernelRecord with_broadcast_rereads(const KernelRecord& record, const DeviceSpec& gpu);

}  // namespace pm2lat
