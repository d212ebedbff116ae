#include "collect/predictor_adapter.h"

#include <algorithm>
#include <cstddef>
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
};

std::size_t PredictorAdapter::target_of(std::int32_t device) const noexcept {
  return device >= 0 && static_cast<std::size_t>(device) < device_targets_.size()
             ? device_targets_[static_cast<std::size_t>(device)]
             : kNoTarget;
}

const DeviceSpec* PredictorAdapter::spec_of(std::int32_t device) const noexcept {
  const std::size_t t = target_of(device);
  return t == kNoTarget ? nullptr : &impl_->targets->spec(t);
}

PredictorAdapter::PredictorAdapter(const std::vector<std::string>& targets,
                                   const std::vector<RunDevice>& devices,
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
  // Targets first, in the user's order (the first one labels NVTX ranges), then the GPUs the
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
  device_targets_.assign(devices.size(), kNoTarget);
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const RunDevice& device = devices[d];
    if (device.name.empty()) continue;
    // Devices of one model (the usual machine: all alike) are resolved, and said, once.
    const auto earlier = std::find_if(
        devices.begin(), devices.begin() + std::ptrdiff_t(d),
        [&](const RunDevice& e) { return e.name == device.name && e.hardware == device.hardware; });
    if (earlier != devices.begin() + std::ptrdiff_t(d)) {
      device_targets_[d] = device_targets_[static_cast<std::size_t>(earlier - devices.begin())];
      continue;
    }
    const StandIn stand_in = impl_->predictor->catalogue().stand_in(device.name, device.hardware);
    if (std::string note = stand_in.note(device.name, device.hardware); !note.empty())
      problems->push_back(std::move(note));
    if (stand_in.spec == nullptr) continue;
    try {
      device_targets_[d] = set.add(*stand_in.spec);
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch)
      // Predictions for the other targets still go ahead; this device's kernels go unscored.
    }
  }
  names_ = set.names();
}

PredictorAdapter::~PredictorAdapter() = default;

const std::string& PredictorAdapter::device_gpu(std::int32_t device) const noexcept {
  static const std::string kUnknown;
  const std::size_t t = target_of(device);
  return t == kNoTarget ? kUnknown : names_[t];
}

std::vector<std::string> PredictorAdapter::device_models() const {
  std::vector<std::string> models;
  for (const std::size_t t : device_targets_) {
    if (t != kNoTarget && std::find(models.begin(), models.end(), names_[t]) == models.end())
      models.push_back(names_[t]);
  }
  return models;
}

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
  options.source_spec = spec_of(record.device);
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
  const DeviceSpec* ran_on = spec_of(record.device);
  if (ran_on == nullptr) return 0;
  return pm2lat::source_lower_bound_us(record, cls, *ran_on, TimeBasis::kKernel);
}

GpuTimeRatioRange PredictorAdapter::time_ratio_range(std::string_view name,
                                                     std::int32_t device) const noexcept {
  if (!impl_->targets) return {};
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name)
      return pm2lat::time_ratio_range(spec_of(device), &impl_->targets->spec(i));
  }
  return {};
}

}  // namespace pm2lat::shim
