// The backward pass and the gradient accumulation of NeuSight model-file rows, the way
// PyTorch's autograd engine runs them in loss.backward().
#include "lowering_builders.h"

namespace pm2lat::reports::lowering {
namespace {

// The backward of the benchmark's loss: cross_entropy(logits.view(-1, V), labels) is
// computed outside the timed forward, and loss.backward() runs nll_loss's backward (zero the
// logits' gradient, scatter at the labels) and log_softmax's backward (reads the gradient
// and the saved log-probabilities, writes the logits' gradient). Source: sitar-lab/NeuSight
// neusight/Tracing/trace.py, measure_e2e.
std::vector<LoweredOp> loss_backward(const ModelOpRow& r) {
  const TensorDims* logits = first_tensor(r);
  if (logits == nullptr || logits->size() < 2) return {};
  const double n = numel(*logits);
  const std::int64_t rows = leading(*logits), cols = last_dim(*logits);
  const double b = n * 4;
  return {memory_bound(OpClass::kOther, OpGroup::kLoss, "zero", KernelFamily::kMemset,
                       OpKind::kMemset, "zeros", rows, cols, 0, b),
          memory_bound(OpClass::kOther, OpGroup::kLoss, "scatter", KernelFamily::kEmbedding,
                       OpKind::kEmbedding, "scatter", rows, 1,
                       static_cast<double>(rows) * kIndexBytes, static_cast<double>(rows) * 4),
          memory_bound(OpClass::kOther, OpGroup::kLoss, "log_softmax", KernelFamily::kSoftmax,
                       OpKind::kSoftmax, "softmax", rows, cols, 2 * b, b)};
}

std::vector<LoweredOp> gemm_backward(const ModelOpRow& r, OpGroup g, const RowContext& ctx) {
  if (r.M <= 0 || r.N <= 0 || r.K <= 0) return {};
  std::vector<LoweredOp> ops;
  if (g == OpGroup::kLinear) {
    // Forward y[M,K] = x[M,N] W. nn.Linear stores W as [K,N] (the forward used W^T):
    //   dgrad dx[M,N] = dy W       over K, plain operands          (cuBLAS nn)
    //   wgrad dW[K,N] = dy^T x     over M, first operand transposed (cuBLAS nt)
    // Conv1D (addmm) stores W as [N,K]: dgrad dy W^T (tn), wgrad x^T dy (nt).
    const bool conv1d = r.op_kind != "linear";
    const std::int64_t rows = r.M * std::max<std::int64_t>(1, r.B);
    ops.push_back(gemm(g, "dgrad", "bmm", 1, rows, r.N, r.K, false, conv1d, false));
    if (conv1d) {
      ops.push_back(gemm(g, "wgrad", "bmm", 1, r.N, r.K, rows, true, false, false));
    } else {
      ops.push_back(gemm(g, "wgrad", "bmm", 1, r.K, r.N, rows, true, false, false));
    }
    // Bias gradient: a column reduction of dy.
    ops.push_back(memory_bound(
        OpClass::kGemm, g, "bias", KernelFamily::kReduction, OpKind::kReduction, "sum", rows, r.K,
        static_cast<double>(rows) * static_cast<double>(r.K) * 4, static_cast<double>(r.K) * 4));
    return ops;
  }
  // C[B,M,K] = A[B,M,N] B[B,N,K]: dA = dC B^T (over K), dB = A^T dC (over M). Where the
  // forward read B through a transposed view (attention's Q K^T), B^T is stored plain.
  ops.push_back(
      gemm(g, "dgrad", "bmm", r.B, r.M, r.N, r.K, false, !ctx.second_operand_transposed, false));
  ops.push_back(gemm(g, "wgrad", "bmm", r.B, r.N, r.K, r.M, true, false, false));
  for (LoweredOp& copy : matmul_copies(OpClass::kGemm, g, "reshape", ctx, element_bytes(r.dtype)))
    ops.push_back(std::move(copy));
  return ops;
}

std::vector<LoweredOp> elementwise_backward(const ModelOpRow& r, OpClass c, OpGroup g, double es) {
  const TensorDims& out = *r.output;
  const double n = numel(out);
  const std::int64_t rows = leading(out), cols = last_dim(out);
  const Inputs in = tensor_inputs(r, es);
  const std::string& k = r.op_kind;
  // The gradient of a sum passes through to both operands without a kernel.
  if (k == "add" || k == "sub") return {cpu_only(r, g, HostWork::kView)};
  if (k == "lt" || k == "gt" || k == "eq" || k == "ne" || k == "le" || k == "ge") return {};
  if (k == "where" || k == "masked_fill" || k == "masked_fill_") {
    // The gradient where the condition keeps the operand, zero elsewhere.
    return {elementwise(c, g, "bwd", "mul", rows, cols, n * es + n, n * es)};
  }
  if (k == "pow" && in.tensors < 2) {
    // pow_backward: grad * (exponent * x^(exponent - 1)): a power, a scale, a product.
    return {elementwise(c, g, "bwd", "powu", rows, cols, n * es, n * es),
            elementwise(c, g, "bwd", "mulu", rows, cols, n * es, n * es),
            elementwise(c, g, "bwd", "mul", rows, cols, 2 * n * es, n * es)};
  }
  // Activations: one kernel reading the gradient and the saved input or output. A product
  // or quotient with a scalar scales the gradient; with another tensor, each operand's
  // gradient is the incoming gradient times the other operand.
  const bool activation = k == "gelu" || k == "tanh" || k == "relu" || k == "sigmoid";
  if (activation) return {elementwise(c, g, "bwd", k, rows, cols, 2 * n * es, n * es)};
  if (in.tensors < 2) return {elementwise(c, g, "bwd", "mulu", rows, cols, n * es, n * es)};
  // One product per operand: the same kernel for each.
  return std::vector<LoweredOp>(static_cast<std::size_t>(in.tensors),
                                elementwise(c, g, "bwd", "mul", rows, cols, 2 * n * es, n * es));
}

// split / chunk / unbind return views of one tensor, but their backward is not a view:
// autograd joins the pieces' gradients into a gradient of the whole input (split_backward
// and unbind_backward call at::cat / at::stack: one copy kernel reading every piece and
// writing the whole). Source: pytorch/pytorch tools/autograd/derivatives.yaml,
// torch/csrc/autograd/FunctionsManual.cpp (PyTorch 2.1, the benchmark's version).
bool returns_pieces(const std::string& k) { return k == "split" || k == "chunk" || k == "unbind"; }

LoweredOp concatenate_pieces(const ModelOpRow& r, double es) {
  const TensorDims* whole = first_tensor(r);
  const double n = whole ? numel(*whole) : 0.0;
  const std::int64_t rows = whole ? leading(*whole) : 1, cols = whole ? last_dim(*whole) : 1;
  return memory_bound(OpClass::kOther, OpGroup::kCopy, "cat", KernelFamily::kCopy, OpKind::kCopy,
                      "cat", rows, cols, n * es, n * es);
}

}  // namespace

std::vector<LoweredOp> backward(const ModelOpRow& r, const RowContext& ctx) {
  const OpClass c = op_class_of(r.op_class);
  const OpGroup g = op_group_of(r, ctx);
  const std::string& cl = r.op_class;
  if (cl == "io") return r.op_kind == "output" ? loss_backward(r) : std::vector<LoweredOp>{};
  if (cl == "host" || cl == "cast") return {};
  const double es = element_bytes(r.dtype);
  if (cl == "view") {
    if (returns_pieces(r.op_kind)) return {concatenate_pieces(r, es)};
    return {cpu_only(r, g, HostWork::kView)};  // the gradient of a view is a view
  }
  if (cl == "gemm") return gemm_backward(r, g, ctx);
  if (ctx.masked_indexing) {
    // The forward turned the mask into indices: the backward gathers and scatters rows by
    // them without another count.
    auto ops = masked_indexing(r, es, r.op_kind != "getitem" && r.op_kind != "index");
    ops.erase(ops.begin());
    return ops;
  }
  if (!r.output) return {};
  const TensorDims& out = *r.output;
  const double n = numel(out);
  const std::int64_t rows = leading(out), cols = last_dim(out);
  if (cl == "elementwise") return elementwise_backward(r, c, g, es);
  if (cl == "softmax") {
    // dX = y * (dY - sum(dY * y)) in two kernels: softmax's backward first forms the product
    // dY * y (an elementwise kernel), then the softmax backward kernel reads it and y and
    // writes dX; log_softmax's backward reads dY directly. Source: pytorch/pytorch
    // aten/src/ATen/native/cuda/SoftMax.cu, softmax_backward_cuda_out (`tmp = grad * output`)
    // and log_softmax_backward_cuda_out (PyTorch 2.1, the benchmark's version).
    const LoweredOp kernel = memory_bound(c, g, "bwd", KernelFamily::kSoftmax, OpKind::kSoftmax,
                                          "softmax", rows, cols, 2 * n * es, n * es);
    if (r.op_kind == "log_softmax") return {kernel};
    return {elementwise(c, g, "bwd", "mul", rows, cols, 2 * n * es, n * es), kernel};
  }
  if (cl == "layernorm") {  // input gradient, then gamma/beta gradients
    return {memory_bound(c, g, "dgrad", KernelFamily::kLayerNorm, OpKind::kLayerNorm, "ln", rows,
                         cols, 2 * n * es, n * es),
            memory_bound(c, g, "wgrad", KernelFamily::kLayerNorm, OpKind::kLayerNorm, "ln", rows,
                         cols, 2 * n * es, 2.0 * static_cast<double>(cols) * es)};
  }
  if (cl == "embedding") {
    // Dense embedding backward: zero the table's gradient, then scatter-add the rows.
    const auto table = embedding_table(r);
    const double table_bytes = table ? numel(*table) * es : n * es;
    return {memory_bound(c, g, "zero", KernelFamily::kMemset, OpKind::kMemset, "embedding", rows,
                         cols, 0, table_bytes),
            memory_bound(c, g, "scatter", KernelFamily::kEmbedding, OpKind::kEmbedding, "embedding",
                         rows, cols, n * es + static_cast<double>(rows) * kIndexBytes, n * es)};
  }
  if (cl == "memory") {
    if (r.op_kind == "dropout") {  // masked scale: reads the gradient and the kept mask
      return {elementwise(c, g, "bwd", "mul", rows, cols, n * es + n, n * es)};
    }
    if (is_fill(r.op_kind)) return {};
    return {cpu_only(r, g, HostWork::kView)};
  }
  return {};
}

std::vector<LoweredOp> accumulate(const ModelOpRow& r, const RowContext& ctx) {
  const OpClass c = op_class_of(r.op_class);
  const OpGroup g = op_group_of(r, ctx);
  // AccumulateGrad: grad += new gradient for every parameter of the operator (the benchmark
  // runs backward repeatedly without clearing gradients, so every step accumulates).
  auto acc = [&](std::int64_t rows, std::int64_t cols) {
    const double b = static_cast<double>(rows) * static_cast<double>(cols) * 4;
    return elementwise(c, g, "acc", "add", rows, cols, 2 * b, b);
  };
  if (g == OpGroup::kLinear && r.N > 0 && r.K > 0) return {acc(r.K, r.N), acc(1, r.K)};
  if (r.op_class == "layernorm" && r.output) {
    const std::int64_t h = last_dim(*r.output);
    return {acc(1, h), acc(1, h)};
  }
  if (r.op_class == "embedding") {
    if (const auto t = embedding_table(r); t && t->size() == 2) return {acc((*t)[0], (*t)[1])};
  }
  return {};
}

}  // namespace pm2lat::reports::lowering
