#include "pm2lat/calibrate/scaled_gemm_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>

#include "pm2lat/calibrate/nnls.h"
#include "pm2lat/calibrate/profile_builder.h"
#include "pm2lat/median.h"
#include "pm2lat/models/memory_bound_model.h"
#include "pm2lat/models/residual_interpolator.h"
#include "pm2lat/models/scaled_gemm_model.h"

namespace pm2lat::calibrate {
namespace {

// Calls replayed in a CUDA graph never take longer than a few µs at their smallest (1.5-7 µs
// in the AIConfigurator tables); a backend whose fastest calls take longer than this runs
// eagerly and its floor is the host's time per call (55-280 µs for vLLM's block FP8).
constexpr double kEagerFloorUs = 20;
// Calls of an eager backend within this factor of the host time say little about the device
// time: the device fit skips them. (GB200's Grace host varies by up to 1.5x from call to call;
// at 1.3x the device fit took host noise for a 440 us fixed cost.)
constexpr double kDeviceBoundFactor = 2.0;
// Fewer device-bound calls than this leave the device time unknown.
constexpr std::size_t kMinDeviceRows = 20;
// Calls over twice the host time are device-bound only if they are the backend's large calls:
// their median FLOPs at least this many times the median of all its calls. Otherwise they are
// host noise, and the backend is host-bound wherever it was measured (vLLM's CUTLASS block FP8
// serves only n or k below 128: 1.7-2 % of its calls take over twice its host time, at the
// same sizes as the rest).
constexpr double kDeviceBoundWorkRatio = 4;
// Calls within this factor of their class's floor stand for the host time.
constexpr double kHostBoundFactor = 1.5;
// Fewer calls than this of a token-alignment class do not get a host time of their own.
constexpr std::size_t kMinHostRows = 20;
// A host time of unaligned token counts closer than this to the aligned one is the same.
constexpr double kSameHostTolerance = 0.05;
// Each main-loop step of the GEMM consumes 128 bytes of K per row (the 128-byte TMA swizzle
// of the FP8 and FP4 kernels: BLOCK_K = 128 FP8 or 256 FP4 elements).
constexpr double kKStepBytes = 128;

// Nominal CTA tiles tried per backend; the tables do not name the kernel, the fit keeps the
// tile whose wave quantisation explains the calls best.
constexpr std::array<std::array<std::int32_t, 2>, 6> kTileCandidates{
    {{64, 64}, {64, 128}, {128, 64}, {128, 128}, {128, 256}, {256, 128}}};
constexpr std::int32_t kMaxBlocksPerSm = 2;
// Calls off the first fit by more than this factor either way are measurement spikes (a few per
// cent of some tables take 2-7x the time the same shape takes on a sibling GPU and on its
// neighbours); the fit is redone without them.
constexpr double kSpikeFactor = 1.5;

struct Sample {
  const MeasuredCall* call;
  std::int64_t m, n, k;
  double us;
  bool aligned;
};

// The device model's regressors. An eager backend's device time shows only on its large calls,
// which cannot tell a fixed cost apart (its extrapolation to small calls put it above the host
// time); the two kernels' launch costs hide under the host time anyway, so it has none.
std::vector<double> regressors(const ScaledGemmFit& f, const DeviceSpec& spec, const Sample& s) {
  const ScaledGemmFeatures x = scaled_gemm_features(f, spec, scaled_gemm_work(f, s.m, s.n, s.k));
  const double fixed = f.host_us > 0 ? 0.0 : 1.0;
  return {fixed, x.wave.wave_k, x.wave.wave, x.wave.mem, x.wave.block_k, x.quant};
}

double call_mape_pct(const ScaledGemmFit& f, const DeviceSpec& spec,
                     const std::vector<Sample>& samples) {
  if (samples.empty()) return 0;
  double err = 0;
  for (const Sample& s : samples) {
    const double pred = scaled_gemm_time(f, spec, scaled_gemm_work(f, s.m, s.n, s.k)).call_us();
    err += std::fabs(pred - s.us) / s.us;
  }
  return 100.0 * err / static_cast<double>(samples.size());
}

// The host time of calls of one token-alignment class: the median of those within
// kHostBoundFactor of the class's floor; 0 when the class has too few calls.
double host_time(const std::vector<Sample>& samples, bool aligned) {
  std::vector<double> lat;
  for (const Sample& s : samples) {
    if (s.aligned == aligned) lat.push_back(s.us);
  }
  if (lat.size() < kMinHostRows) return 0;
  const double floor = latency_floor(lat);
  std::erase_if(lat, [&](double v) { return v > kHostBoundFactor * floor; });
  return median(lat);
}

// Calls whose residual differs from the median of their nearest calibrated neighbours' by more
// than kSpikeFactor either way: spikes that would bend the neighbourhood's interpolation.
constexpr std::size_t kSpikeNeighbours = 8;

std::vector<bool> spikes(const ScaledGemmFit& f, const DeviceSpec& spec,
                         const std::vector<const MeasuredCall*>& rows) {
  std::vector<std::array<double, 5>> keys;
  std::vector<double> res;
  for (const MeasuredCall* c : rows) {
    const GemmShape& g = c->record.op.gemm;
    const double model = scaled_gemm_time(f, spec, scaled_gemm_work(f, g.m, g.n, g.k)).call_us();
    keys.push_back(scaled_gemm_residual_key(f, spec, g.m, g.n, g.k));
    res.push_back(std::log(*c->record.measured_us / std::max(0.5, model)));
  }
  const ResidualInterpolator<5> index(keys, {}, 1);
  std::vector<bool> out(rows.size(), false);
  std::array<std::size_t, kSpikeNeighbours + 1> idx{};
  std::array<double, kSpikeNeighbours + 1> dist2{};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t found = index.nearest_k(keys[i], idx.size(), idx.data(), dist2.data());
    std::vector<double> others;
    for (std::size_t j = 0; j < found; ++j) {
      if (idx[j] != i) others.push_back(res[idx[j]]);
    }
    if (others.size() >= 4 && std::fabs(res[i] - median(others)) > std::log(kSpikeFactor))
      out[i] = true;
  }
  return out;
}

}  // namespace

