#include "collect/predictor_adapter.h"

#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "pm2lat/classifier.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/measured_guard.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_error.h"
#include "pm2lat/target_set.h"

namespace pm2lat::shim {
namespace {

// Distinct (kernel, shape) pairs the runtime keeps predictions of: a training step launches a
// few hundred to a few thousand; more only costs a repeated prediction, never memory.
constexpr std::size_t kCachedPairs = std::size_t{1} << 12;

}  // namespace

struct PredictorAdapter::Impl {
  std::optional<Predictor> predictor;
  std::optional<TargetSet> targets;
  const DeviceSpec* source = nullptr;  // the GPU the program runs on, resolved once
};

PredictorAdapter::PredictorAdapter(const std::vector<std::string>& targets,
                                   const std::string& source_device, GpuHardware hardware,
                                   std::vector<std::string>* problems)
    : impl_(std::make_unique<Impl>()) {
  std::filesystem::path dir;
  try {
    dir = Predictor::default_profile_dir();
    impl_->predictor.emplace(Predictor::from_directory(dir));
  } catch (const ProfileError& e) {
    problems->push_back("cannot load the GPU profiles (" + e.file() +
                        (e.field().empty() ? "" : ", field '" + e.field() + "'") +
                        "): " + e.what() + "; no predictions will be made");
    return;
  } catch (const std::exception& e) {
    problems->push_back("cannot load the GPU profiles from " + dir.string() + ": " + e.what() +
                        "; no predictions will be made");
    return;
  }
  TargetSet& set = impl_->targets.emplace(*impl_->predictor, kCachedPairs);
  // Targets first, in the user's order (the first one labels NVTX ranges), then the GPU the
  // program runs on, which the summary compares predictions with measurements for.
  for (const auto& t : targets) {
    try {
      set.add(t);
    } catch (const UnknownDeviceError& e) {
      problems->push_back(std::string(e.what()) + "; it is skipped");
    } catch (const std::exception& e) {
      problems->push_back("target GPU '" + t + "': " + e.what());
    }
  }
  if (!source_device.empty()) {
    const StandIn stand_in = impl_->predictor->catalogue().stand_in(source_device, hardware);
    impl_->source = stand_in.spec;
    if (std::string note = stand_in.note(source_device, hardware); !note.empty())
      problems->push_back(std::move(note));
    try {
      if (impl_->source != nullptr) source_name_ = set.names()[set.add(*impl_->source)];
    } catch (const std::exception&) {
      impl_->source = nullptr;  // predictions for the other targets still go ahead
    }
  }
  names_ = set.names();
}

PredictorAdapter::~PredictorAdapter() = default;

bool PredictorAdapter::available() const noexcept {
  return impl_->targets.has_value() && impl_->targets->size() > 0;
}

KernelClass PredictorAdapter::classify(std::string_view kernel_name) noexcept {
  return classify_kernel(kernel_name);
}

void PredictorAdapter::predict(const KernelRecord& record, const KernelClass& cls,
                               std::vector<std::pair<std::string, Prediction>>& out) const {
  out.clear();
  if (!impl_->targets) return;
  PredictOptions options;
  options.basis = TimeBasis::kKernel;
  options.source_spec = impl_->source;
  try {
    const auto predictions = impl_->targets->predict(record, cls, options);
    for (std::size_t i = 0; i < predictions.size(); ++i)
      out.emplace_back(names_[i], predictions[i]);
  } catch (const std::exception&) {
    // A model that cannot handle this record leaves it without predictions.
    out.clear();
  }
}

}  // namespace pm2lat::shim

namespace pm2lat::shim {

double PredictorAdapter::source_lower_bound_us(const KernelRecord& record,
                                               const KernelClass& cls) const noexcept {
  if (impl_->source == nullptr) return 0;
  return pm2lat::source_lower_bound_us(record, cls, *impl_->source, TimeBasis::kKernel);
}

GpuTimeRatioRange PredictorAdapter::time_ratio_range(std::string_view name) const noexcept {
  if (!impl_->targets) return {};
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return pm2lat::time_ratio_range(impl_->source, &impl_->targets->spec(i));
  }
  return {};
}

}  // namespace pm2lat::shim
