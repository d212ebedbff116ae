#include "pm2lat/mig_partition.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "pm2lat/text.h"

namespace pm2lat {
namespace {

// A whole number at the front of `s` (consumed); nullopt when none, or zero.
std::optional<int> take_count(std::string_view& s) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || v <= 0) return std::nullopt;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  return v;
}

// `s` starts with `word` (ASCII, any case): consumed.
bool take(std::string_view& s, std::string_view word) {
  if (s.size() < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (ascii_lower(s[i]) != word[i]) return false;
  }
  s.remove_prefix(word.size());
  return true;
}

// A profile: [<c>c.]<g>g.<m>gb[+me], and nothing after it.
std::optional<MigProfile> parse_profile(std::string_view s) {
  MigProfile p;
  const std::optional<int> first = take_count(s);
  if (!first) return std::nullopt;
  if (take(s, "c.")) {
    p.compute_slices = *first;
    const std::optional<int> g = take_count(s);
    if (!g || !take(s, "g.")) return std::nullopt;
    p.gpu_slices = *g;
  } else {
    if (!take(s, "g.")) return std::nullopt;
    p.gpu_slices = *first;
    p.compute_slices = *first;
  }
  const std::optional<int> gb = take_count(s);
  if (!gb || !take(s, "gb")) return std::nullopt;
  p.memory_gb = *gb;
  take(s, "+me");  // media extensions: decoders, not compute
  if (!s.empty() || p.compute_slices > p.gpu_slices) return std::nullopt;
  return p;
}

}  // namespace

std::optional<MigDeviceName> parse_mig_device_name(std::string_view name) {
  // "<gpu> MIG <profile>", split at the last " MIG " of the name.
  for (std::size_t at = name.size(); at-- > 0;) {
    std::string_view rest = name.substr(at);
    if (!take(rest, " mig ")) continue;
    const std::optional<MigProfile> profile = parse_profile(rest);
    std::string_view gpu = name.substr(0, at);
    while (!gpu.empty() && gpu.back() == ' ') gpu.remove_suffix(1);
    if (!profile || gpu.empty()) return std::nullopt;
    return MigDeviceName{gpu, rest, *profile};
  }
  return std::nullopt;
}

bool mig_profile_fits(const DeviceSpec& whole, const MigProfile& profile) noexcept {
  return profile.gpu_slices <= whole.mig_compute_slices;
}

std::string mig_partition_name(const DeviceSpec& whole, std::string_view profile_name) {
  return whole.name + " MIG " + ascii_lower(profile_name);
}

DeviceSpec mig_partition_spec(const DeviceSpec& whole, const MigProfile& profile,
                              std::string_view name, int reported_sm_count) {
  DeviceSpec p = whole;
  p.name = std::string(name);
  p.aliases.clear();
  const int slices = std::max(1, whole.mig_compute_slices);
  // Without a reported count, an estimate: the whole GPU's SMs shared out in whole slices (an
  // A100's 108 make 15 a slice, where its 7g profile has 98, 14 a slice: 7 % high). A reported
  // count is the partition's own (never more than the whole GPU's).
  const int per_slice = std::max(1, whole.sm_count / slices);
  p.sm_count = reported_sm_count > 0 ? reported_sm_count
                                     : per_slice * std::min(profile.compute_slices, slices);
  if (whole.sm_count > 0) p.sm_count = std::min(p.sm_count, whole.sm_count);
  const double compute =
      whole.sm_count > 0 ? static_cast<double>(p.sm_count) / whole.sm_count : 1.0;
  for (double* rate : {&p.fp32_tflops, &p.fp64_tflops, &p.tf32_tflops, &p.fp16_tflops,
                       &p.bf16_tflops, &p.fp8_tflops, &p.fp4_tflops, &p.int8_tops})
    *rate *= compute;
  const double memory =
      whole.mem_gb > 0 ? std::clamp(profile.memory_gb / whole.mem_gb, 0.0, 1.0) : 1.0;
  p.mem_bw_gbps *= memory;
  p.l2_mb *= memory;
  p.mem_gb = whole.mem_gb > 0 ? std::min(profile.memory_gb, whole.mem_gb) : profile.memory_gb;
  p.nvlink_gbps = 0;
  p.mig_compute_slices = 0;  // a partition is not partitioned again
  p.partition_of = &whole;
  return p;
}

}  // namespace pm2lat
