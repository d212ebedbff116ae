#include "pm2lat/models/long_tail_models.h"

#include <string>

#include "pm2lat/models/attention_kernel.h"
#include "pm2lat/models/attention_predictor.h"
#include "pm2lat/models/collective_model.h"
#include "pm2lat/models/conv_model.h"
#include "pm2lat/models/conv_predictor.h"
#include "pm2lat/models/memory_family_predictor.h"
#include "pm2lat/predictor.h"

namespace pm2lat {
namespace {

bool is_attention(const KernelRecord& r, const KernelClass& cls) {
  if (cls.family == KernelFamily::kAttention) return true;
  if (cls.family != KernelFamily::kUnknown) return false;
  // Attention kernels the classifier does not name (vLLM's Triton unified attention, ...).
  return r.op.kind == OpKind::kAttention || decode_attention_kernel(r.launch.name).recognised();
}

Prediction collective(const KernelRecord& r, const DeviceSpec& spec) {
  Prediction p;
  p.model = ModelKind::kCollective;
  p.basis = TimeBasis::kKernel;
  p.flags = prediction_flags::kCommunication;
  if (r.op.collective.bytes <= 0) p.flags |= prediction_flags::kNoShape;  // latency only
  p.us = collective_kernel_us(decode_collective_kernel(r.launch.name), r.op.collective, spec);
  return p;
}

}  // namespace

struct LongTailModels::Impl {
  AttentionPredictor attention;
  ConvPredictor conv;
  MemoryFamilyPredictor memory;
  std::vector<const DeviceSpec*> targets;
};

LongTailModels::LongTailModels() : impl_(std::make_unique<Impl>()) {}
LongTailModels::LongTailModels(LongTailModels&&) noexcept = default;
LongTailModels& LongTailModels::operator=(LongTailModels&&) noexcept = default;
LongTailModels::~LongTailModels() = default;

LongTailModels::LongTailModels(const DeviceCatalogue& catalogue,
                               const std::vector<Profile>& profiles)
    : impl_(std::make_unique<Impl>()) {
  impl_->attention = AttentionPredictor(catalogue, profiles);
  impl_->conv = ConvPredictor(catalogue, profiles);
  impl_->memory = MemoryFamilyPredictor(catalogue, profiles);
}

void LongTailModels::add_target(const DeviceSpec& spec) {
  impl_->targets.push_back(&spec);
  impl_->attention.add_target(spec);
  impl_->conv.add_target(spec);
  impl_->memory.add_target(spec);
}

std::optional<Prediction> LongTailModels::predict_row_without_shape(
    const KernelRecord& record, const KernelClass& cls, std::size_t target) const noexcept {
  if (target >= impl_->targets.size()) return std::nullopt;
  return impl_->memory.predict_row_without_shape(record, cls, target);
}

std::optional<Prediction> LongTailModels::predict(const KernelRecord& record,
                                                  const KernelClass& cls, std::size_t target,
                                                  const PredictOptions& options,
                                                  bool observed_on_target) const noexcept {
  if (target >= impl_->targets.size()) return std::nullopt;
  const DeviceSpec& spec = *impl_->targets[target];
  if (cls.family == KernelFamily::kCollective || record.op.kind == OpKind::kCollective)
    return collective(record, spec);
  if (is_attention(record, cls)) return impl_->attention.predict(record, target);
  // cuDNN also runs convolutions as plain GEMM kernels (Winograd's batched GEMM, im2col):
  // with a convolution context they are the convolution.
  if (cls.family == KernelFamily::kConv ||
      (cls.family == KernelFamily::kGemm && record.op.kind == OpKind::kConv)) {
    if (is_conv_helper_kernel(record, cls)) {
      KernelClass as_copy = cls;
      as_copy.family = KernelFamily::kCopy;
      return impl_->memory.predict(record, as_copy, target);
    }
    return impl_->conv.predict(record, cls, target, options.basis == TimeBasis::kCall,
                               !observed_on_target);
  }
  if (is_memory_family(cls.family)) return impl_->memory.predict(record, cls, target);
  // Kernel time on a GPU whose own layer-norm or softmax kernels were measured: those fits,
  // before per-operator tables timed as framework calls (or borrowed from another GPU).
  // Elementwise kernels stay with the per-operator tables: their own-kernel fits pool too
  // many operators (leave-one-trace-out, 30 ms of absolute error against 25 ms).
  if ((cls.family == KernelFamily::kLayerNorm || cls.family == KernelFamily::kSoftmax) &&
      options.basis == TimeBasis::kKernel) {
    if (auto p = impl_->memory.predict_own(record, cls, target)) return p;
  }
  // A kernel no rule names, with no work from its context: the elementwise geometry fit over
  // its launched threads beats a roofline of nothing (flag no_shape).
  if (cls.family == KernelFamily::kUnknown && record.op.vec.bytes() <= 0 &&
      (record.op.kind == OpKind::kUnknown || record.op.kind == OpKind::kElementwise ||
       record.op.kind == OpKind::kCopy || record.op.kind == OpKind::kReduction)) {
    KernelClass as_elementwise = cls;
    as_elementwise.family = KernelFamily::kTritonPointwise;  // stands in for elementwise
    return impl_->memory.predict(record, as_elementwise, target);
  }
  return std::nullopt;
}

}  // namespace pm2lat
