// NCCL collectives (and vLLM's custom all-reduce): what the kernel name says (collective,
// algorithm, protocol, element type) and a link model of their time. Communication is not a
// compute model: predictions are flagged `communication` and kept out of compute accuracy.
//
//   time = base latency(algorithm, protocol) + steps * hop latency(link)
//        + wire bytes / (link bandwidth * protocol efficiency)
//
// wire bytes per rank: all-reduce 2(n-1)/n * payload (ring), all-gather and reduce-scatter
// (n-1)/n * payload, broadcast, reduce and send/receive the payload. Latencies and protocol
// efficiencies follow NCCL's own tuning model (src/graph/tuning.cc); link bandwidth is the
// device catalogue's NVLink (or PCIe) bandwidth per direction.
#pragma once

#include <cstdint>
#include <string_view>

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/op_context.h"
#include "pm2lat/prediction.h"

namespace pm2lat {

enum class Collective : std::uint8_t {
  kUnknown = 0,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kSendRecv,
  kAllToAll
};
enum class CollectiveAlgorithm : std::uint8_t { kUnknown = 0, kRing, kTree, kCollNet, kNvls, kPat };
enum class CollectiveProtocol : std::uint8_t { kUnknown = 0, kLL, kLL128, kSimple };

struct CollectiveKernel {
  Collective collective = Collective::kUnknown;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kUnknown;
  CollectiveProtocol protocol = CollectiveProtocol::kUnknown;
  bool custom_all_reduce = false;  // vLLM cross_device_reduce: one-shot over peer memory
};

std::string_view to_string(Collective c) noexcept;
std::string_view to_string(CollectiveAlgorithm a) noexcept;
std::string_view to_string(CollectiveProtocol p) noexcept;

// "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "ncclKernel_AllReduce_RING_LL_Sum_float",
// "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "cross_device_reduce_1stage<...>".
CollectiveKernel decode_collective_kernel(std::string_view name) noexcept;

// Ranks assumed when the record does not say (one 8-GPU node).
inline constexpr std::int32_t kDefaultCollectiveRanks = 8;

// Device time of one collective kernel moving `shape.bytes` per rank among `shape.ranks`.
double collective_kernel_us(const CollectiveKernel& kernel, const CollectiveShape& shape,
                            const DeviceSpec& spec) noexcept;

// The prediction for a collective kernel record: always flagged communication (kept out of
// compute accuracy), and no_shape when the record does not say how many bytes move.
Prediction collective_prediction(const KernelRecord& record, const DeviceSpec& spec) noexcept;

}  // namespace pm2lat
