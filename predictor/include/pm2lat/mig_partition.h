// A MIG partition of a GPU (Multi-Instance GPU, A100 and later): a process on one sees a device
// named after the whole GPU and the partition's profile ("NVIDIA A100-SXM4-40GB MIG 1g.5gb",
// "... MIG 1c.3g.20gb"), with the partition's share of the SMs, and of the memory bandwidth
// and L2 (its memory slices). Priced as the whole GPU, its kernels would be forecast up to 7x
// too fast, and every measurement on it judged against that.
//
// NVIDIA Multi-Instance GPU User Guide, "MIG Device Names" and "Supported MIG Profiles": a
// profile [<c>c.]<g>g.<m>gb[+me] names the compute slices of its compute instance (c, when it
// is smaller than its GPU instance), the GPU instance's compute slices (g) and its memory
// (m GB); the memory and the L2 come in the same fraction (A100-SXM4-40GB 1g.5gb: 1/8 of
// both, 3g.20gb: 4/8), the SMs in the compute slices' (1/7, 3/7; 1/4 and 2/4 on the A30).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pm2lat/device_spec.h"

namespace pm2lat {

struct MigProfile {
  int compute_slices = 0;  // the compute instance's (its GPU instance's when not named)
  int gpu_slices = 0;      // the GPU instance's
  double memory_gb = 0;    // the GPU instance's memory as named
};

struct MigDeviceName {
  std::string_view gpu;           // the whole GPU's name, as the device name spells it
  std::string_view profile_name;  // "1g.5gb", "1c.3g.20gb+me", as spelt
  MigProfile profile;
};

// The whole GPU and the profile a MIG device name states; nullopt for any other name.
std::optional<MigDeviceName> parse_mig_device_name(std::string_view name);

// Whether `whole` has MIG partitions of `profile`'s size (DeviceSpec::mig_compute_slices).
bool mig_profile_fits(const DeviceSpec& whole, const MigProfile& profile) noexcept;

// The catalogue's name for a partition of `whole`: "A100-SXM4-40GB MIG 1g.5gb" (the profile
// lower-cased, as NVIDIA writes it).
std::string mig_partition_name(const DeviceSpec& whole, std::string_view profile_name);

// The partition `profile` of `whole` (a GPU with MIG: DeviceSpec::mig_compute_slices), named
// `name`: the SMs its driver reports (a trace's or the runtime's device properties) or, when
// none are reported, the whole GPU's SMs per compute slice times its slices; throughput in the SMs'
// share, memory bandwidth and L2 in the memory's share (at most all of it); no NVLink (a MIG
// partition has no peer access).
DeviceSpec mig_partition_spec(const DeviceSpec& whole, const MigProfile& profile,
                              std::string_view name, int reported_sm_count);

}  // namespace pm2lat
