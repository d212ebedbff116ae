#include "collect/predictor_adapter.h"

#include <exception>
#include <optional>

#include "pm2lat/classifier.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_error.h"

namespace pm2lat::shim {

struct PredictorAdapter::Impl {
  std::optional<Predictor> predictor;
  std::vector<TargetId> ids;
};

PredictorAdapter::PredictorAdapter(const std::vector<std::string>& targets,
                                   const std::string& source_device,
                                   std::vector<std::string>* problems)
    : impl_(std::make_unique<Impl>()) {
  const auto dir = Predictor::default_profile_dir();
  try {
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
  Predictor& p = *impl_->predictor;
  auto add = [&](const std::string& name, bool quiet) {
    try {
      const TargetId id = p.add_target(name);
      const std::string& canonical = p.target(id).name;
      for (const auto& n : names_) {
        if (n == canonical) return canonical;  // named twice
      }
      impl_->ids.push_back(id);
      names_.push_back(canonical);
      return canonical;
    } catch (const UnknownDeviceError& e) {
      if (!quiet) {
        std::string msg = "unknown target GPU '" + name + "'";
        if (!e.close_matches().empty()) {
          msg += " (did you mean";
          for (const auto& c : e.close_matches()) msg += " " + c;
          msg += "?)";
        }
        problems->push_back(msg + "; it is skipped");
      }
    } catch (const std::exception& e) {
      if (!quiet) problems->push_back("target GPU '" + name + "': " + e.what());
    }
    return std::string();
  };
  // Targets first, in the user's order (the first one labels NVTX ranges), then the GPU the
  // program runs on, which the summary compares predictions with measurements for.
  for (const auto& t : targets) add(t, false);
  if (!source_device.empty()) source_name_ = add(source_device, true);
}

PredictorAdapter::~PredictorAdapter() = default;

bool PredictorAdapter::available() const noexcept {
  return impl_->predictor.has_value() && !impl_->ids.empty();
}

KernelClass PredictorAdapter::classify(std::string_view kernel_name) noexcept {
  return classify_kernel(kernel_name);
}

void PredictorAdapter::predict(const KernelRecord& record, const KernelClass& cls,
                               std::vector<std::pair<std::string, Prediction>>& out) const {
  out.clear();
  if (!impl_->predictor) return;
  PredictOptions options;
  options.basis = TimeBasis::kKernel;
  options.source_device = source_name_;
  for (std::size_t i = 0; i < impl_->ids.size(); ++i) {
    try {
      out.emplace_back(names_[i], impl_->predictor->predict(record, cls, impl_->ids[i], options));
    } catch (const std::exception&) {
      // A model that cannot handle this record leaves it without a prediction for that GPU.
    }
  }
}

}  // namespace pm2lat::shim
