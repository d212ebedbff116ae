// One training step of BERT-base, as PyTorch runs it on a GPU: the cuBLAS/cuBLASLt GEMMs of
// every linear layer (forward, and both gradients), FlashAttention forward and backward,
// layer norms, GELU, dropout, residual adds, the masked-language-model loss (log-softmax and
// NLL over the vocabulary) and a fused AdamW step, each launched under the name and with the
// grid PyTorch gives it (aten_kernels.h, launch_geometry.h).
//
// Shapes: google-bert/bert-base-uncased (config.json: hidden 768, 12 layers, 12 heads,
// intermediate 3072, vocabulary 30522, 512 positions, 2 token types), BertForMaskedLM, BF16,
// a batch of 8 sequences of 512 tokens. Left out: the embedding tables' gradient (a sort and
// scatter) and the host-side work between kernels.
//
// It is a demonstration for pm2lat's runtime: scripts/demo.sh runs it on the test CUDA stack
// (tests/fake) under `pm2lat run --no-measure`. The kernels are empty entries, so on a real GPU
// it would run but measure nothing meaningful.
//
//   pm2lat run --targets H100,A100,L4 --no-measure -- pm2lat_example_bert_training_step [LAYERS]
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "aten_kernels.h"
#include "launch_geometry.h"
#include "step_device.h"

namespace bert_step {
namespace {

namespace k = kernels;
namespace g = geometry;

struct Config {
  std::int64_t layers = 12;
  std::int64_t hidden = 768;
  std::int64_t heads = 12;
  std::int64_t intermediate = 3072;
  std::int64_t vocab = 30522;
  std::int64_t positions = 512;
  std::int64_t token_types = 2;
  std::int64_t batch = 8;
  std::int64_t seq = 512;
  std::int64_t tokens() const { return batch * seq; }
};

class TrainingStep {
 public:
  TrainingStep(const Config& c, StepDevice& d) : c_(c), d_(d) {}

  void run() {
    embeddings_forward();
    for (std::int64_t l = 0; l < c_.layers; ++l) layer_forward();
    head_and_loss_forward();
    loss_and_head_backward();
    for (std::int64_t l = 0; l < c_.layers; ++l) layer_backward();
    embeddings_backward();
    adamw();
  }

 private:
  std::int64_t activation() const { return c_.tokens() * c_.hidden; }

  void elementwise(const char* kernel, std::int64_t elements) {
    d_.launch(kernel, g::elementwise_grid(elements), g::elementwise_block());
  }
  void dropout(std::int64_t elements) {
    d_.launch(k::kDropout, g::dropout_grid(elements, d_.sm_count(), d_.max_threads_per_sm()),
              {g::kDropoutThreads});
  }
  void layer_norm() { d_.launch(k::kLayerNorm, {unsigned(c_.tokens())}, g::layer_norm_block()); }
  void layer_norm_backward() {
    d_.launch(k::kLayerNormGradInput, {unsigned(c_.tokens())}, {g::kLayerNormThreads});
    d_.launch(k::kLayerNormGradGammaBeta, g::layer_norm_grad_gamma_beta_grid(c_.hidden), {32, 32});
  }
  void linear_backward(std::int64_t in, std::int64_t out, bool input_grad = true) {
    d_.linear_backward(c_.tokens(), in, out, input_grad);
    d_.launch(k::kBiasGradSum, g::bias_grad_grid(out), g::bias_grad_block());
  }
  void gather(std::int64_t rows) {
    const std::int64_t elements = rows * c_.hidden;
    d_.launch(k::kIndexSelect, g::index_select_grid(elements, d_.sm_count()),
              g::index_select_block(elements));
  }

  void embeddings_forward() {
    gather(c_.tokens());  // words
    gather(c_.tokens());  // token types
    gather(c_.seq);       // positions, broadcast over the batch
    elementwise(k::kAdd, activation());
    elementwise(k::kAdd, activation());
    layer_norm();
    dropout(activation());
  }

  void layer_forward() {
    for (int projection = 0; projection < 3; ++projection)  // query, key, value
      d_.linear_forward(c_.tokens(), c_.hidden, c_.hidden);
    d_.launch(k::kFlashForward, g::flash_grid(c_.seq, c_.batch, c_.heads),
              g::flash_forward_block());
    d_.linear_forward(c_.tokens(), c_.hidden, c_.hidden);  // attention output
    dropout(activation());
    elementwise(k::kAdd, activation());  // residual
    layer_norm();
    d_.linear_forward(c_.tokens(), c_.hidden, c_.intermediate);
    elementwise(k::kGelu, c_.tokens() * c_.intermediate);
    d_.linear_forward(c_.tokens(), c_.intermediate, c_.hidden);
    dropout(activation());
    elementwise(k::kAdd, activation());
    layer_norm();
  }

