#include "pm2lat/models/conv_predictor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string_view>
#include <unordered_map>

#include "octaves.h"
#include "pm2lat/classifier.h"
#include "pm2lat/median.h"
#include "pm2lat/models/conv_model.h"
#include "pm2lat/models/donor_ranking.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/models/physical_bounds.h"
#include "pm2lat/models/residual_interpolator.h"
#include "pm2lat/models/shapeless_tile_model.h"

namespace pm2lat {
namespace {

// Without any calibration: the uncalibrated tile kernel of models/shapeless_tile_model.h, and
// one pass over the tensors. Without a shape, calibration points of the configuration replace
// its typical reduction length.
constexpr double kDefaultMemory = 1.0;

// Class names per math type, built once: predictions stay allocation-free.
const std::string& class_name(DType math) {
  static const std::array<std::string, 16> names = [] {
    std::array<std::string, 16> n;
    for (std::size_t i = 0; i < n.size(); ++i) n[i] = conv_class_name(static_cast<DType>(i));
    return n;
  }();
  return names[std::min<std::size_t>(static_cast<std::size_t>(math), names.size() - 1)];
}

using residual_interpolation::kNeighbours;
// A configuration is chosen by vote among this many nearest calibrated convolutions.
constexpr std::size_t kChooserVotes = 8;

// Where a convolution sits among the calibrated ones: batch, channels in and out, spatial
// size, filter taps times stride.
std::array<double, 5> conv_key(const ConvShape& c) {
  return {octaves(static_cast<double>(c.batch)), octaves(static_cast<double>(c.in_channels)),
          octaves(static_cast<double>(c.out_channels)),
          octaves(static_cast<double>(c.in_h * c.in_w)),
          octaves(static_cast<double>(c.kernel_h * c.kernel_w * c.stride_h))};
}

// The model time of a calibrated configuration for a shape, in the profile's basis.
double config_us(const GemmConfigFit& fit, const Profile& p, const DeviceSpec& spec,
                 const ConvShape& s, ConvPass pass, const Dim3& grid) {
  const GemmWork w = conv_work(fit, s, pass, grid,
                               dtype_bytes(s.dtype == DType::kUnknown ? DType::kFp32 : s.dtype));
  const double kern = gemm_wave_kernel_us(fit, spec, w);
  if (p.basis != TimeBasis::kCall) return kern;
  return p.overhead_for("conv").call_us(kern);
}

}  // namespace

struct ConvPredictor::Impl {
  struct Device {
    const Profile* profile = nullptr;
    const DeviceSpec* spec = nullptr;
    std::unordered_map<std::string, std::size_t> by_config;  // config or class name -> fit
    std::unordered_map<std::string, std::size_t>
        geometry;                         // the same, fits for launches without shapes
    std::vector<double> typical_k_iters;  // per fit, from its points
    // Per fit, from its points: how it computes convolutions (the most frequent), and the
    // output elements of its pass per block of its launches (median).
    std::vector<ConvAlgorithm> algorithm;
    std::vector<double> outputs_per_block;
    std::vector<ResidualInterpolator<5>> residual;  // per fit, from its points
    // Every calibrated convolution of a configuration fit (not class or geometry fits),
    // to choose this GPU's configuration for a shape seen on another GPU.
    ResidualInterpolator<5> chooser;
    std::vector<KernelClass> config_classes;  // per fit, classified once
    struct Chosen {
      std::int32_t config;
      ConvPass pass;
      DType dtype;
    };
    std::vector<Chosen> chooser_points;
  };
  std::vector<Device> devices;
  struct TargetDevices {
    const DeviceSpec* spec = nullptr;
    int own_kernel = -1, own_call = -1;  // own profiles by basis
    std::vector<int> order;              // by similarity, own first
  };
  std::vector<TargetDevices> targets;
};

ConvPredictor::ConvPredictor() : impl_(std::make_unique<Impl>()) {}
ConvPredictor::ConvPredictor(ConvPredictor&&) noexcept = default;
ConvPredictor& ConvPredictor::operator=(ConvPredictor&&) noexcept = default;
ConvPredictor::~ConvPredictor() = default;

ConvPredictor::ConvPredictor(const DeviceCatalogue& catalogue, const std::vector<Profile>& profiles)
    : impl_(std::make_unique<Impl>()) {
  for (const Profile& p : profiles) {
    if (p.conv_configs.empty()) continue;
    Impl::Device d;
    d.profile = &p;
    d.spec = catalogue.find(p.device);
    if (d.spec == nullptr) continue;
    std::vector<std::vector<double>> k_iters(p.conv_configs.size());
    std::vector<std::vector<double>> per_block(p.conv_configs.size());
    std::vector<std::array<int, 3>> algorithms(p.conv_configs.size(), {0, 0, 0});
    std::vector<std::vector<std::array<double, 5>>> keys(p.conv_configs.size());
    std::vector<std::vector<double>> res(p.conv_configs.size());
    std::vector<std::array<double, 5>> chooser_keys;
    for (const GemmConfigFit& c : p.conv_configs) {
      d.config_classes.push_back(classify_kernel(c.config));
      d.config_classes.back().config = c.config;  // the fit's key, whatever the name decodes to
    }
    for (const ConvPoint& pt : p.conv_points) {
      const GemmConfigFit& c = p.conv_configs[static_cast<std::size_t>(pt.config)];
      ConvShape s;
      s.batch = pt.batch;
      s.in_channels = pt.in_channels;
      s.out_channels = pt.out_channels;
      s.in_h = pt.in_h;
      s.in_w = pt.in_w;
      s.kernel_h = pt.kernel_h;
      s.kernel_w = pt.kernel_w;
      s.stride_h = s.stride_w = pt.stride;
      s.pad_h = s.pad_w = pt.pad;
      KernelClass cls;
      cls.config = c.config;
      s.dtype = c.dtype;
      const ConvPass pass = conv_pass(cls, OpContext{}, pt.grid);
      const auto ci = static_cast<std::size_t>(pt.config);
      const ConvShape run = kernel_channels(s, d.config_classes[ci]);
      const ConvAlgorithm algorithm = conv_algorithm(c.config, run, pass, pt.grid);
      k_iters[ci].push_back(conv_work(c, run, pass, pt.grid, 4, algorithm).k_iters);
      ++algorithms[ci][static_cast<std::size_t>(algorithm)];
      if (pt.grid.volume() > 0)
        per_block[ci].push_back(conv_outputs(run, pass) / static_cast<double>(pt.grid.volume()));
      keys[ci].push_back(conv_key(s));
      if (c.config.rfind("conv:", 0) != 0 && c.config.find("#geometry") == std::string::npos) {
        chooser_keys.push_back(conv_key(s));
        d.chooser_points.push_back({pt.config, pass, c.dtype});
      }
      res[ci].push_back(std::log(pt.us / config_us(c, p, *d.spec, run, pass, pt.grid)));
    }
    const std::string suffix = conv_geometry_fit_name("");
    for (std::size_t i = 0; i < p.conv_configs.size(); ++i) {
      const std::string& name = p.conv_configs[i].config;
      if (name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        d.geometry.emplace(name.substr(0, name.size() - suffix.size()), i);
      } else {
        d.by_config.emplace(name, i);
      }
      d.typical_k_iters.push_back(upper_median(k_iters[i]));
      d.outputs_per_block.push_back(per_block[i].empty() ? 0.0 : upper_median(per_block[i]));
      const auto& a = algorithms[i];
      d.algorithm.push_back(
          static_cast<ConvAlgorithm>(std::max_element(a.begin(), a.end()) - a.begin()));
      d.residual.emplace_back(std::move(keys[i]), std::move(res[i]), kNeighbours);
    }
    d.chooser = ResidualInterpolator<5>(
        std::move(chooser_keys), std::vector<double>(d.chooser_points.size(), 0.0), kChooserVotes);
    impl_->devices.push_back(std::move(d));
  }
}

void ConvPredictor::add_target(const Target& target) {
  const DeviceSpec& spec = *target.spec;
  Impl::TargetDevices t;
  t.spec = &spec;
  for (std::size_t i = 0; i < impl_->devices.size(); ++i) {
    const auto& d = impl_->devices[i];
    if (d.spec->name == spec.name)
      (d.profile->basis == TimeBasis::kKernel ? t.own_kernel : t.own_call) = static_cast<int>(i);
  }
  for (std::size_t i : rank_donors(spec, donor_candidates(impl_->devices), kConvDonorWeights))
    t.order.push_back(static_cast<int>(i));
  impl_->targets.push_back(std::move(t));
}

ConvPredictor::ChosenConfig ConvPredictor::choose_own_config(const KernelRecord& r,
                                                             const KernelClass& cls, DType dtype,
                                                             std::size_t target) const noexcept {
  const Impl::TargetDevices& t = impl_->targets[target];
  const ConvPass pass = conv_pass(cls, r.op, r.launch.grid);
  for (int own : {t.own_kernel, t.own_call}) {
    if (own < 0) continue;
    const Impl::Device& d = impl_->devices[static_cast<std::size_t>(own)];
    if (d.by_config.contains(cls.config)) return {};  // the target runs this kernel too
  }
  for (int own : {t.own_kernel, t.own_call}) {
    if (own < 0) continue;
    const Impl::Device& d = impl_->devices[static_cast<std::size_t>(own)];
    std::array<std::size_t, kChooserVotes> idx{};
    std::array<double, kChooserVotes> d2{};
    const std::size_t n =
        d.chooser.nearest_k(conv_key(r.op.conv), kChooserVotes, idx.data(), d2.data());
    // Votes weighted by nearness; the nearest point's configuration breaks ties.
    std::array<std::int32_t, kChooserVotes> configs{};
    std::array<double, kChooserVotes> weight{};
    std::size_t distinct = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& c = d.chooser_points[idx[i]];
      if (c.pass != pass || (c.dtype != dtype && c.dtype != DType::kUnknown)) continue;
      const double w = 1.0 / (1e-3 + std::sqrt(d2[i]));
      std::size_t j = 0;
      while (j < distinct && configs[j] != c.config) ++j;
      if (j == distinct) configs[distinct++] = c.config;
      weight[j] += w;
    }
    if (distinct == 0) continue;
    const std::size_t best = static_cast<std::size_t>(
        std::max_element(weight.begin(), weight.begin() + distinct) - weight.begin());
    const auto fit = static_cast<std::size_t>(configs[best]);
    ChosenConfig chosen;
    chosen.cls = &d.config_classes[fit];
    chosen.algorithm = d.algorithm[fit];
    // The record's grid where its kernel cuts the output the same way (the nearest guess),
    // and where nothing better is known.
    chosen.grid = r.launch.grid;
    const ConvShape run = kernel_channels(r.op.conv, *chosen.cls);
    const double per_block = d.outputs_per_block[fit];
    if (chosen.algorithm == ConvAlgorithm::kWinogradBatchedGemm) {
      chosen.grid = winograd_batched_gemm_grid(d.profile->conv_configs[fit], run);
    } else if (chosen.algorithm != conv_algorithm(cls.config, r.op.conv, pass, r.launch.grid) &&
               per_block > 0) {
      chosen.grid = {grid_x_for(std::ceil(conv_outputs(run, pass) / per_block)), 1, 1};
    }
    return chosen;
  }
  return {};
}

