// The predictor: kernel record + target GPU -> predicted latency. The one entry point the
// runtime, the reports and the evaluation harnesses share.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "pm2lat/call_dispatch.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/error_band_table.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/predict_options.h"
#include "pm2lat/prediction.h"
#include "pm2lat/profile.h"
#include "pm2lat/target.h"

namespace pm2lat {

// The models a kernel can be routed to. The routing table (predictor.cpp) lists, per kernel
// family, which of them are tried and in which order; the first that answers predicts.
enum class ModelRoute : std::uint8_t {
  kCollective,        // NCCL link model (models/collective_model.h)
  kAttention,         // fused attention (models/attention_predictor.h)
  kConv,              // convolutions; cuDNN helper kernels as copies (models/conv_predictor.h)
  kFamilyFits,        // memory-bound fits per kernel family (models/memory_family_predictor.h)
  kOwnKernelFits,     // the same, the target's own kernel-time fits only
  kUnnamedKernel,     // a kernel no rule names and no context sizes: an elementwise geometry fit
  kScaledGemm,        // low-precision GEMM backends (models/scaled_gemm_predictor.h)
  kGemm,              // GEMM wave model (models/gemm_predictor.h)
  kOperatorFits,      // memory-bound fits per operator (models/operator_fit_predictor.h)
  kShapelessRowFits,  // a row kernel with no shape: its family's geometry fit, any GPU's
  kRoofline,          // spec roofline (models/roofline_model.h), flagged fallback
};

// Whether the routing table may send kernels of `family` to `route`.
bool routes_to(KernelFamily family, ModelRoute route) noexcept;

// Whether calibration should fit kernels of `family` per kernel family (measured as kernels):
// the families routed to family or own-kernel fits, and the families whose fits stand in for
// them (Triton pointwise kernels read elementwise fits).
bool fitted_as_kernel_family(KernelFamily family) noexcept;

class Predictor {
 public:
  // Loads every profile (*.json) under `profile_dir` and the device catalogue shipped with
  // them. Throws ProfileError (naming file and field) on a bad profile.
  static Predictor from_directory(const std::filesystem::path& profile_dir);
  // The directory of the shipped profiles: $PM2LAT_PROFILES if set, else the install or
  // source-tree location compiled in.
  static std::filesystem::path default_profile_dir();

  Predictor(DeviceCatalogue catalogue, std::vector<Profile> profiles);
  Predictor(Predictor&&) noexcept;
  Predictor& operator=(Predictor&&) noexcept;
  ~Predictor();

  // Resolves a forgiving GPU name ("H100", "h100-sxm", "NVIDIA H100 80GB HBM3") and adds it
  // as a target. Throws UnknownDeviceError listing close matches.
  TargetId add_target(std::string_view gpu_name);
  // The same for a GPU already resolved in this predictor's catalogue(). Adding a GPU twice
  // returns the first id.
  TargetId add_target(const DeviceSpec& spec);
  const Target& target(TargetId id) const;

  const DeviceCatalogue& catalogue() const noexcept;
  // Per profile, the operators whose host dispatch its table measured (call_dispatch.h), kept
  // from the calibration points the predictor releases after load.
  const HostDispatchTable& host_dispatch() const noexcept;

  // The expected-error table every prediction's band_pct is read from (from_directory loads
  // error_bands.json when the directory has one; otherwise bands are NaN). Set before
  // predicting: not thread-safe against concurrent predict calls.
  void set_error_bands(ErrorBandTable bands);
  const ErrorBandTable& error_bands() const noexcept;

  // Thread-compatible: const calls may run concurrently.
  Prediction predict(const KernelRecord& record, const KernelClass& cls, TargetId target,
                     const PredictOptions& options = {}) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pm2lat
