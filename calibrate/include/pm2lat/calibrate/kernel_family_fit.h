// Calibration of the long-tail kernel families from measured kernels of one GPU:
//  - memory-bound families (models/memory_family_predictor.h): a fit per family and, where
//    enough kernels of one configuration were measured, per configuration; shape fits on
//    the kernels whose bytes are known, geometry fits (launched threads) on all of them;
//  - convolutions (models/conv_model.h): a wave-model fit per kernel configuration with
//    enough shapes, and per math path a class fit normalised by the tile-step time at peak.
// Kernel records come from `pm2lat replay --out` records files (CUPTI durations, basis
// kernel) or from measurement tables (basis call: then `call` gives the dispatch overhead).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/profile.h"

namespace pm2lat::calibrate {

struct FamilyBuildReport {
  std::size_t family_kernels = 0, family_fits = 0;
  std::size_t conv_kernels = 0, conv_configs = 0, conv_classes = 0;
};

// A measured kernel and the GPU it ran on.
using SpecRecord = std::pair<const KernelRecord*, const DeviceSpec*>;

// Appends the family section for `records` (all of one GPU, with measured_us). Family-wide
// fits pool `pooled` (kernels of every GPU, features normalised by each one's spec) when
// given, so a family measured on one GPU serves the others; configuration fits use `records`.
void build_family_section(const std::vector<const KernelRecord*>& records, const DeviceSpec& spec,
                          Profile& profile, FamilyBuildReport* report = nullptr,
                          const std::vector<SpecRecord>* pooled = nullptr);

// Appends the conv section. `call` non-null: the records time whole calls; their dispatch
// overhead is subtracted before fitting and recorded in profile.call_overhead["conv"].
void build_conv_section(const std::vector<const KernelRecord*>& records, const DeviceSpec& spec,
                        Profile& profile, const CallOverhead* call = nullptr,
                        FamilyBuildReport* report = nullptr);

// Minimum launches of one convolution configuration for a geometry fit of its own (a fixed
// cost and a time per wave of tile steps, fitted together).
inline constexpr std::size_t kMinConvGeometryKernels = 4;

}  // namespace pm2lat::calibrate