  void head_and_loss_forward() {
    d_.linear_forward(c_.tokens(), c_.hidden, c_.hidden);  // prediction-head transform
    elementwise(k::kGelu, activation());
    layer_norm();
    d_.linear_forward(c_.tokens(), c_.hidden, c_.vocab);  // decoder (tied to the word table)
    d_.launch(k::kLogSoftmax, {unsigned(c_.tokens())}, g::log_softmax_block(c_.vocab));
    d_.launch(k::kNllLoss, g::nll_loss_grid(), g::nll_loss_block());
  }

  void loss_and_head_backward() {
    d_.launch(k::kNllLossBackward, g::nll_loss_grid(), g::nll_loss_block());
    d_.launch(k::kLogSoftmaxBackward, {unsigned(c_.tokens())}, g::log_softmax_block(c_.vocab));
    linear_backward(c_.hidden, c_.vocab);
    layer_norm_backward();
    elementwise(k::kGeluBackward, activation());
    linear_backward(c_.hidden, c_.hidden);
  }

  void layer_backward() {
    layer_norm_backward();
    elementwise(k::kDropoutBackward, activation());
    linear_backward(c_.intermediate, c_.hidden);
    elementwise(k::kGeluBackward, c_.tokens() * c_.intermediate);
    linear_backward(c_.hidden, c_.intermediate);
    elementwise(k::kAdd, activation());  // the two uses of the attention block's output
    layer_norm_backward();
    elementwise(k::kDropoutBackward, activation());
    linear_backward(c_.hidden, c_.hidden);  // attention output
    const Dim grid = g::flash_grid(c_.seq, c_.batch, c_.heads);
    d_.launch(k::kFlashBackwardDotDoO, grid, g::flash_backward_block());
    d_.launch(k::kFlashBackward, grid, g::flash_backward_block());
    d_.launch(k::kFlashBackwardConvertDq, grid, g::flash_backward_block());
    for (int projection = 0; projection < 3; ++projection) linear_backward(c_.hidden, c_.hidden);
    for (int use = 0; use < 3; ++use)  // query, key, value and the residual path meet
      elementwise(k::kAdd, activation());
  }

  void embeddings_backward() {
    layer_norm_backward();
    elementwise(k::kDropoutBackward, activation());
  }

  // torch.optim.AdamW(fused=True) over model.parameters() in their order.
  void adamw() {
    const std::int64_t h = c_.hidden, f = c_.intermediate;
    std::vector<std::int64_t> params = {c_.vocab * h, c_.positions * h, c_.token_types * h, h, h};
    for (std::int64_t l = 0; l < c_.layers; ++l) {
      for (int projection = 0; projection < 4; ++projection)
        params.insert(params.end(), {h * h, h});
      params.insert(params.end(), {h, h, f * h, f, h * f, h, h, h});
    }
    params.insert(params.end(), {h * h, h, h, h, c_.vocab});  // head transform, norm, bias
    for (unsigned blocks : g::multi_tensor_grids(params))
      d_.launch(k::kFusedAdamW, {blocks}, g::multi_tensor_block());
  }

  Config c_;
  StepDevice& d_;
};

}  // namespace
}  // namespace bert_step

int main(int argc, char** argv) {
  using namespace bert_step;
  Config c;
  if (argc > 1) c.layers = std::atoi(argv[1]);
  if (c.layers < 1) {
    std::fprintf(stderr, "usage: %s [LAYERS >= 1]\n", argv[0]);
    return 2;
  }
  try {
    StepDevice device(std::max(c.tokens() * c.vocab, c.tokens() * c.intermediate),
                      std::max(c.vocab, c.intermediate) * c.hidden);
    TrainingStep(c, device).run();
    device.synchronize();
    std::printf(
        "BERT-base training step (%lld layers, hidden %lld, %lld heads, vocabulary %lld; batch "
        "%lld x %lld tokens, BF16) on %s: %d kernel launches and %d cuBLAS/cuBLASLt calls\n",
        static_cast<long long>(c.layers), static_cast<long long>(c.hidden),
        static_cast<long long>(c.heads), static_cast<long long>(c.vocab),
        static_cast<long long>(c.batch), static_cast<long long>(c.seq), device.name().c_str(),
        device.launches(), device.library_calls());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bert_training_step: %s\n", e.what());
    return 1;
  }
  return 0;
}
