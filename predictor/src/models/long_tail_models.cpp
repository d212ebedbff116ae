#include "pm2lat/models/long_tail_models.h"

#include "pm2lat/models/attention_kernel.h"
#include "pm2lat/models/attention_predictor.h"
#include "pm2lat/predictor.h"

namespace pm2lat {
namespace {

bool is_attention(const KernelRecord& r, const KernelClass& cls) {
  if (cls.family == KernelFamily::kAttention) return true;
  if (cls.family != KernelFamily::kUnknown) return false;
  // Attention kernels the classifier does not name (vLLM's Triton unified attention, ...).
  return r.op.kind == OpKind::kAttention || decode_attention_kernel(r.launch.name).recognised();
}

}  // namespace

struct LongTailModels::Impl {
  AttentionPredictor attention;
};

LongTailModels::LongTailModels() : impl_(std::make_unique<Impl>()) {}
LongTailModels::LongTailModels(LongTailModels&&) noexcept = default;
LongTailModels& LongTailModels::operator=(LongTailModels&&) noexcept = default;
LongTailModels::~LongTailModels() = default;

LongTailModels::LongTailModels(const DeviceCatalogue& catalogue, const std::vector<Profile>& profiles)
    : impl_(std::make_unique<Impl>()) {
  impl_->attention = AttentionPredictor(catalogue, profiles);
}

void LongTailModels::add_target(const DeviceSpec& spec) { impl_->attention.add_target(spec); }

std::optional<Prediction> LongTailModels::predict(const KernelRecord& record, const KernelClass& cls,
                                                  std::size_t target, const PredictOptions& options) const noexcept {
  (void)options;
  if (is_attention(record, cls)) return impl_->attention.predict(record, target);
  return std::nullopt;
}

}  // namespace pm2lat
