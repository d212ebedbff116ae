#include "pm2lat/reports/device_list.h"

#include <fmt/format.h>

#include <ostream>
#include <set>

namespace pm2lat::reports {
namespace {

// What a GPU's own profiles calibrate, in the order the models are listed in MODELS.md.
std::string calibrated_sections(const Target& t) {
  std::set<std::string> gemm_types;
  bool operators = false, attention = false, conv = false, families = false;
  for (const Profile* p : t.profiles) {
    for (const GemmConfigFit& c : p->gemm_configs) gemm_types.emplace(to_string(c.dtype));
    operators = operators || !p->vector_fits.empty();
    attention = attention || !p->attention_configs.empty();
    conv = conv || !p->conv_configs.empty();
    families = families || !p->family_fits.empty();
  }
  std::string out;
  auto add = [&out](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  if (!gemm_types.empty()) {
    std::string types;
    for (const auto& g : gemm_types) types += (types.empty() ? "" : ", ") + g;
    add("gemm " + types);
  }
  if (operators) add("operators");
  if (attention) add("attention");
  if (conv) add("conv");
  if (families) add("kernel families");
  return out;
}

std::string tflops(double v) { return v > 0 ? fmt::format("{:.1f}", v) : "-"; }

}  // namespace

namespace {

DeviceListing listing_of(Predictor& predictor, const DeviceSpec& spec) {
  const Target& t = predictor.target(predictor.add_target(spec));
  DeviceListing d;
  d.spec = &spec;
  if (!t.spec_scaled) {
    d.calibrated = calibrated_sections(t);
  } else if (t.profile_spec != nullptr) {
    d.borrowed_from = t.profile_spec->name;
  }
  return d;
}

}  // namespace

std::vector<DeviceListing> list_devices(Predictor& predictor) {
  std::vector<DeviceListing> out;
  for (const DeviceSpec& spec : predictor.catalogue().devices()) {
    out.push_back(listing_of(predictor, spec));
  }
  return out;
}

std::vector<DeviceListing> list_named_devices(Predictor& predictor,
                                              const std::vector<std::string>& names) {
  const DeviceCatalogue& catalogue = predictor.catalogue();
  std::vector<DeviceListing> out;
  for (const std::string& name : names) {
    // A name alone (no hardware to read): the catalogue's entry, else its model's.
    const StandIn stand_in = catalogue.stand_in(name, GpuHardware{});
    if (stand_in.spec == nullptr) catalogue.resolve(name);  // throws, naming the closest names
    DeviceListing d = listing_of(predictor, *stand_in.spec);
    d.asked_as = name;
    d.closest_relative = stand_in.found == StandIn::Found::kSameModel;
    if (stand_in.found == StandIn::Found::kMigPartition)
      d.partition_note = stand_in.note(name, GpuHardware{});
    out.push_back(std::move(d));
  }
  return out;
}

void print_device_list(std::ostream& out, const std::vector<DeviceListing>& devices) {
  out << fmt::format("{:<20} {:<12} {:>4} {:>4} {:>7} {:^31}\n", "", "", "", "", "memory",
                     "peak TFLOP/s, dense");
  out << fmt::format("{:<20} {:<12} {:>4} {:>4} {:>7} {:>7} {:>7} {:>7} {:>7}  {}\n", "GPU", "arch",
                     "cc", "SMs", "GB/s", "FP32", "TF32", "BF16", "FP8", "profile");
  for (const DeviceListing& d : devices) {
    const DeviceSpec& s = *d.spec;
    if (!d.partition_note.empty()) {
      out << d.partition_note << "\n";
    } else if (!d.asked_as.empty()) {
      out << fmt::format("'{}': {}\n", d.asked_as,
                         d.closest_relative
                             ? "not in the catalogue; priced as its closest relative, " + s.name
                             : s.name);
    }
    const std::string profile = !d.calibrated.empty() ? d.calibrated
                                : !d.borrowed_from.empty()
                                    ? "none: spec-scaled from " + d.borrowed_from
                                    : "none: roofline only";
    out << fmt::format("{:<20} {:<12} {:>4} {:>4} {:>7.0f} {:>7} {:>7} {:>7} {:>7}  {}\n", s.name,
                       s.arch, fmt::format("{}.{}", s.cc_major, s.cc_minor), s.sm_count,
                       s.mem_bw_gbps, tflops(s.fp32_tflops), tflops(s.tf32_tflops),
                       tflops(s.bf16_tflops), tflops(s.fp8_tflops), profile);
    if (!s.aliases.empty()) {
      std::string names;
      for (const auto& a : s.aliases) names += (names.empty() ? "" : ", ") + a;
      out << fmt::format("{:<20} also: {}\n", "", names);
    }
    if (s.mig_compute_slices > 0) {
      out << fmt::format("{:<20} MIG: {} compute slices; a partition: '{} MIG <g>g.<GB>gb'\n", "",
                         s.mig_compute_slices, s.name);
    }
  }
}

}  // namespace pm2lat::reports
