// Work of a CUB device-wide kernel whose name states its tuning policy: each block processes
// one tile of (threads x items per thread) elements, so the launch's blocks give the elements
// the pass covers. Read when no recorded shape gives them (a sort inside an autograd node or a
// custom operator; a trace recorded without shapes).
#pragma once

#include <optional>
#include <string_view>

#include "pm2lat/kernel_launch.h"
#include "pm2lat/op_context.h"

namespace pm2lat {

// `name` demangled. The bytes a pass moves, as VectorShape (rows: blocks, cols: elements per
// tile); nullopt for any other kernel or a policy this does not know.
//  - DeviceRadixSortOnesweepKernel<DeviceRadixSortPolicy<Key, Value, Offset>::Policy800>:
//    one digit pass; every key and value is read once and scattered once.
//  - DeviceScanKernel<AgentScanPolicy<threads, items, T, ..., MemBoundScaling|RegBoundScaling
//    <...>>>: every item is read once and its prefix written once.
std::optional<VectorShape> cub_tile_work(std::string_view name, const Dim3& grid,
                                         const Dim3& block);

// Whether `name` (in any spelling: the identifiers appear whole in mangled names too) names a
// kernel cub_tile_work reads.
bool names_cub_tile_work(std::string_view name) noexcept;

}  // namespace pm2lat
