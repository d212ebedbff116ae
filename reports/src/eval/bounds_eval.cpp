#include "pm2lat/reports/eval/bounds_eval.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "pm2lat/models/bounded_prediction.h"
#include "pm2lat/models/physical_bounds.h"

namespace pm2lat::reports {

void BoundsCount::add(double us, double lower, double upper, const std::string& kernel,
                      const std::string& target, const std::string& family) {
  ++n;
  auto note = [&](BoundsExample& e, double factor, double bound) {
    if (std::fabs(std::log(factor)) <= std::fabs(std::log(e.factor))) return;
    e = {factor, us, bound, kernel, target, family};
  };
  if (us < lower) {
    ++below;
    note(worst_below, us / lower, lower);
  } else if (us > upper) {
    ++above;
    note(worst_above, us / upper, upper);
  }
}

BoundsEvalResult eval_bounds(Predictor& predictor, const std::vector<BoundsCase>& cases,
                             const std::vector<std::string>& targets) {
  BoundsEvalResult out;
  std::vector<TargetId> ids;
  for (const auto& name : targets) {
    ids.push_back(predictor.add_target(name));
    out.targets.push_back(predictor.target(ids.back()).name);
  }
  for (const BoundsCase& c : cases) {
    const std::string family(to_string(c.cls.family));
    const std::string& kernel = c.record.launch.name;
    PredictOptions opt;
    opt.basis = c.record.basis;
    opt.source_spec = c.source;
    opt.graph_replay = c.graph_replay;
    if (c.source != nullptr) opt.source_device = c.source->name;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const Target& t = predictor.target(ids[i]);
      const Prediction p = predictor.predict(c.record, c.cls, ids[i], opt);
      if (p.has(prediction_flags::kCommunication) || !(p.us > 0)) continue;
      // The bounds the predictor holds its answer within (rejected work: the launch's).
      const PhysicalBounds b =
          applied_bounds(c.record, c.cls, *t.spec, c.source, c.record.basis).bounds;
      out.predicted[c.set].add(p.us, b.lower_us, b.upper_us, kernel, t.name, family);
      out.predicted_by_family[{c.set, family}].add(p.us, b.lower_us, b.upper_us, kernel, t.name,
                                                   family);
      out.predicted_by_target[{c.set, t.name}].add(p.us, b.lower_us, b.upper_us, kernel, t.name,
                                                   family);
    }
    if (c.source == nullptr || !c.record.measured_us || c.cls.family == KernelFamily::kCollective)
      continue;
    const PhysicalBounds own =
        physical_bounds(c.record, c.cls, *c.source, c.source, c.record.basis);
    const double m = *c.record.measured_us;
    out.measured[c.set].add(m, own.lower_us, own.upper_us, kernel, c.source->name, family);
    out.measured_by_family[{c.set, family}].add(m, own.lower_us, own.upper_us, kernel,
                                                c.source->name, family);
  }
  return out;
}

namespace {

std::string short_name(const std::string& kernel) {
  return kernel.size() > 60 ? kernel.substr(0, 57) + "..." : kernel;
}

void print_counts(std::ostream& os, const std::string& what,
                  const std::map<std::string, BoundsCount>& by_set,
                  const std::map<std::pair<std::string, std::string>, BoundsCount>& by_family) {
  fmt::print(os, "\n{}\n{:<36} {:<18} {:>9} {:>8} {:>8}\n", what, "set", "family", "n", "below",
             "above");
  for (const auto& [set, c] : by_set) {
    for (const auto& [key, f] : by_family) {
      if (key.first != set || (f.below == 0 && f.above == 0)) continue;
      fmt::print(os, "{:<36} {:<18} {:>9} {:>8} {:>8}\n", set, key.second, f.n, f.below, f.above);
    }
    fmt::print(os, "{:<36} {:<18} {:>9} {:>8} {:>8}\n", set, "(all)", c.n, c.below, c.above);
    for (const BoundsExample* e : {&c.worst_below, &c.worst_above}) {
      if (e->factor == 1) continue;
      fmt::print(os, "    worst: {:.3g} us vs bound {:.3g} us (x{:.3g}) on {}: {} [{}]\n", e->us,
                 e->bound_us, e->factor, e->target, short_name(e->kernel), e->family);
    }
  }
}

nlohmann::json count_json(const BoundsCount& c) {
  auto example = [](const BoundsExample& e) -> nlohmann::json {
    if (e.factor == 1) return nullptr;
    return {{"factor", e.factor}, {"us", e.us},         {"bound_us", e.bound_us},
            {"kernel", e.kernel}, {"target", e.target}, {"family", e.family}};
  };
  return {{"n", c.n},
          {"below", c.below},
          {"above", c.above},
          {"worst_below", example(c.worst_below)},
          {"worst_above", example(c.worst_above)}};
}

}  // namespace

void print_bounds_eval(std::ostream& os, const BoundsEvalResult& r) {
  std::string targets;
  for (const auto& t : r.targets) targets += (targets.empty() ? "" : ",") + t;
  fmt::print(os, "targets: {}\n", targets);
  print_counts(os, "predictions outside their physical bounds (every target)", r.predicted,
               r.predicted_by_family);
  print_counts(os, "measurements outside the bounds of the GPU that ran them", r.measured,
               r.measured_by_family);
}

nlohmann::json bounds_eval_json(const BoundsEvalResult& r) {
  using nlohmann::json;
  using ByKey = std::map<std::pair<std::string, std::string>, BoundsCount>;
  auto sets = [](const std::map<std::string, BoundsCount>& by_set, const ByKey& by_family,
                 const ByKey* by_target) {
    json out = json::object();
    for (const auto& [set, c] : by_set) {
      json s = count_json(c);
      json fams = json::object(), targets = json::object();
      for (const auto& [key, f] : by_family) {
        if (key.first == set) fams[key.second] = count_json(f);
      }
      s["families"] = fams;
      if (by_target != nullptr) {
        for (const auto& [key, t] : *by_target) {
          if (key.first == set && (t.below > 0 || t.above > 0))
            targets[key.second] = {{"n", t.n}, {"below", t.below}, {"above", t.above}};
        }
        s["targets_outside"] = targets;
      }
      out[set] = s;
    }
    return out;
  };
  return {{"targets", r.targets},
          {"predicted", sets(r.predicted, r.predicted_by_family, &r.predicted_by_target)},
          {"measured", sets(r.measured, r.measured_by_family, nullptr)}};
}

}  // namespace pm2lat::reports
