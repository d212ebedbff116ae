// Rules that turn one recorded operator (name + inputs) into the shape its kernels work on.
// One file per kind of work; trace_op_context.cpp picks the rule from the kernel's class and
// the operator.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "pm2lat/kernel_class.h"
#include "pm2lat/op_context.h"
#include "pm2lat/reports/replay/kineto_trace.h"

namespace pm2lat::reports::trace_rules {

// An op around a kernel with its name, innermost first in a chain.
struct ChainOp {
  const TraceOp* op = nullptr;
  std::string_view name;
};

// "aten::addmm" -> "addmm"; other namespaces are kept ("fbgemm::foo" stays as is).
std::string_view aten_name(std::string_view op_name);

// --- matrix multiply (gemm_op_shape.cpp) ---
bool is_matmul_op(std::string_view aten);
// GEMM of aten::mm/addmm/bmm/baddbmm/matmul/linear/_addmm_activation/_scaled_mm/mv/addmv.
// `inside_linear`: an enclosing aten::linear says the weight is transposed when the trace
// recorded no strides.
std::optional<GemmShape> gemm_shape(const TraceOp& op, std::string_view aten, bool inside_linear);
// The math type of a GEMM: TF32 when FP32 data runs on tensor cores, FP32 accumulation for
// 16-bit and 8-bit data.
DType gemm_compute_type(DType operands, const KernelClass& cls);

// --- convolution (conv_op_shape.cpp) ---
bool is_conv_op(std::string_view aten);
std::optional<ConvShape> conv_shape(const TraceOp& op, std::string_view aten);
// The GEMM a convolution is computed as (implicit GEMM), for GEMM-named kernels that cuDNN
// launches: fprop for forward ops; for backward ops, dgrad or wgrad, whichever tile count
// matches the kernel's grid.
GemmShape implicit_gemm(const ConvShape& conv, std::string_view aten, const KernelClass& cls,
                        const Dim3& grid);

// --- attention (attention_op_shape.cpp) ---
bool is_attention_op(std::string_view op_name);
std::optional<AttentionShape> attention_shape(const TraceOp& op, std::string_view op_name);

// --- NCCL collectives (collective_op_shape.cpp) ---
// Payload from the kernel's own collective args, else the nearest enclosing
// record_param_comms / nccl:* op (args or input dims).
CollectiveShape collective_shape(const TraceKernel& kernel, const std::vector<ChainOp>& chain,
                                 std::int32_t world_size);

// --- memory-bound work (memory_op_shape.cpp) ---
struct MemoryWork {
  OpKind kind = OpKind::kElementwise;
  VectorShape vec;
};
// Bytes and the [rows, cols] view of elementwise, reduction, softmax, norm, embedding, copy,
// pooling, optimizer and Triton operators. nullopt when the op recorded nothing usable.
std::optional<MemoryWork> memory_work(const TraceOp& op, std::string_view op_name,
                                      const KernelClass& cls);
// The operator kind a memory-bound kernel family works as (reduction, copy, ...).
OpKind op_kind_for_family(KernelFamily f);
// The work of an operator's operands without its buffers: tensors far larger than the others
// that it indexes into (a KV cache, an embedding table) and whose size is no measure of what
// one kernel moves: a scatter of new keys into a cache reads the keys and writes as much.
// nullopt when the op has no such buffer.
std::optional<MemoryWork> work_without_buffers(const TraceOp& op, const KernelClass& cls);
// ATen reductions computed by TensorIterator's reduce kernels (sum, mean, amax, norm, ...).
bool is_tensor_iterator_reduction(std::string_view aten);

// --- helpers inside heavy ops (helper_op_shape.cpp) ---
// A memory-bound helper kernel inside a heavy op (layout transforms in a convolution, a bias
// copy in addmm): the operand whose size best matches the launch geometry, read and written;
// when none is near what the launch covers, the launch's own elements.
std::optional<MemoryWork> helper_work(const TraceOp& op, std::string_view op_name,
                                      const KernelClass& cls, const TraceKernel& kernel);

// --- launch geometry (geometry_shape.cpp) ---
// Estimates for kernels whose operator recorded no shapes, from what ATen kernels' launch
// configuration and template arguments imply (elementwise block work, multi-tensor-apply
// chunks). nullopt when the kernel is not one whose geometry is understood.
std::optional<MemoryWork> geometry_work(std::string_view kernel_name, const KernelClass& cls,
                                        const TraceKernel& kernel, std::size_t tensor_lists,
                                        std::string_view op_name);
// Elements an ATen elementwise kernel's launch covers (blocks x threads x elements per
// thread), 0 for other kernels. Big tensors are processed by several such launches (32-bit
// indexing), each covering a part of the operator's tensors.
double elementwise_launch_elements(std::string_view kernel_name, const TraceKernel& kernel);

}  // namespace pm2lat::reports::trace_rules
