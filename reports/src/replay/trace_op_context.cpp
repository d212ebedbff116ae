#include "pm2lat/reports/replay/trace_op_context.h"

#include <algorithm>
#include <cmath>

#include "op_inputs.h"
#include "op_shape_rules.h"
#include "pm2lat/classifier.h"
#include "pm2lat/models/launch_work.h"
#include "pm2lat/models/physical_bounds.h"
#include "pm2lat/reports/replay/trace_op_linker.h"

namespace pm2lat::reports {
namespace {

using namespace trace_rules;

bool gemm_family(KernelFamily f) {
  return f == KernelFamily::kGemm || f == KernelFamily::kGemv || f == KernelFamily::kSplitKReduce ||
         f == KernelFamily::kTritonTemplate;
}

bool has_inputs(const TraceOp& op) {
  return std::any_of(op.inputs.begin(), op.inputs.end(),
                     [](const OpInput& in) { return !in.shapes.empty(); });
}

std::vector<ChainOp> chain_of(const KinetoTrace& trace, const TraceKernel& kernel) {
  std::vector<ChainOp> chain;
  for (const TraceOp* op : op_chain(trace, kernel)) chain.push_back({op, trace.strings[op->name]});
  return chain;
}

// cuDNN's set-up kernels inside a convolution (classifier.h), or a launch too small to be
// the convolution itself.
bool is_conv_helper(std::string_view name, const TraceKernel& kernel) {
  if (names_conv_setup_kernel(name)) return true;
  return kernel.grid.volume() * kernel.block.volume() < 64;
}

void scale_work(MemoryWork& w, double f, bool rows) {
  w.vec.bytes_read *= f;
  w.vec.bytes_written *= f;
  // Each piece re-reads its share of a broadcast operand; the distance between reuses is the
  // same in every piece.
  w.vec.broadcast_reread_bytes *= f;
  std::int64_t& dim = rows ? w.vec.rows : w.vec.cols;
  dim = std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(dim) * f));
}

// ATen's TensorIterator indexes operands with 32-bit byte offsets: an operand spanning more
// than 2^31 - 1 bytes is halved (along its largest dimension) until every piece fits, and
// each piece is one launch of the kernel.
constexpr double kMax32BitOffsetBytes = 2147483647.0;

double tensor_iterator_pieces(double largest_operand_bytes) {
  if (!(largest_operand_bytes > kMax32BitOffsetBytes)) return 1;
  return std::exp2(std::ceil(std::log2(largest_operand_bytes / kMax32BitOffsetBytes)));
}

// An operator on a tensor too big for 32-bit indexing runs as several launches of the same
// kernel, each over a part of it: scale the operator's bytes to the part this launch covers.
// Elementwise launches say how many elements they cover; a reduction's pieces follow from
// its input's size.
void scale_to_launch(MemoryWork& w, std::string_view kernel_name, const TraceKernel& kernel,
                     std::string_view aten) {
  const double covered = elementwise_launch_elements(kernel_name, kernel);
  const double elements = static_cast<double>(w.vec.rows) * static_cast<double>(w.vec.cols);
  if (covered > 0 && elements > 0 && covered < 0.9 * elements) {
    scale_work(w, covered / elements, true);
    return;
  }
  if (w.kind == OpKind::kReduction && is_tensor_iterator_reduction(aten)) {
    const double pieces = tensor_iterator_pieces(w.vec.bytes_read);
    if (pieces > 1) scale_work(w, 1.0 / pieces, false);
  }
}

// Kernels launched inside an operator no rule knows (a library or custom op) share its work:
// each is charged its share of the threads all of them launched.
void share_among_kernels(MemoryWork& w, const KinetoTrace& trace, const TraceKernel& kernel,
                         const TraceOp& owner, const std::vector<double>* op_threads) {
  if (op_threads == nullptr || kernel.op < 0) return;
  const auto i = static_cast<std::size_t>(kernel.op);
  if (i >= op_threads->size() || &trace.ops[i] != &owner) return;
  const double all = (*op_threads)[i];
  const double mine = launched_threads(kernel.grid, kernel.block);
  if (all > mine && mine > 0) scale_work(w, mine / all, true);
}

OpContext from_memory_work(const MemoryWork& w, std::string_view name, const char* source) {
  OpContext op;
  op.kind = w.kind;
  op.vec = w.vec;
  op.name = std::string(name);
  op.source = source;
  return op;
}

bool is_aten(std::string_view op_name) { return op_name.rfind("aten::", 0) == 0; }

}  // namespace

std::vector<double> launched_threads_per_op(const KinetoTrace& trace) {
  std::vector<double> threads(trace.ops.size(), 0.0);
  for (const TraceKernel& k : trace.kernels) {
    if (k.op < 0 || static_cast<std::size_t>(k.op) >= threads.size()) continue;
    threads[static_cast<std::size_t>(k.op)] += launched_threads(k.grid, k.block);
  }
  return threads;
}

void charge_split_k_slices(OpContext& op, std::int32_t slices, KernelFamily family) {
  if (op.kind != OpKind::kGemm || !op.gemm.valid() || slices < kFewestSplitKSlices) return;
  op.gemm.algo_split_k = slices;
  op.vec = gemm_helper_work(op.gemm, family);
}

