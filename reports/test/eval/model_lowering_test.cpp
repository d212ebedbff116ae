// Lowering NeuSight model-file rows to kernels: GEMM layouts of the backward pass, the
// benchmark's loss, casts, and the masked indexing of mixture-of-experts routing.
#include <gtest/gtest.h>

#include "pm2lat/calibrate/neusight_models.h"
#include "pm2lat/reports/eval/model_lowering.h"

namespace pm2lat::reports {
namespace {

using calibrate::ModelOpRow;
using calibrate::TensorDims;

ModelOpRow row(const char* kind, const char* cls, std::vector<std::optional<TensorDims>> inputs,
               std::optional<TensorDims> output, const char* dtype = "fp32") {
  ModelOpRow r;
  r.op_kind = kind;
  r.op_class = cls;
  r.inputs = std::move(inputs);
  r.output = std::move(output);
  r.dtype = dtype;
  return r;
}

ModelOpRow gemm_row(const char* kind, std::int64_t B, std::int64_t M, std::int64_t N,
                    std::int64_t K) {
  ModelOpRow r = row(kind, "gemm", {TensorDims{M, N}}, TensorDims{M, K});
  r.B = B;
  r.M = M;
  r.N = N;
  r.K = K;
  return r;
}

std::size_t kernels(const std::vector<LoweredOp>& ops) {
  std::size_t n = 0;
  for (const auto& op : ops) n += op.has_kernel ? 1 : 0;
  return n;
}

TEST(ModelLowering, LinearBackwardRunsNnInputGradientAndNtWeightGradient) {
  // nn.Linear: the forward multiplies by the stored weight transposed (cuBLAS tn); its input
  // gradient multiplies by the weight as stored (nn); its weight gradient by x^T (nt).
  const auto r = gemm_row("linear", 1, 4096, 1024, 3072);
  const auto fw = lower(r, Pass::kForward);
  ASSERT_EQ(fw.size(), 1u);
  EXPECT_EQ(cublas_layout(fw[0].record.op.gemm), "tn");
  EXPECT_EQ(fw[0].group, OpGroup::kLinear);
  const auto bw = lower(r, Pass::kBackward);
  ASSERT_EQ(bw.size(), 3u);
  EXPECT_EQ(bw[0].role, "dgrad");
  EXPECT_EQ(cublas_layout(bw[0].record.op.gemm), "nn");
  EXPECT_EQ(bw[1].role, "wgrad");
  EXPECT_EQ(cublas_layout(bw[1].record.op.gemm), "nt");
  EXPECT_EQ(bw[1].record.op.gemm.k, 4096);  // the weight gradient reduces over the rows
  EXPECT_EQ(bw[2].role, "bias");
  // Every GEMM of the pass has the forward's FLOPs.
  for (int i = 0; i < 2; ++i)
    EXPECT_DOUBLE_EQ(bw[i].record.op.gemm.flops(), fw[0].record.op.gemm.flops());

  // GPT-2's Conv1D (addmm) stores the weight [in, out]: forward nn, input gradient tn.
  const auto conv1d = gemm_row("addmm", 1, 1024, 1280, 3840);
  EXPECT_EQ(cublas_layout(lower(conv1d, Pass::kForward)[0].record.op.gemm), "nn");
  const auto cbw = lower(conv1d, Pass::kBackward);
  EXPECT_EQ(cublas_layout(cbw[0].record.op.gemm), "tn");
  EXPECT_EQ(cublas_layout(cbw[1].record.op.gemm), "nt");
  EXPECT_EQ(cbw[1].record.op.gemm.m, 1280);  // dW[in, out]
  EXPECT_EQ(cbw[1].record.op.gemm.n, 3840);
}

TEST(ModelLowering, AttentionProductWithATransposedOperandReadsItTransposed) {
  const ModelOpRow k_view =
      row("transpose", "view", {TensorDims{8, 16, 512, 64}}, TensorDims{8, 16, 64, 512});
  ModelOpRow scores =
      row("matmul", "gemm", {TensorDims{8, 16, 512, 64}, TensorDims{8, 16, 64, 512}},
          TensorDims{8, 16, 512, 512});
  scores.B = 128;
  scores.M = 512;
  scores.N = 64;
  scores.K = 512;
  const std::vector<ModelOpRow> rows{k_view, scores};
  const auto ctx = describe_rows(rows);
  EXPECT_TRUE(ctx[1].second_operand_transposed);
  EXPECT_EQ(cublas_layout(lower(scores, Pass::kForward, ctx[1])[0].record.op.gemm), "tn");
  EXPECT_EQ(cublas_layout(lower(scores, Pass::kBackward, ctx[1])[0].record.op.gemm), "nn");
  // Without the transposed view: a plain product, whose input gradient reads B transposed.
  EXPECT_EQ(cublas_layout(lower(scores, Pass::kForward)[0].record.op.gemm), "nn");
  EXPECT_EQ(cublas_layout(lower(scores, Pass::kBackward)[0].record.op.gemm), "tn");
}

// BERT's self-attention scores as the files list them: each projection viewed as heads and
// permuted to [batch, heads, seq, head_dim], the keys transposed, then torch.matmul.
std::vector<ModelOpRow> attention_scores_rows(std::int64_t batch) {
  const TensorDims hidden{batch, 512, 1024}, split{batch, 512, 16, 64}, heads{batch, 16, 512, 64};
  ModelOpRow scores = row("matmul", "gemm", {heads, TensorDims{batch, 16, 64, 512}},
                          TensorDims{batch, 16, 512, 512});
  scores.B = batch * 16;
  scores.M = 512;
  scores.N = 64;
  scores.K = 512;
  return {row("linear", "gemm", {hidden}, hidden),
          row("view", "view", {hidden, std::nullopt}, split),
          row("permute", "view", {split}, heads),
          row("linear", "gemm", {hidden}, hidden),
          row("view", "view", {hidden, std::nullopt}, split),
          row("permute", "view", {split}, heads),
          row("transpose", "view", {heads}, TensorDims{batch, 16, 64, 512}),
          scores};
}

TEST(ModelLowering, MatmulCopiesPermutedOperandsItCannotFoldIntoOneBatch) {
  // Batch 8: [8, 16, 512, 64] permuted from [8, 512, 16, 64] steps 512 * 1024 elements per
  // batch but 64 per head, so the two batch dimensions do not fold: matmul copies both the
  // queries and the transposed keys, and the backward copies both gradients back.
  const auto rows = attention_scores_rows(8);
  const auto ctx = describe_rows(rows);
  const ModelOpRow& scores = rows.back();
  ASSERT_EQ(ctx.back().matmul_copies.size(), 2u);
  EXPECT_TRUE(ctx.back().second_operand_transposed);
  const double operand = 8.0 * 512 * 1024 * 4;
  const auto fw = lower(scores, Pass::kForward, ctx.back());
  ASSERT_EQ(fw.size(), 3u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(fw[i].cls.family, KernelFamily::kCopy);
    EXPECT_EQ(fw[i].group, OpGroup::kBmm);
    EXPECT_DOUBLE_EQ(fw[i].record.op.vec.bytes_read, operand);
    EXPECT_DOUBLE_EQ(fw[i].record.op.vec.bytes_written, operand);
  }
  EXPECT_EQ(fw[2].cls.family, KernelFamily::kGemm);
  EXPECT_EQ(cublas_layout(fw[2].record.op.gemm), "tn");
  const auto bw = lower(scores, Pass::kBackward, ctx.back());
  ASSERT_EQ(bw.size(), 4u);
  EXPECT_EQ(bw[2].cls.family, KernelFamily::kCopy);
  EXPECT_EQ(bw[3].cls.family, KernelFamily::kCopy);

  // Batch 1: a batch dimension of one folds away, and matmul views the heads as they are.
  const auto single = attention_scores_rows(1);
  EXPECT_TRUE(describe_rows(single).back().matmul_copies.empty());
  // Operands written contiguous in the product's shape fold too.
  const auto& plain = rows.back();
  EXPECT_TRUE(describe_rows({plain}).back().matmul_copies.empty());
}

TEST(ModelLowering, ArithmeticStatesTheReuseOfAnOperandItBroadcasts) {
  constexpr double kMiB = 1024.0 * 1024.0;
  // OPT's mask add: the [8, 1, S, S] mask is used again every head; in between the kernel
  // streams one head of the scores and of the output and the mask's own [S, S] block.
  const auto mask =
      lower(row("add", "elementwise", {TensorDims{8, 32, 2048, 2048}, TensorDims{8, 1, 2048, 2048}},
                TensorDims{8, 32, 2048, 2048}),
            Pass::kForward);
  ASSERT_EQ(mask.size(), 1u);
  const VectorShape& v = mask[0].record.op.vec;
  EXPECT_DOUBLE_EQ(v.bytes_read, (32.0 + 1) * 8 * 2048 * 2048 * 4);  // the mask once
  EXPECT_DOUBLE_EQ(v.broadcast_reuse_bytes, 3 * 2048.0 * 2048 * 4);
  EXPECT_DOUBLE_EQ(v.broadcast_reread_bytes, 31.0 * 8 * 2048 * 2048 * 4);
  // BERT's position add, [1, 512, 1024] over the batch: 6 MiB between reuses.
  const auto position =
      lower(row("add", "elementwise", {TensorDims{16, 512, 1024}, TensorDims{1, 512, 1024}},
                TensorDims{16, 512, 1024}),
            Pass::kForward);
  EXPECT_DOUBLE_EQ(position[0].record.op.vec.broadcast_reuse_bytes, 6 * kMiB);
  EXPECT_DOUBLE_EQ(position[0].record.op.vec.broadcast_reread_bytes, 15.0 * 512 * 1024 * 4);
  // BERT's attention mask, [B, 1, 1, S]: used again every row, 6 KB later; any L2 holds it.
  const auto rows =
      lower(row("add", "elementwise", {TensorDims{16, 16, 512, 512}, TensorDims{16, 1, 1, 512}},
                TensorDims{16, 16, 512, 512}),
            Pass::kForward);
  EXPECT_EQ(rows[0].record.op.vec.broadcast_reread_bytes, 0);
  // A select's mask is not of the result's type (the file does not say its type): no claim.
  const auto select =
      lower(row("where", "elementwise",
                {TensorDims{1, 1, 1024, 1024}, TensorDims{8, 20, 1024, 1024}, TensorDims{1}},
                TensorDims{8, 20, 1024, 1024}),
            Pass::kForward);
  EXPECT_EQ(select[0].record.op.vec.broadcast_reread_bytes, 0);
  // Shapes that do not broadcast to the output say nothing (2 samples for 4, though the
  // missing head dimension alone would be a 6 MiB reuse).
  const auto odd =
      lower(row("mul", "elementwise", {TensorDims{4, 8, 512, 1024}, TensorDims{2, 1, 512, 1024}},
                TensorDims{4, 8, 512, 1024}),
            Pass::kForward);
  EXPECT_EQ(odd[0].record.op.vec.broadcast_reread_bytes, 0);
}

TEST(ModelLowering, TrainingLossBackwardSweepsTheLogits) {
  const ModelOpRow out =
      row("output", "io", {TensorDims{8, 512, 30522}, TensorDims{8, 2}}, TensorDims{8, 2});
  EXPECT_TRUE(lower(out, Pass::kForward).empty());  // the loss is computed outside the timing
  const auto bw = lower(out, Pass::kBackward);
  ASSERT_EQ(bw.size(), 3u);
  const double logits = 8.0 * 512 * 30522 * 4;
  EXPECT_EQ(bw[0].cls.family, KernelFamily::kMemset);
  EXPECT_DOUBLE_EQ(bw[0].record.op.vec.bytes_written, logits);
  EXPECT_EQ(bw[2].cls.family, KernelFamily::kSoftmax);
  EXPECT_DOUBLE_EQ(bw[2].record.op.vec.bytes(), 3 * logits);
  for (const auto& op : bw) EXPECT_EQ(op.group, OpGroup::kLoss);
}

TEST(ModelLowering, SoftmaxBackwardFormsTheProductFirstAndLogSoftmaxReadsTheGradient) {
  // Attention probabilities [8, 16, 512, 512]: softmax's backward runs dY * y as an
  // elementwise kernel, then the softmax backward kernel over that product and y.
  const TensorDims p{8, 16, 512, 512};
  const double n = 8.0 * 16 * 512 * 512 * 4;
  const auto bw = lower(row("softmax", "softmax", {p}, p), Pass::kBackward);
  ASSERT_EQ(kernels(bw), 2u);
  EXPECT_EQ(bw[0].cls.family, KernelFamily::kElementwise);
  EXPECT_EQ(bw[1].cls.family, KernelFamily::kSoftmax);
  for (const auto& op : bw) {
    EXPECT_DOUBLE_EQ(op.record.op.vec.bytes_read, 2 * n);
    EXPECT_DOUBLE_EQ(op.record.op.vec.bytes_written, n);
    EXPECT_EQ(op.record.op.vec.cols, 512);
  }
  // The forward is the one softmax kernel; log_softmax's backward has no product.
  EXPECT_EQ(kernels(lower(row("softmax", "softmax", {p}, p), Pass::kForward)), 1u);
  const auto log_bw = lower(row("log_softmax", "softmax", {p}, p), Pass::kBackward);
  ASSERT_EQ(kernels(log_bw), 1u);
  EXPECT_EQ(log_bw[0].cls.family, KernelFamily::kSoftmax);
}

TEST(ModelLowering, DropoutBackwardIsOneMaskedScaleAndAccumulationCoversEveryParameter) {
  const ModelOpRow drop =
      row("dropout", "memory", {TensorDims{8, 512, 1024}}, TensorDims{8, 512, 1024});
  const auto fw = lower(drop, Pass::kForward);
  const auto bw = lower(drop, Pass::kBackward);
  ASSERT_EQ(kernels(fw), 1u);
  ASSERT_EQ(kernels(bw), 1u);
  const double n = 8.0 * 512 * 1024;
  EXPECT_DOUBLE_EQ(bw[0].record.op.vec.bytes(), n * 4 + n + n * 4);  // grad, bool mask, out
  EXPECT_EQ(bw[0].group, OpGroup::kDropout);

  ModelOpRow emb = row("embedding", "embedding", {TensorDims{8, 512}}, TensorDims{8, 512, 1024});
  emb.neusight_acc_ops = "VECadd:1x31254528";  // a training file: 30522 x 1024 table
  const auto acc = lower(emb, Pass::kAccumulate);
  ASSERT_EQ(acc.size(), 1u);
  EXPECT_EQ(acc[0].record.op.vec.rows, 30522);
  emb.neusight_acc_ops.clear();
  emb.neusight_bw_ops = "MEM:30522x1024;MEM:30522x1024";
  EXPECT_EQ(lower(emb, Pass::kAccumulate).at(0).record.op.vec.rows, 30522);
  const auto ebw = lower(emb, Pass::kBackward);
  EXPECT_DOUBLE_EQ(ebw.at(0).record.op.vec.bytes_written, 30522.0 * 1024 * 4);  // zero the table
}

TEST(ModelLowering, SplitBackwardConcatenatesThePiecesGradients) {
  // GPT-2 splits its fused QKV projection into three views: the forward moves nothing, the
  // backward copies the three gradients into one [1, 1024, 3840] gradient.
  const ModelOpRow split =
      row("split", "view", {TensorDims{1, 1024, 3840}, std::nullopt}, std::nullopt, "");
  EXPECT_EQ(kernels(lower(split, Pass::kForward)), 0u);
  const auto bw = lower(split, Pass::kBackward);
  ASSERT_EQ(kernels(bw), 1u);
  EXPECT_EQ(bw[0].cls.family, KernelFamily::kCopy);
  EXPECT_EQ(bw[0].group, OpGroup::kCopy);
  const double bytes = 1024.0 * 3840 * 4;
  EXPECT_DOUBLE_EQ(bw[0].record.op.vec.bytes_read, bytes);
  EXPECT_DOUBLE_EQ(bw[0].record.op.vec.bytes_written, bytes);
  // Any other view's gradient is a view of the gradient.
  const ModelOpRow permute =
      row("permute", "view", {TensorDims{1, 1024, 20, 64}}, TensorDims{1, 20, 1024, 64});
  EXPECT_EQ(kernels(lower(permute, Pass::kBackward)), 0u);
}

std::vector<const LoweredOp*> gradient_sums(const std::vector<LoweredOp>& ops) {
  std::vector<const LoweredOp*> out;
  for (const auto& op : ops) {
    if (op.group == OpGroup::kGradientSum) out.push_back(&op);
  }
  return out;
}

TEST(ModelLowering, ATensorUsedTwiceHasItsGradientsSummedOncePerLayer) {
  // A pre-norm residual block repeated 4 times: x feeds the norm and the residual sum, so
  // the backward adds two gradients of x in every layer. The mask built from ones carries no
  // gradient, however often the layer reads it.
  const TensorDims x{1, 8, 16}, mask{2, 8};
  std::vector<ModelOpRow> rows;
  rows.push_back(row("embedding", "embedding", {TensorDims{1, 8}}, x));
  rows.push_back(row("ones", "memory", {std::nullopt}, mask));
  rows.push_back(row("layernorm", "layernorm", {x}, x));
  rows.push_back(gemm_row("linear", 1, 8, 16, 16));
  rows.back().inputs = {x};
  rows.back().output = x;
  rows.push_back(row("add", "elementwise", {x, x}, x));
  rows.push_back(row("add", "elementwise", {mask, mask}, mask));
  rows.push_back(row("size", "host", {x}, std::nullopt, ""));
  for (std::size_t i = 2; i < rows.size(); ++i) rows[i].repeat = 4;
  rows.push_back(row("layernorm", "layernorm", {x}, x));
  const auto ctx = describe_rows(rows);
  std::size_t sums = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto backward = lower(rows[i], Pass::kBackward, ctx[i]);
    const auto forward = lower(rows[i], Pass::kForward, ctx[i]);
    const auto ops = gradient_sums(backward);
    EXPECT_TRUE(gradient_sums(forward).empty());
    for (const LoweredOp* op : ops) {
      // Reads both gradients of x, writes their sum.
      EXPECT_DOUBLE_EQ(op->record.op.vec.bytes_read, 2 * 128.0 * 4);
      EXPECT_DOUBLE_EQ(op->record.op.vec.bytes_written, 128.0 * 4);
      EXPECT_EQ(rows[i].repeat, 4);
    }
    sums += ops.size();
  }
  EXPECT_EQ(sums, 1u);
  // The sums have a line of their own in the per-operator table.
  EXPECT_EQ(to_string(OpGroup::kGradientSum), "grad-sum");
}

TEST(ModelLowering, ElementwiseBackwardFollowsTheOperator) {
  const TensorDims x{4096, 1024};
  const double n = 4096.0 * 1024 * 4;
  // A scalar scale: the gradient scaled once.
  const auto div = lower(row("div", "elementwise", {x, std::nullopt}, x), Pass::kBackward);
  ASSERT_EQ(kernels(div), 1u);
  EXPECT_DOUBLE_EQ(div[0].record.op.vec.bytes(), 2 * n);
  // A product of two tensors: each operand's gradient reads the gradient and the other one.
  const auto mul = lower(row("mul", "elementwise", {x, x}, x), Pass::kBackward);
  ASSERT_EQ(kernels(mul), 2u);
  EXPECT_DOUBLE_EQ(mul[1].record.op.vec.bytes(), 3 * n);
  // x^3: a power, a scale and a product.
  EXPECT_EQ(kernels(lower(row("pow", "elementwise", {x, std::nullopt}, x), Pass::kBackward)), 3u);
  // A sum passes the gradient through.
  EXPECT_EQ(kernels(lower(row("add", "elementwise", {x, x}, x), Pass::kBackward)), 0u);
}

TEST(ModelLowering, AReductionRowAsLargeAsItsInputStreamsLikeAnElementwiseKernel) {
  // OPT's torch.max(scores, finfo.min): classed as a reduction, it reads and writes every
  // score.
  const TensorDims s{8, 32, 2048, 2048};
  const auto max = lower(row("max", "reduction", {s, std::nullopt}, s), Pass::kForward);
  ASSERT_EQ(max.size(), 1u);
  EXPECT_EQ(max[0].cls.family, KernelFamily::kElementwise);
  EXPECT_DOUBLE_EQ(max[0].record.op.vec.bytes(), 2 * 8.0 * 32 * 2048 * 2048 * 4);
  EXPECT_EQ(op_group_of(row("max", "reduction", {s, std::nullopt}, s)), OpGroup::kElementwise);
  // A real reduction keeps its family.
  const auto mean =
      lower(row("mean", "reduction", {TensorDims{512, 1024}}, TensorDims{512, 1}), Pass::kForward);
  EXPECT_EQ(mean.at(0).cls.family, KernelFamily::kReduction);
}

TEST(ModelLowering, ACastConvertsOnlyWhenTheTypeChanges) {
  const TensorDims m{512, 512};
  const std::vector<ModelOpRow> rows{row("gt", "elementwise", {m}, m, "bool"),
                                     row("to", "cast", {m}, m, "fp32"),
                                     row("float", "cast", {m}, m, "fp32")};
  const auto ctx = describe_rows(rows);
  EXPECT_EQ(ctx[1].input_dtype, "bool");
  const auto convert = lower(rows[1], Pass::kForward, ctx[1]);
  ASSERT_EQ(kernels(convert), 1u);
  EXPECT_DOUBLE_EQ(convert[0].record.op.vec.bytes(), 512.0 * 512 * (1 + 4));
  EXPECT_EQ(op_group_of(rows[1], ctx[1]), OpGroup::kCopy);
  EXPECT_EQ(kernels(lower(rows[2], Pass::kForward, ctx[2])), 0u);  // fp32 to fp32
}

// A switch-transformer expert dispatch as the FX trace records it: the expert's column of
// the router mask cast to bool, its count, the masked gather of the tokens, the slice
// assignment into the expert's padded input, and the masked scatter of the expert's output.
TEST(ModelLowering, MaskedExpertDispatchReadsCountsOnTheHost) {
  const std::vector<ModelOpRow> rows{
      row("getitem", "memory", {TensorDims{1, 512, 4}, std::nullopt}, TensorDims{1, 512}, "int64"),
      row("bool", "cast", {TensorDims{1, 512}}, TensorDims{1, 512}, "bool"),
      row("count_nonzero", "reduction", {TensorDims{1, 512}}, std::nullopt, "int64"),
      row("getitem", "memory", {TensorDims{1, 512, 1024}, TensorDims{1, 512}},
          TensorDims{64, 1024}),
      row("setitem", "memory", {TensorDims{64, 1024}, std::nullopt, TensorDims{64, 1024}},
          std::nullopt),
      row("setitem", "memory", {TensorDims{1, 512, 1024}, TensorDims{1, 512}, TensorDims{64, 1024}},
          std::nullopt)};
  const auto ctx = describe_rows(rows);
  EXPECT_FALSE(ctx[0].masked_indexing);
  EXPECT_FALSE(ctx[4].masked_indexing);  // a slice assignment
  EXPECT_TRUE(ctx[3].masked_indexing);
  EXPECT_TRUE(ctx[5].masked_indexing);

  EXPECT_EQ(kernels(lower(rows[0], Pass::kForward, ctx[0])), 0u);  // integer index: a view
  EXPECT_EQ(kernels(lower(rows[1], Pass::kForward, ctx[1])), 1u);  // int64 -> bool
  const auto count = lower(rows[2], Pass::kForward, ctx[2]);
  ASSERT_EQ(count.size(), 1u);
  EXPECT_TRUE(count[0].host_waits);
  const auto gather = lower(rows[3], Pass::kForward, ctx[3]);
  ASSERT_EQ(gather.size(), 2u);
  EXPECT_EQ(gather[0].role, "nonzero");
  EXPECT_TRUE(gather[0].host_waits);
  EXPECT_EQ(gather[1].role, "gather");
  EXPECT_DOUBLE_EQ(gather[1].record.op.vec.bytes_written, 64.0 * 1024 * 4);
  const auto scatter = lower(rows[5], Pass::kForward, ctx[5]);
  ASSERT_EQ(scatter.size(), 2u);
  EXPECT_EQ(scatter[1].role, "scatter");
  for (std::size_t i : {2u, 3u, 5u}) EXPECT_EQ(op_group_of(rows[i], ctx[i]), OpGroup::kMoeRouting);
  // The backward reuses the forward's indices: no second count.
  const auto gather_bw = lower(rows[3], Pass::kBackward, ctx[3]);
  ASSERT_EQ(gather_bw.size(), 1u);
  EXPECT_FALSE(gather_bw[0].host_waits);
}

}  // namespace
}  // namespace pm2lat::reports
