// The catalogue of GPUs a user may name: specs for calibrated and uncalibrated GPUs alike,
// with forgiving name resolution.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pm2lat/device_spec.h"
#include "pm2lat/profile_error.h"

namespace pm2lat {

struct MigDeviceName;  // mig_partition.h

class UnknownDeviceError : public std::runtime_error {
 public:
  // `why`, when given, says why the name has no entry (a laptop part).
  UnknownDeviceError(std::string name, std::vector<std::string> close_matches,
                     std::string_view why = {});
  const std::string& name() const noexcept { return name_; }
  const std::vector<std::string>& close_matches() const noexcept { return close_; }

 private:
  std::string name_;
  std::vector<std::string> close_;
};

// Lower-cases and drops everything but letters and digits ("NVIDIA H100 80GB HBM3" ->
// "nvidiah10080gbhbm3"): the key every spelling of a name is compared by.
std::string device_name_key(std::string_view name);

// The model a GPU name states, vendor words dropped: the letter-only words before the first
// word with a digit, and that word ("NVIDIA GeForce RTX 4090 D" -> "rtx4090", "Tesla
// V100-SXM2-32GB" -> "v100", "NVIDIA L40S" -> "l40s"); "" when no word has a digit.
std::string device_model_key(std::string_view name);

// What the hardware reports of a GPU besides its name (a trace's device properties, the
// driver's attributes); 0 = not reported.
struct GpuHardware {
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  bool operator==(const GpuHardware&) const = default;
};

// The catalogue GPU a run's GPU is predicted and scored as, and how it was found.
struct StandIn {
  enum class Found {
    kNamed,             // the name is the catalogue's own (or an alias)
    kSameModel,         // closest_relative(): a variant of a model the catalogue lists
    kSameArchitecture,  // closest_by_hardware(): a model it does not list
    kMigPartition,      // a MIG partition of a GPU it lists (mig_partition.h)
    kNone,              // nothing stands in: no accuracy on the run's own GPU
  };
  const DeviceSpec* spec = nullptr;
  Found found = Found::kNone;
  // One line saying what stands in for `name` and why; "" when the name is the catalogue's.
  std::string note(std::string_view name, GpuHardware hw) const;
};

class DeviceCatalogue {
 public:
  DeviceCatalogue();
  explicit DeviceCatalogue(std::vector<DeviceSpec> specs);
  DeviceCatalogue(const DeviceCatalogue& other);
  DeviceCatalogue& operator=(const DeviceCatalogue& other);
  DeviceCatalogue(DeviceCatalogue&&) noexcept;
  DeviceCatalogue& operator=(DeviceCatalogue&&) noexcept;
  ~DeviceCatalogue();

  // Reads a catalogue JSON file ({"schema": "pm2lat.devices", "version": 1, "devices": [...]}).
  // Throws ProfileError naming the file and field on malformed input.
  static DeviceCatalogue load(const std::filesystem::path& file);

  // The spec for a forgiving name, or nullopt. Matches canonical names and aliases by
  // device_name_key, then unique prefixes ("H100" -> "H100-SXM", the catalogue's default
  // variant of a family comes first).
  const DeviceSpec* find(std::string_view name) const noexcept;
  // Like find() but throws UnknownDeviceError with the closest names (none for a laptop part,
  // whose error says why its desktop namesake is not it). A MIG partition of a GPU find()
  // knows ("H100 MIG 3g.40gb") resolves to its share of it, as stand_in() derives one.
  const DeviceSpec& resolve(std::string_view name) const;
  // For a name find() does not know (a new memory size, a regional variant, a profiler's own
  // spelling): the first catalogue GPU of the same model ("NVIDIA H100 80GB HBM2e" -> H100-SXM,
  // "RTX PRO 6000 Blackwell Max-Q" -> RTX-PRO-6000-Server), else one whose model differs only by
  // a suffix letter ("A100X" -> A100); nullptr when no model matches, and for a laptop part
  // ("... Laptop GPU": another chip under the desktop model's number).
  const DeviceSpec* closest_relative(std::string_view name) const noexcept;
  // For a GPU whose name matches no model here ("NVIDIA GeForce RTX 4080 Laptop GPU"), from what
  // its driver or a trace reports of it: the catalogue GPU of the same compute capability
  // (same architecture, same SM design) whose SM count is nearest by ratio, the catalogue's
  // first on a tie; nullptr when none has that compute capability or the figures are unknown.
  const DeviceSpec* closest_by_hardware(GpuHardware hw) const noexcept;
  // The GPU a run on `name` is predicted and scored as: find(), else closest_relative(), else
  // closest_by_hardware() — the one rule the replay, the bounds check and the runtime follow.
  // A MIG partition's name ("NVIDIA A100-SXM4-40GB MIG 1g.5gb") stands for its share of the
  // whole GPU (found as above): a spec the catalogue derives once per name and SM count and
  // keeps for its lifetime, as it keeps its own (a copy of the catalogue derives its own).
  StandIn stand_in(std::string_view name, GpuHardware hardware) const noexcept;

  const std::vector<DeviceSpec>& devices() const noexcept { return specs_; }
  void add(DeviceSpec spec);

 private:
  // The entry that stands for `name` (not a MIG partition's name), and how it was found.
  StandIn whole_gpu(std::string_view name, GpuHardware hardware) const noexcept;
  // The partition `mig` names of `whole`, derived on first use.
  const DeviceSpec& partition(const DeviceSpec& whole, const MigDeviceName& mig,
                              int reported_sm_count) const;

  std::vector<DeviceSpec> specs_;
  // The MIG partitions stood in for so far: derived on first use, never moved (targets and
  // predictions keep pointers to them). Entries added after one is derived would move the
  // entries partitions point at: add() is for building a catalogue, before any use.
  struct Partitions;
  std::shared_ptr<Partitions> partitions_;
};

}  // namespace pm2lat