bool is_scaled_gemm_call(const MeasuredCall& call) {
  const GemmShape& g = call.record.op.gemm;
  return call.record.op.kind == OpKind::kGemm && g.scaling != GemmScaling::kNone &&
         call.kernel_class.has_value();
}

ScaledGemmFit fit_scaled_gemm(const std::vector<const MeasuredCall*>& calls,
                              const DeviceSpec& spec) {
  ScaledGemmFit base;
  std::vector<Sample> samples;
  for (const MeasuredCall* c : calls) {
    const GemmShape& g = c->record.op.gemm;
    samples.push_back({c, g.m, g.n, g.k, *c->record.measured_us, g.m % kScaleRowAlignment == 0});
  }
  if (calls.empty()) return base;
  const GemmShape& g0 = calls.front()->record.op.gemm;
  base.config = calls.front()->kernel_class->config;
  base.dtype = g0.a;
  base.scaling = g0.scaling;
  base.gemm.config = base.config;
  base.gemm.dtype = base.dtype;
  base.gemm.tile_k =
      static_cast<std::int32_t>(kKStepBytes / std::max(0.5, dtype_bytes(base.dtype)));
  base.points = static_cast<std::int32_t>(calls.size());

  std::vector<double> all;
  for (const Sample& s : samples) all.push_back(s.us);
  if (latency_floor(all) > kEagerFloorUs) {
    base.host_us = host_time(samples, true);
    const double unaligned = host_time(samples, false);
    if (base.host_us <= 0) base.host_us = unaligned;
    if (unaligned > 0 && std::fabs(unaligned / base.host_us - 1) > kSameHostTolerance)
      base.host_unaligned_us = unaligned;
  }
  // Device-bound calls fit the device model; an eager backend's host-bound calls do not.
  std::vector<const Sample*> device_bound;
  for (const Sample& s : samples) {
    const double host =
        s.aligned || base.host_unaligned_us <= 0 ? base.host_us : base.host_unaligned_us;
    if (s.us >= kDeviceBoundFactor * host) device_bound.push_back(&s);
  }
  auto median_work = [](auto begin, auto end) {
    std::vector<double> w;
    for (auto it = begin; it != end; ++it) {
      const Sample& s = *it;
      w.push_back(2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) *
                  static_cast<double>(s.k));
    }
    return w.empty() ? 0.0 : median(w);
  };
  std::vector<Sample> bound_copy;
  for (const Sample* s : device_bound) bound_copy.push_back(*s);
  const bool large_calls = median_work(bound_copy.begin(), bound_copy.end()) >=
                           kDeviceBoundWorkRatio * median_work(samples.begin(), samples.end());
  if (device_bound.size() < kMinDeviceRows || (base.host_us > 0 && !large_calls)) {
    if (base.host_us > 0) {
      // Host-bound throughout: no device model to fit (its time stays under the host's).
      base.gemm.tile_m = base.gemm.tile_n = 128;
      base.fit_mape_pct = call_mape_pct(base, spec, samples);
      base.gemm.points = base.points;
      base.gemm.fit_mape_pct = base.fit_mape_pct;
      return base;
    }
    device_bound.clear();
    for (const Sample& s : samples) device_bound.push_back(&s);
  }

  ScaledGemmFit best = base;
  double best_err = -1;
  for (const auto& tile : kTileCandidates) {
    for (std::int32_t bps = 1; bps <= kMaxBlocksPerSm; ++bps) {
      ScaledGemmFit f = base;
      f.gemm.tile_m = tile[0];
      f.gemm.tile_n = tile[1];
      f.gemm.blocks_per_sm = bps;
      std::vector<std::vector<double>> x;
      std::vector<double> y;
      for (const Sample* s : device_bound) {
        x.push_back(regressors(f, spec, *s));
        y.push_back(s->us);
      }
      auto fit = nnls_relative(x, y);
      if (!fit) continue;
      std::vector<std::vector<double>> kept_x;
      std::vector<double> kept_y;
      for (std::size_t r = 0; r < x.size(); ++r) {
        double pred = 0;
        for (std::size_t j = 0; j < x[r].size(); ++j) pred += x[r][j] * fit->coef[j];
        if (pred <= kSpikeFactor * y[r] && y[r] <= kSpikeFactor * pred) {
          kept_x.push_back(x[r]);
          kept_y.push_back(y[r]);
        }
      }
      if (kept_y.size() < x.size() && kept_y.size() >= x.size() / 2) {
        if (auto refit = nnls_relative(kept_x, kept_y)) fit = std::move(refit);
      }
      // The fixed cost belongs to both kernels; the quantisation kernel takes the shortest
      // time a memory-bound kernel runs, the GEMM kernel the rest.
      const double c0 = fit->coef[0];
      f.quant_c0 = std::min(c0, kMinMemoryKernelUs);
      f.gemm.c0 = c0 - f.quant_c0;
      f.gemm.c_wave_k = fit->coef[1];
      f.gemm.c_wave = fit->coef[2];
      f.gemm.c_mem = fit->coef[3];
      f.gemm.c_block_k = fit->coef[4];
      f.quant_c_byte = fit->coef[5];
      const double err = call_mape_pct(f, spec, samples);
      if (best_err < 0 || err < best_err) {
        best_err = err;
        best = f;
      }
    }
  }
  best.fit_mape_pct = std::max(0.0, best_err);
  best.gemm.points = best.points;
  best.gemm.fit_mape_pct = best.fit_mape_pct;
  return best;
}

