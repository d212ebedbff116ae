#include "collect/graph_registry.h"

#include <gtest/gtest.h>

namespace pm2lat::shim {
namespace {

LaunchSlot captured(std::uint64_t graph, std::uint64_t node, std::uint32_t name) {
  LaunchSlot s;
  s.kind = SlotKind::kKernel;
  s.graph = graph;
  s.graph_node = node;
  s.name_id = name;
  return s;
}

TEST(GraphRegistry, CallbackModeClonesNodesAtInstantiation) {
  GraphRegistry g;
  OpPod op;
  op.call_id = 3;
  g.add_captured(captured(1, 11, 100), &op);
  g.clone(11, 21);
  ASSERT_NE(g.node(21), nullptr);
  EXPECT_EQ(g.node(21)->slot.name_id, 100u);
  EXPECT_EQ(g.node(21)->slot.graph_node, 21u);
  EXPECT_TRUE(g.node(21)->has_op);
  EXPECT_EQ(g.node(21)->op.call_id, 3u);
  g.clone(12, 22);  // an unknown original: nothing to clone
  EXPECT_EQ(g.node(22), nullptr);
}

TEST(GraphRegistry, DestroyedNodesAreForgottenOnlyAfterTheGracePeriod) {
  GraphRegistry g;
  g.add_captured(captured(1, 11, 100), nullptr);
  g.remove_node(11, 1000);
  g.sweep(1500, 1000);
  EXPECT_NE(g.node(11), nullptr);  // its replays' records may still be coming
  g.sweep(2500, 1000);
  EXPECT_EQ(g.node(11), nullptr);
}

TEST(GraphRegistry, HookModeExecutablesKeepTheirKernelsAfterTheGraphIsDestroyed) {
  GraphRegistry g;
  g.add_captured(captured(0xA, 0x1, 100), nullptr);
  g.add_captured(captured(0xA, 0x2, 200), nullptr);
  g.instantiate(0xA, 0xE);
  g.destroy_graph(0xA);
  const auto* kernels = g.kernels_of_exec(0xE);
  ASSERT_NE(kernels, nullptr);
  ASSERT_EQ(kernels->size(), 2u);
  EXPECT_EQ((*kernels)[0].slot.name_id, 100u);
  EXPECT_EQ((*kernels)[1].slot.name_id, 200u);
}

TEST(GraphRegistry, AReusedExecutableHandleIsNotForgottenByItsPredecessorsDestroy) {
  GraphRegistry g;
  g.add_captured(captured(0xA, 0x1, 100), nullptr);
  g.instantiate(0xA, 0xE);
  g.destroy_exec(0xE, 1000);
  g.add_captured(captured(0xB, 0x3, 300), nullptr);
  g.instantiate(0xB, 0xE);  // the driver handed out the same handle again
  g.sweep(5000, 1000);
  const auto* kernels = g.kernels_of_exec(0xE);
  ASSERT_NE(kernels, nullptr);
  ASSERT_EQ(kernels->size(), 1u);
  EXPECT_EQ((*kernels)[0].slot.name_id, 300u);
}

}  // namespace
}  // namespace pm2lat::shim
