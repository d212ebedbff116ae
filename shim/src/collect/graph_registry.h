// What the worker knows about CUDA graphs: the launch recorded at capture for each kernel
// node (its "template": name, geometry, library call), how instantiation cloned nodes, and
// which graph an executable graph came from. Replayed kernels are then described by their
// node's template. Keys are CUPTI node ids in callback mode and CUgraphNode/CUgraph/
// CUgraphExec handles in hook mode; handles are dropped when their graph is destroyed since
// the driver reuses them.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "launch_path/launch_slot.h"

namespace pm2lat::shim {

// Destroyed nodes and executables are forgotten only after `keep_ns`: the destruction is
// seen in launch order, the CUPTI records of the graph's last replays arrive later.
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
  void remove_node(std::uint64_t node, std::uint64_t now_ns);
  const GraphTemplate* node(std::uint64_t node) const;

  // Hook mode.
  void instantiate(std::uint64_t graph, std::uint64_t exec);
  void destroy_exec(std::uint64_t exec, std::uint64_t now_ns);
  void destroy_graph(std::uint64_t graph);
  // Kernel templates of an executable graph, in capture order (null when unknown). Copied at
  // instantiation, so destroying the graph afterwards (a common pattern) loses nothing.
  const std::vector<GraphTemplate>* kernels_of_exec(std::uint64_t exec) const;

  // Forgets what was destroyed more than `keep_ns` before `now_ns`.
  void sweep(std::uint64_t now_ns, std::uint64_t keep_ns);

  std::size_t size() const noexcept { return nodes_.size(); }
  std::uint64_t refused() const noexcept { return refused_; }

 private:
  std::unordered_map<std::uint64_t, GraphTemplate> nodes_;
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> graph_nodes_;
  struct Exec {
    std::uint64_t generation = 0;  // handles are reused: only this instantiation's destroy counts
    std::vector<GraphTemplate> kernels;
  };
  struct Retired {
    std::uint64_t when_ns;
    bool exec;
    std::uint64_t key;
    std::uint64_t generation;
  };
  std::unordered_map<std::uint64_t, Exec> exec_kernels_;
  std::deque<Retired> retired_;
  std::uint64_t generations_ = 0;
  std::uint64_t refused_ = 0;
};

}  // namespace pm2lat::shim