OpContext op_context_for_kernel(const KinetoTrace& trace, const TraceKernel& kernel,
                                const KernelClass& cls, std::vector<std::int64_t>* int_args,
                                const std::vector<double>* op_threads) {
  const std::vector<ChainOp> chain = chain_of(trace, kernel);
  OpContext op;
  op.source = "aten";
  if (!chain.empty()) op.name = std::string(chain.front().name);

  if (cls.family == KernelFamily::kCollective) {
    op.kind = OpKind::kCollective;
    op.source = "nccl";
    op.collective = collective_shape(kernel, chain, trace.world_size);
    return op;
  }

  const bool inside_linear = std::any_of(
      chain.begin(), chain.end(), [](const ChainOp& c) { return aten_name(c.name) == "linear"; });

  // Innermost op that this kind of kernel has a reading for; wrappers without one are
  // looked through, but never past an op that recorded shapes of its own (that op owns the
  // kernel even if no rule knows it).
  for (const ChainOp& c : chain) {
    const std::string_view a = aten_name(c.name);
    const TraceOp& o = *c.op;
    if (is_conv_op(a) && is_conv_helper(trace.strings[kernel.name], kernel)) {
      if (auto w = helper_work(o, c.name, cls, kernel)) return from_memory_work(*w, c.name, "aten");
    } else if (gemm_family(cls.family) ||
               (cls.family == KernelFamily::kUnknown && is_matmul_op(a))) {
      if (is_matmul_op(a)) {
        if (auto g = gemm_shape(o, a, inside_linear)) {
          op.kind = OpKind::kGemm;
          op.name = std::string(c.name);
          op.gemm = *g;
          op.gemm.compute = gemm_compute_type(g->a, cls);
          if (cls.family == KernelFamily::kGemv || cls.family == KernelFamily::kSplitKReduce)
            op.vec = gemm_helper_work(*g, cls.family);
          return op;
        }
      } else if (is_conv_op(a)) {
        if (auto conv = conv_shape(o, a)) {
          // cuDNN runs some convolutions as plain GEMM kernels: model them as that GEMM.
          op.kind = OpKind::kGemm;
          op.name = std::string(c.name);
          op.gemm = implicit_gemm(*conv, a, cls, kernel.grid);
          op.gemm.compute = gemm_compute_type(conv->dtype, cls);
          if (cls.family == KernelFamily::kGemv || cls.family == KernelFamily::kSplitKReduce)
            op.vec = gemm_helper_work(op.gemm, cls.family);
          return op;
        }
      }
    } else if (cls.family == KernelFamily::kConv) {
      if (is_conv_op(a)) {
        if (auto conv = conv_shape(o, a)) {
          op.kind = OpKind::kConv;
          op.name = std::string(c.name);
          op.conv = *conv;
          return op;
        }
      }
    } else if (cls.family == KernelFamily::kAttention) {
      if (is_attention_op(c.name)) {
        if (auto att = attention_shape(o, c.name)) {
          op.kind = OpKind::kAttention;
          op.name = std::string(c.name);
          op.attention = *att;
          if (cls.backward) op.attention.backward = true;
          return op;
        }
      }
    } else {
      // Memory-bound kernels: helpers inside heavy ops move one of its operands.
      std::optional<MemoryWork> w;
      if (is_conv_op(a) || is_matmul_op(a) || is_attention_op(c.name)) {
        w = helper_work(o, c.name, cls, kernel);
      } else if (has_inputs(o)) {
        w = memory_work(o, c.name, cls);
        if (w) {
          scale_to_launch(*w, trace.strings[kernel.name], kernel, a);
          if (!is_aten(c.name)) share_among_kernels(*w, trace, kernel, o, op_threads);
          if (int_args != nullptr && (cls.family == KernelFamily::kTritonPointwise ||
                                      cls.family == KernelFamily::kTritonReduction)) {
            for (std::size_t i = 0; i < o.inputs.size(); ++i) {
              if (auto v = trace_inputs::concrete_int(o, i)) int_args->push_back(*v);
            }
          }
        }
      }
      auto fits = [&](const MemoryWork& x) {
        return work_consistent_with_launch(x.vec.bytes(), kernel.grid, kernel.block, cls);
      };
      if (w && !fits(*w) && !is_aten(c.name)) {
        // A library op's buffers (caches, tables) are no measure of one kernel's work.
        if (auto operands = work_without_buffers(o, cls)) w = operands;
      }
      if (w) {
        if (fits(*w)) return from_memory_work(*w, c.name, "aten");
        // More than the launch can move, or too little for a launch sized by it: the operator
        // describes work this kernel did not do. The launch geometry stands in (below); the
        // record says why it has no work.
        op.name = std::string(c.name);
        op.source = kRejectedWorkSource;
        break;
      }
    }
    if (has_inputs(o)) break;
  }

  // Nothing recorded: what the launch itself implies.
  const std::size_t lists = chain.empty() ? 0 : trace_inputs::tensor_list_count(*chain.front().op);
  if (auto w = geometry_work(trace.strings[kernel.name], cls, kernel, lists, aten_name(op.name))) {
    return from_memory_work(*w, op.name,
                            op.source == kRejectedWorkSource ? kRejectedWorkSource : "geometry");
  }
  // The op's kind from the kernel, without a shape (the predictor flags it no_shape).
  switch (cls.family) {
    case KernelFamily::kGemm:
    case KernelFamily::kGemv:
    case KernelFamily::kSplitKReduce:
    case KernelFamily::kTritonTemplate: op.kind = OpKind::kGemm; break;
    case KernelFamily::kConv: op.kind = OpKind::kConv; break;
    case KernelFamily::kAttention: op.kind = OpKind::kAttention; break;
    default: break;
  }
  return op;
}

}  // namespace pm2lat::reports
