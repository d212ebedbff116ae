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

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/op_context.h"

namespace pm2lat {

// The bytes `v` reads from DRAM on `gpu`: its stated reads, plus the broadcast operand's
// re-reads where their reuse distance exceeds the GPU's L2 (no L2 size known: no re-reads).
double broadcast_bytes_read(const VectorShape& v, const DeviceSpec& gpu) noexcept;

// Whether `record` states a broadcast operand that `gpu`'s L2 cannot hold between reuses.
bool rereads_broadcast(const KernelRecord& record, const DeviceSpec& gpu) noexcept;

// `record` with its broadcast re-reads on `gpu` counted in its bytes read: what the models,
// which know bytes, not reuse, are asked about.
KernelRecord with_broadcast_rereads(const KernelRecord& record, const DeviceSpec& gpu);

}  // namespace pm2lat
