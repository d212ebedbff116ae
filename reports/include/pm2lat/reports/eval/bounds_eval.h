// `pm2lat eval bounds`: every kernel of every trace and every row of the measurement tables,
// predicted on every target GPU, checked against its physical bounds (physical_bounds.h).
// Counts the predictions that leave them (the goal is none), and, as a check of the bounds
// themselves, the measurements on the GPU that ran them that do.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/predictor.h"

namespace pm2lat::reports {

// One measured kernel or call as the bounds check sees it.
struct BoundsCase {
  std::string set;  // where it comes from: a trace's name, "neusight", "aiconfigurator-gemm"
  KernelRecord record;
  KernelClass cls;
  const DeviceSpec* source = nullptr;  // the GPU that measured it (nullptr: unknown)
  bool graph_replay = false;           // timed in a replayed CUDA graph (AIConfigurator)
};

// The worst case of one kind: how far outside its bound, and what it was.
struct BoundsExample {
  double factor = 1;  // prediction / lower (below) or prediction / upper (above)
  double us = 0;
  double bound_us = 0;
  std::string kernel, target, family;
};

struct BoundsCount {
  std::size_t n = 0, below = 0, above = 0;
  BoundsExample worst_below, worst_above;  // factor 1 when none
  void add(double us, double lower, double upper, const std::string& kernel,
           const std::string& target, const std::string& family);
};

struct BoundsEvalResult {
  std::vector<std::string> targets;
  // Predictions on every target, per set and per (set, family).
  std::map<std::string, BoundsCount> predicted;
  std::map<std::pair<std::string, std::string>, BoundsCount> predicted_by_family;
  std::map<std::pair<std::string, std::string>, BoundsCount> predicted_by_target;
  // The measurement itself against the bounds of the GPU that ran it.
  std::map<std::string, BoundsCount> measured;
  std::map<std::pair<std::string, std::string>, BoundsCount> measured_by_family;
};

// `targets`: canonical or forgiving GPU names; every case is predicted on each.
BoundsEvalResult eval_bounds(Predictor& predictor, const std::vector<BoundsCase>& cases,
                             const std::vector<std::string>& targets);

void print_bounds_eval(std::ostream& os, const BoundsEvalResult& r);
nlohmann::json bounds_eval_json(const BoundsEvalResult& r);

}  // namespace pm2lat::reports