std::optional<Prediction> ConvPredictor::predict(const ModelQuery& q) const noexcept {
  return predict(q.record, q.cls, q.target, q.options.basis == TimeBasis::kCall,
                 !q.observed_on_target, q.source);
}

Prediction ConvPredictor::predict(const KernelRecord& r, const KernelClass& cls, std::size_t target,
                                  bool call_basis, bool choose_config, const DeviceSpec* source,
                                  const ChosenConfig* chosen) const noexcept {
  Prediction p;
  p.model = ModelKind::kConv;
  p.basis = TimeBasis::kKernel;
  if (target >= impl_->targets.size()) return p;
  const Impl::TargetDevices& t = impl_->targets[target];
  const DeviceSpec& spec = *t.spec;
  const bool has_shape = r.op.kind == OpKind::kConv && r.op.conv.valid();
  // The GPU the kernel ran on: the record's source, else the target itself.
  const std::string_view ran_on = source != nullptr ? source->name : spec.name;
  const DType dtype = has_shape && r.op.conv.dtype != DType::kUnknown ? r.op.conv.dtype
                      : cls.dtype != DType::kUnknown                  ? cls.dtype
                                                                      : DType::kFp32;
  if (choose_config && has_shape) {
    if (const ChosenConfig own = choose_own_config(r, cls, dtype, target); own.cls != nullptr) {
      Prediction q = predict(r, *own.cls, target, call_basis, false, source, &own);
      q.flags |= prediction_flags::kConfigChosen;
      return q;
    }
  }
  // The launch the kernel makes: the record's, or the one the chosen configuration would.
  const Dim3& grid = chosen != nullptr ? chosen->grid : r.launch.grid;
  const DType math = conv_math_type(cls, dtype);
  const GemmConfigFit kernel = conv_kernel_config(cls, dtype);

  if (!has_shape) {
    // Launches without a shape: the geometry fit of the configuration, else of its class. Such
    // a fit stands for the work of the programs it was made on, not for its GPU: for another
    // GPU than the one the kernel ran on, the fit that GPU takes, carried by spec (as the
    // memory-bound families' geometry fits, memory_family_predictor.cpp).
    // A fit whose intercept no launch's fixed cost reaches is its programs' typical layer (the
    // H100's class fit: 1.7 ms, VGG-13 at batch 512 on persistent kernels of one wave each):
    // it prices the launches of the GPU that made it, not another GPU's programs.
    std::array<int, kMaxRankedDonors> from_source{};
    const std::span<const int> order =
        order_from_source(source, spec, t.order, impl_->devices, kConvDonorWeights, from_source);
    for (const std::string* name : {&cls.config, &class_name(math)}) {
      for (int i : order) {
        const auto& d = impl_->devices[static_cast<std::size_t>(i)];
        if (d.profile->basis != TimeBasis::kKernel) continue;
        const auto it = d.geometry.find(*name);
        if (it == d.geometry.end()) continue;
        const GemmConfigFit& g = d.profile->conv_configs[it->second];
        if (g.c0 > bound_constants::kMaxFixedKernelUs && d.spec->name != ran_on) continue;
        const double waves =
            std::ceil(static_cast<double>(std::max<std::uint64_t>(1, r.launch.grid.volume())) /
                      static_cast<double>(std::max(1, spec.sm_count)));
        p.us = std::max(0.5, g.c0 + g.c_wave_k * waves * conv_tile_step_us(kernel, math, spec));
        p.flags |= prediction_flags::kNoShape;
        if (d.spec->name != spec.name) p.flags |= prediction_flags::kSpecScaled;
        if (name == &cls.config) p.config = g.config;
        return p;
      }
    }
  }
  // The configuration's own fit: this GPU, then a GPU of the same architecture.
  const Impl::Device* dev = nullptr;
  std::size_t fit_index = 0;
  for (int i : t.order) {
    const auto& d = impl_->devices[static_cast<std::size_t>(i)];
    if (d.spec->cc_major != spec.cc_major) continue;
    if (auto it = d.by_config.find(cls.config); it != d.by_config.end()) {
      dev = &d;
      fit_index = it->second;
      break;
    }
  }
  GemmConfigFit fit = kernel;
  const ResidualInterpolator<5>* residual = nullptr;
  double k_iters_guess = kTypicalReduction / std::max(1, kernel.tile_k);
  if (dev != nullptr) {
    fit = dev->profile->conv_configs[fit_index];
    p.config = dev->profile->conv_configs[fit_index].config;
    if (dev->typical_k_iters[fit_index] > 0) k_iters_guess = dev->typical_k_iters[fit_index];
    residual = &dev->residual[fit_index];
    if (dev->spec != &spec && dev->spec->name != spec.name) {
      const double from = dev->spec->peak_tflops(math) / std::max(1, dev->spec->sm_count);
      const double to = spec.peak_tflops(math) / std::max(1, spec.sm_count);
      if (from > 0 && to > 0) {
        fit.c_wave_k *= from / to;
        fit.c_block_k *= from / to;
      }
      if (dev->spec->boost_clock_mhz > 0 && spec.boost_clock_mhz > 0)
        fit.c_wave *= dev->spec->boost_clock_mhz / spec.boost_clock_mhz;
      p.flags |= prediction_flags::kSpecScaled;
    }
  } else {
    // The class fit of the math path (normalised: an inverse efficiency per tile step).
    const std::string& name = class_name(math);
    for (int i : t.order) {
      const auto& d = impl_->devices[static_cast<std::size_t>(i)];
      if (d.profile->basis != TimeBasis::kKernel) continue;
      if (auto it = d.by_config.find(name); it != d.by_config.end()) {
        dev = &d;
        fit_index = it->second;
        break;
      }
    }
    const double step = conv_tile_step_us(kernel, math, spec);
    if (dev != nullptr) {
      const GemmConfigFit& c = dev->profile->conv_configs[fit_index];
      fit.c0 = c.c0;
      fit.c_wave_k = c.c_wave_k * step;
      fit.c_block_k = c.c_block_k * step;
      fit.c_wave = c.c_wave;
      fit.c_mem = c.c_mem;
      fit.blocks_per_sm = c.blocks_per_sm;
      if (dev->spec->name != spec.name) p.flags |= prediction_flags::kSpecScaled;
    } else {
      fit.c0 = kUncalibratedFixedUs;
      fit.c_wave_k = uncalibrated_inverse_efficiency(cls, math, spec, ran_on == spec.name) * step;
      fit.c_mem = kDefaultMemory;
      p.flags |= prediction_flags::kExtrapolated;
    }
  }

  GemmWork w;
  const double grid_blocks = static_cast<double>(r.launch.grid.volume());
  if (has_shape) {
    const ConvShape run = kernel_channels(r.op.conv, cls);
    const ConvPass pass = conv_pass(cls, r.op, grid);
    w = chosen != nullptr ? conv_work(fit, run, pass, grid, dtype_bytes(dtype), chosen->algorithm)
                          : conv_work(fit, run, pass, grid, dtype_bytes(dtype));
  } else {
    w.blocks = std::max(1.0, grid_blocks);
    w.k_iters = k_iters_guess;
    w.bytes = w.blocks * static_cast<double>(fit.tile_m) * static_cast<double>(fit.tile_n) *
              dtype_bytes(dtype) *
              (1.0 + 2.0 * k_iters_guess * static_cast<double>(fit.tile_k) /
                         static_cast<double>(std::max(1, std::min(fit.tile_m, fit.tile_n))));
    p.flags |= prediction_flags::kNoShape;
  }
  double us = gemm_wave_kernel_us(fit, spec, w);
  if (call_basis && dev != nullptr && dev->profile->basis == TimeBasis::kCall) {
    us = dev->profile->overhead_for("conv").call_us(us);
    p.basis = TimeBasis::kCall;
  }
  // What the configuration's fit leaves unexplained near this shape.
  if (residual != nullptr && has_shape) us *= residual->correction(conv_key(r.op.conv));
  p.us = us;
  return p;
}

}  // namespace pm2lat
