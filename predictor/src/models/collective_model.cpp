#include "pm2lat/models/collective_model.h"

#include <algorithm>
#include <array>

#include "classify/name_parts.h"

namespace pm2lat {
namespace {

// NCCL's base latencies (µs) per algorithm x protocol (LL, LL128, Simple) and per-hop
// latencies over NVLink and PCIe, as in its tuning model.
constexpr std::array<std::array<double, 3>, 2> kBaseLatency{
    {{6.6, 14.0, 8.4}, {6.8, 14.0, 8.4}}};  // ring, tree
constexpr std::array<double, 3> kNvlinkHop{0.6, 1.9, 3.4};
constexpr std::array<double, 3> kPcieHop{1.0, 1.9, 5.4};
// Share of the link each protocol delivers as payload: LL sends an 8-byte flag with each
// 8 bytes of data, LL128 one flag per 128-byte line; Simple moves data in large chunks.
constexpr std::array<double, 3> kProtocolEfficiency{0.5, 0.92, 0.96};

std::size_t protocol_index(CollectiveProtocol p) {
  switch (p) {
    case CollectiveProtocol::kLL: return 0;
    case CollectiveProtocol::kLL128: return 1;
    default: return 2;
  }
}

}  // namespace

std::string_view to_string(Collective c) noexcept {
  static constexpr std::array<std::string_view, 8> k{"unknown",        "all_reduce", "all_gather",
                                                     "reduce_scatter", "broadcast",  "reduce",
                                                     "send_recv",      "all_to_all"};
  return k[static_cast<std::size_t>(c) < k.size() ? static_cast<std::size_t>(c) : 0];
}
std::string_view to_string(CollectiveAlgorithm a) noexcept {
  static constexpr std::array<std::string_view, 6> k{"unknown", "ring", "tree",
                                                     "collnet", "nvls", "pat"};
  return k[static_cast<std::size_t>(a) < k.size() ? static_cast<std::size_t>(a) : 0];
}
std::string_view to_string(CollectiveProtocol p) noexcept {
  static constexpr std::array<std::string_view, 4> k{"unknown", "ll", "ll128", "simple"};
  return k[static_cast<std::size_t>(p) < k.size() ? static_cast<std::size_t>(p) : 0];
}

CollectiveKernel decode_collective_kernel(std::string_view n) noexcept {
  CollectiveKernel k;
  if (contains(n, "cross_device_reduce") || contains(n, "custom_all_reduce") ||
      contains(n, "allreduce_fusion")) {
    k.collective = Collective::kAllReduce;
    k.custom_all_reduce = true;
    k.protocol = CollectiveProtocol::kSimple;
    return k;
  }
  if (contains(n, "AllReduce") || contains(n, "all_reduce") || contains(n, "allreduce"))
    k.collective = Collective::kAllReduce;
  else if (contains(n, "AllGather") || contains(n, "all_gather"))
    k.collective = Collective::kAllGather;
  else if (contains(n, "ReduceScatter") || contains(n, "reduce_scatter"))
    k.collective = Collective::kReduceScatter;
  else if (contains(n, "Broadcast"))
    k.collective = Collective::kBroadcast;
  else if (contains(n, "SendRecv") || contains(n, "_Send") || contains(n, "_Recv"))
    k.collective = Collective::kSendRecv;
  else if (contains(n, "AllToAll") || contains(n, "all_to_all"))
    k.collective = Collective::kAllToAll;
  else if (contains(n, "Reduce"))
    k.collective = Collective::kReduce;
  if (contains(n, "_RING"))
    k.algorithm = CollectiveAlgorithm::kRing;
  else if (contains(n, "_TREE"))
    k.algorithm = CollectiveAlgorithm::kTree;
  else if (contains(n, "_COLLNET"))
    k.algorithm = CollectiveAlgorithm::kCollNet;
  else if (contains(n, "_NVLS"))
    k.algorithm = CollectiveAlgorithm::kNvls;
  else if (contains(n, "_PAT"))
    k.algorithm = CollectiveAlgorithm::kPat;
  if (contains(n, "_LL128"))
    k.protocol = CollectiveProtocol::kLL128;
  else if (contains(n, "_LL"))
    k.protocol = CollectiveProtocol::kLL;
  else if (contains(n, "_SIMPLE"))
    k.protocol = CollectiveProtocol::kSimple;
  return k;
}

double collective_kernel_us(const CollectiveKernel& k, const CollectiveShape& s,
                            const DeviceSpec& spec) noexcept {
  const double n = static_cast<double>(s.ranks > 1 ? s.ranks : kDefaultCollectiveRanks);
  const bool nvlink = spec.nvlink_gbps > 0;
  const double link_gbps = nvlink ? spec.nvlink_gbps : std::max(1.0, spec.pcie_gbps);
  const std::size_t p = protocol_index(k.protocol);
  const std::size_t a = k.algorithm == CollectiveAlgorithm::kTree ? 1 : 0;
  const double hop = (nvlink ? kNvlinkHop : kPcieHop)[p];
  double wire = std::max(0.0, s.bytes), steps = n - 1;
  switch (k.collective) {
    case Collective::kAllReduce:
      if (k.custom_all_reduce) {
        wire = s.bytes;  // every rank reads its peers' buffers once
        steps = 1;
      } else {
        wire = 2.0 * (n - 1) / n * s.bytes;
        steps = 2 * (n - 1);
      }
      break;
    case Collective::kAllGather:
    case Collective::kReduceScatter: wire = (n - 1) / n * s.bytes; break;
    case Collective::kAllToAll: wire = (n - 1) / n * s.bytes; break;
    case Collective::kSendRecv: steps = 1; break;
    default: break;
  }
  const double base = k.custom_all_reduce ? 3.0 : kBaseLatency[a][p];
  return base + steps * hop + wire / (link_gbps * 1e3 * kProtocolEfficiency[p]);
}

Prediction collective_prediction(const KernelRecord& r, const DeviceSpec& spec) noexcept {
  Prediction p;
  p.model = ModelKind::kCollective;
  p.basis = TimeBasis::kKernel;
  p.flags = prediction_flags::kCommunication;
  if (r.op.collective.bytes <= 0) p.flags |= prediction_flags::kNoShape;  // latency only
  p.us = collective_kernel_us(decode_collective_kernel(r.launch.name), r.op.collective, spec);
  return p;
}

}  // namespace pm2lat
