// NCCL payloads. PyTorch states them in three places, most precise first: the kernel event's
// own collective args (newer Kineto), the record_param_comms op around the launch, and the
// input dims of the "nccl:<collective>" annotation.
#include <algorithm>
#include <array>
#include <string>

#include "op_inputs.h"
#include "op_shape_rules.h"

namespace pm2lat::reports::trace_rules {
namespace {

// Element size of the dtype names c10d uses ("Float", "BFloat16", "Half", "Long", "Byte"...):
// those the element types of op inputs do not spell, then theirs (parse_dtype reads "Double",
// "Long", "Half", "BFloat16", "Short", "Char" and "Bool" whatever their case).
double comms_element_bytes(const std::string& dtype) {
  if (dtype == "ComplexFloat") return 8;
  if (dtype == "Byte" || dtype.rfind("Float8", 0) == 0) return 1;
  if (dtype.empty()) return 4;
  return trace_inputs::element_bytes(dtype);
}

bool from_args(const CollectiveArgs& c, CollectiveShape& out) {
  if (!c.present()) return false;
  const double elems = static_cast<double>(std::max(c.in_elements, c.out_elements));
  out.bytes = std::max(0.0, elems) * comms_element_bytes(c.dtype);
  if (c.group_size > 0) out.ranks = c.group_size;
  return true;
}

// Ops that describe a collective (and not, say, the training step around it).
bool is_comms_op(std::string_view name) {
  static constexpr std::array<std::string_view, 11> kCommsWords{
      "nccl",      "c10d",           "record_param_comms", "all_reduce", "allreduce", "all_gather",
      "allgather", "reduce_scatter", "all_to_all",         "alltoall",   "broadcast"};
  return std::ranges::any_of(
      kCommsWords, [name](std::string_view w) { return name.find(w) != std::string_view::npos; });
}

}  // namespace

CollectiveShape collective_shape(const TraceKernel& kernel, const std::vector<ChainOp>& chain,
                                 std::int32_t world_size) {
  CollectiveShape s;
  s.ranks = std::max(0, world_size);
  if (from_args(kernel.collective, s)) return s;
  for (const ChainOp& c : chain) {
    if (from_args(c.op->collective, s)) return s;
  }
  for (const ChainOp& c : chain) {
    if (!is_comms_op(c.name)) continue;
    double bytes = 0;
    for (const auto& t : trace_inputs::all_tensors(*c.op)) bytes += t.bytes();
    if (bytes > 0) {
      s.bytes = bytes;
      return s;
    }
  }
  return s;
}

}  // namespace pm2lat::reports::trace_rules
