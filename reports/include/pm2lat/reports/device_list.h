// The GPUs a target may name (`pm2lat devices`): the catalogue's specs and, per GPU, where
// its predictions would come from (its own profiles, or the GPU it borrows them from).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "pm2lat/device_spec.h"
#include "pm2lat/predictor.h"

namespace pm2lat::reports {

struct DeviceListing {
  const DeviceSpec* spec = nullptr;
  // What the GPU's own profiles calibrate ("gemm fp32, bf16; operators; attention; conv;
  // kernel families"); empty when it has none.
  std::string calibrated;
  // The GPU whose profiles stand in when it has none of its own (spec-scaled); empty when it
  // has its own or no GPU is calibrated at all.
  std::string borrowed_from;
  // The name it was asked for (`pm2lat devices NAME`), and whether that name is not the GPU's
  // own but a variant the catalogue does not list, priced as its closest relative.
  std::string asked_as;
  bool closest_relative = false;
  // What the asked name stands for when it is not a catalogue GPU's own: a MIG partition's
  // share of its GPU (DeviceCatalogue::stand_in's note); empty otherwise.
  std::string partition_note;
};

// Every catalogue GPU, in catalogue order. Adds each as a target of `predictor`.
std::vector<DeviceListing> list_devices(Predictor& predictor);

// The GPUs `names` resolve to, in the order asked: a catalogue name or alias, else the closest
// relative of a variant the catalogue does not list (a new memory size, a profiler's own
// spelling). Throws UnknownDeviceError, with the closest names, for a name with neither.
std::vector<DeviceListing> list_named_devices(Predictor& predictor,
                                              const std::vector<std::string>& names);

// One line per GPU (preceded by the name asked for, when one was): name, architecture, compute
// capability, SMs, memory bandwidth, peak FP32 / TF32 / BF16 / FP8 throughput, profile, other
// names.
void print_device_list(std::ostream& out, const std::vector<DeviceListing>& devices);

}  // namespace pm2lat::reports
