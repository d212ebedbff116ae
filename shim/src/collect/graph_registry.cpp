#include "collect/graph_registry.h"

namespace pm2lat::shim {

void GraphRegistry::add_captured(const LaunchSlot& slot, const OpPod* op) {
  if (slot.graph_node == 0) return;
  if (nodes_.size() >= kMaxNodes && nodes_.count(slot.graph_node) == 0) {
    ++refused_;
    return;
  }
  GraphTemplate t;
  t.slot = slot;
  if (op != nullptr) {
    t.op = *op;
    t.has_op = true;
  }
  nodes_.insert_or_assign(slot.graph_node, t);
  if (slot.graph != 0) graph_nodes_[slot.graph].push_back(slot.graph_node);
}

void GraphRegistry::clone(std::uint64_t original, std::uint64_t clone) {
  auto it = nodes_.find(original);
  if (it == nodes_.end()) return;
  if (nodes_.size() >= kMaxNodes) {
    ++refused_;
    return;
  }
  GraphTemplate copy = it->second;
  copy.slot.graph_node = clone;
  nodes_.insert_or_assign(clone, copy);
}

void GraphRegistry::remove_node(std::uint64_t node, std::uint64_t now_ns) {
  retired_.push_back(Retired{now_ns, false, node, 0});
}

void GraphRegistry::sweep(std::uint64_t now_ns, std::uint64_t keep_ns) {
  while (!retired_.empty() && now_ns - retired_.front().when_ns > keep_ns) {
    const Retired r = retired_.front();
    retired_.pop_front();
    if (!r.exec) {
      nodes_.erase(r.key);
    } else if (auto it = exec_kernels_.find(r.key);
               it != exec_kernels_.end() && it->second.generation == r.generation) {
      exec_kernels_.erase(it);
    }
  }
}

const GraphTemplate* GraphRegistry::node(std::uint64_t node) const {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? nullptr : &it->second;
}

void GraphRegistry::instantiate(std::uint64_t graph, std::uint64_t exec) {
  Exec& e = exec_kernels_[exec];
  e.generation = ++generations_;
  std::vector<GraphTemplate>& kernels = e.kernels;
  kernels.clear();
  auto g = graph_nodes_.find(graph);
  if (g == graph_nodes_.end()) return;
  for (std::uint64_t n : g->second) {
    if (auto it = nodes_.find(n); it != nodes_.end()) kernels.push_back(it->second);
  }
}

void GraphRegistry::destroy_exec(std::uint64_t exec, std::uint64_t now_ns) {
  auto it = exec_kernels_.find(exec);
  if (it != exec_kernels_.end())
    retired_.push_back(Retired{now_ns, true, exec, it->second.generation});
}

// Immediate: instantiation copied what executables need, and the handle may come back for
// the next capture right away.
void GraphRegistry::destroy_graph(std::uint64_t graph) {
  auto it = graph_nodes_.find(graph);
  if (it == graph_nodes_.end()) return;
  for (std::uint64_t n : it->second) nodes_.erase(n);
  graph_nodes_.erase(it);
}

const std::vector<GraphTemplate>* GraphRegistry::kernels_of_exec(std::uint64_t exec) const {
  auto e = exec_kernels_.find(exec);
  return e == exec_kernels_.end() ? nullptr : &e->second.kernels;
}

}  // namespace pm2lat::shim
