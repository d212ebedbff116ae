// What the worker knows about CUDA graphs: the launch recorded at capture for each kernel
// node (its "template": name, geometry, library call), how instantiation cloned nodes, and
// which graph an executable graph came from. Replayed kernels are then described by their
// node's template. Keys are CUPTI node ids in callback mode and CUgraphNode/CUgraph/
// CUgraphExec handles in hook mode; handles are dropped when their graph is destroyed since
// the driver reuses them.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "launch_slot.h"

namespace pm2lat::shim {

// A kernel node as captured: the launch and the library call context it had.
struct GraphTemplate {
  LaunchSlot slot;
  OpPod op;
  bool has_op = false;
};

class GraphRegistry {
 public:
  static constexpr std::size_t kMaxNodes = std::size_t(1) << 20;

  // A launch recorded into a graph (slot.graph_node / slot.graph set).
  void add_captured(const LaunchSlot& slot, const OpPod* op);
  // Callback mode: instantiation cloned `original` into `clone`.
  void clone(std::uint64_t original, std::uint64_t clone);
  void remove_node(std::uint64_t node);
  const GraphTemplate* node(std::uint64_t node) const;

  // Hook mode.
  void instantiate(std::uint64_t graph, std::uint64_t exec);
  void destroy_exec(std::uint64_t exec);
  void destroy_graph(std::uint64_t graph);
  // Kernel templates of an executable graph, in capture order (null when unknown). Copied at
  // instantiation, so destroying the graph afterwards (a common pattern) loses nothing.
  const std::vector<GraphTemplate>* kernels_of_exec(std::uint64_t exec) const;

  std::size_t size() const noexcept { return nodes_.size(); }
  std::uint64_t refused() const noexcept { return refused_; }

 private:
  std::unordered_map<std::uint64_t, GraphTemplate> nodes_;
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> graph_nodes_;
  std::unordered_map<std::uint64_t, std::vector<GraphTemplate>> exec_kernels_;
  std::uint64_t refused_ = 0;
};

}  // namespace pm2lat::shim
