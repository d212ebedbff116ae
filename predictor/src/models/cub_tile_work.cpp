#include "cub_tile_work.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "classify/name_parts.h"
#include "pm2lat/dtype.h"

namespace pm2lat {
namespace {

constexpr std::string_view kOnesweep = "DeviceRadixSortOnesweepKernel";
constexpr std::string_view kScan = "DeviceScanKernel";
// More items per thread than any CUB policy states (its tunings run 1-39): a name that says
// more is not read, and the scaling below cannot overflow.
constexpr int kMostItemsPerThread = 1024;

// Bytes of a type as a demangled CUB instantiation spells it: 0 for cub::NullType (a sort of
// keys only), -1 for a type this does not know.
double type_bytes(std::string_view t) {
  if (t.find("NullType") != std::string_view::npos) return 0;
  const DType d = parse_dtype(t);
  return d == DType::kUnknown ? -1 : dtype_bytes(d);
}

// CUB's scaling of a policy's nominal 4-byte items per thread to the type it processes
// (cub/util_type.cuh, RegBoundScaling / MemBoundScaling). The threads per block, which the
// same scaling may lower, are the launch's.
double reg_bound_items(int items, int type_size) {
  return std::max(1, items * 4 / std::max(4, type_size));
}
double mem_bound_items(int items, int type_size) {
  return std::clamp(items * 4 / std::max(1, type_size), 1, items * 2);
}

// One tile per block, read once and written once.
VectorShape tiles(double blocks, double threads, double items, double bytes_per_item) {
  VectorShape v;
  const double per_block = threads * items;
  v.rows = static_cast<std::int64_t>(blocks);
  v.cols = static_cast<std::int64_t>(per_block);
  v.bytes_read = blocks * per_block * bytes_per_item;
  v.bytes_written = v.bytes_read;
  return v;
}

// DeviceRadixSortPolicy<KeyT, ValueT, OffsetT>::Policy800's onesweep tile
// (cub/device/dispatch/dispatch_radix_sort.cuh): 384 threads x 21 nominal 4-byte items, 17 for
// 4-byte keys with values and 64-bit offsets, scaled by the larger of key and value
// (DominantT). Later policies (sm_90, sm_100) are tuned per key, value and offset size and per
// CCCL release: their tile is not read from the name.
std::optional<VectorShape> onesweep(std::string_view name, double blocks, double threads) {
  const std::size_t at = name.find("DeviceRadixSortPolicy<");
  if (at == std::string_view::npos) return std::nullopt;
  const std::vector<std::string_view> args = template_args(name.substr(at));
  if (args.size() < 3) return std::nullopt;
  const double key = type_bytes(args[0]), value = type_bytes(args[1]), offset = type_bytes(args[2]);
  if (!(key > 0) || value < 0 || !(offset > 0)) return std::nullopt;
  if (name.substr(at).find(">::Policy800") == std::string_view::npos) return std::nullopt;
  const int nominal = offset == 8 && key == 4 && value > 0 ? 17 : 21;
  return tiles(blocks, threads, reg_bound_items(nominal, static_cast<int>(std::max(key, value))),
               key + value);
}

// AgentScanPolicy<threads, items, T, load, modifier, store, scan, Scaling<threads, items, T>>;
// the output taken as T wide (the accumulator type; PyTorch's scans write their input's).
std::optional<VectorShape> scan(std::string_view name, double blocks, double threads) {
  const std::size_t at = name.find("AgentScanPolicy<");
  if (at == std::string_view::npos) return std::nullopt;
  const std::vector<std::string_view> args = template_args(name.substr(at));
  if (args.size() < 3) return std::nullopt;
  const auto items = parse_int(args[1]);
  const double t = type_bytes(args[2]);
  if (!items || *items <= 0 || *items > kMostItemsPerThread || !(t > 0)) return std::nullopt;
  const bool reg = args.back().find("RegBoundScaling") != std::string_view::npos;
  const int size = static_cast<int>(t);
  return tiles(blocks, threads, reg ? reg_bound_items(*items, size) : mem_bound_items(*items, size),
               t);
}

}  // namespace

bool names_cub_tile_work(std::string_view name) noexcept {
  return name.find(kOnesweep) != std::string_view::npos ||
         name.find(kScan) != std::string_view::npos;
}

std::optional<VectorShape> cub_tile_work(std::string_view name, const Dim3& grid,
                                         const Dim3& block) {
  const double blocks = static_cast<double>(grid.volume());
  const double threads = static_cast<double>(block.volume());
  if (!(blocks > 0) || !(threads > 0)) return std::nullopt;
  if (name.find(kOnesweep) != std::string_view::npos) return onesweep(name, blocks, threads);
  if (name.find(kScan) != std::string_view::npos) return scan(name, blocks, threads);
  return std::nullopt;
}

}  // namespace pm2lat