std::size_t append_scaled_gemm_section(const std::vector<const MeasuredCall*>& calls,
                                       const DeviceSpec& spec, Profile& profile) {
  // A backend serves one operand type and scaling; keyed by all three all the same, so that a
  // table reusing a backend label for two types still gets one fit per type.
  std::map<std::string, std::vector<const MeasuredCall*>> by_backend;
  for (const MeasuredCall* c : calls) {
    if (!is_scaled_gemm_call(*c)) continue;
    const GemmShape& g = c->record.op.gemm;
    by_backend[c->kernel_class->config + '|' + gemm_type_label(g.a, g.scaling)].push_back(c);
  }
  std::size_t added = 0;
  for (const auto& [backend, rows] : by_backend) {
    const auto index = static_cast<std::int32_t>(profile.scaled_gemm_fits.size());
    ScaledGemmFit fit = fit_scaled_gemm(rows, spec);
    // Spikes stay out of the calibration points: they would pass their residuals to every
    // neighbour (the fit itself already set them aside).
    const std::vector<bool> spike = spikes(fit, spec, rows);
    fit.points = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (spike[i]) continue;
      const GemmShape& g = rows[i]->record.op.gemm;
      profile.scaled_gemm_points.push_back({index, g.m, g.n, g.k, *rows[i]->record.measured_us});
      ++fit.points;
      ++added;
    }
    fit.gemm.points = fit.points;
    profile.scaled_gemm_fits.push_back(std::move(fit));
  }
  return added;
}

}  // namespace pm2lat::calibrate
