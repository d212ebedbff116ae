#include <gtest/gtest.h>

#include "pm2lat/reports/input_file.h"
#include "pm2lat/reports/replay/kineto_trace.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

std::string message_of(const std::string& json) {
  try {
    parse_kineto_trace(json, "t.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(KinetoTrace, ReadsKernelsLaunchesOperatorsAndDevice) {
  const std::string json =
      test::TraceJson("NVIDIA A100-SXM4-80GB")
          .op("aten::addmm", 10, 50, "[[512],[141,512],[512,512],[],[]]",
              R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"])",
              R"(["","","","1","1"])", "[[1],[512,1],[1,512],[],[]]")
          .kernel("ampere_bf16_s16816gemm_bf16_64x64_sliced1x2_ldg8_f2f_tn", 20, 100, 5.5,
                  {40, 2, 1}, {128, 1, 1}, 7)
          .str();
  const KinetoTrace t = parse_kineto_trace(json, "t.json");
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(t.devices[0].sm_count, 132);
  ASSERT_EQ(t.kernels.size(), 1u);
  const TraceKernel& k = t.kernels[0];
  EXPECT_EQ(t.strings[k.name], "ampere_bf16_s16816gemm_bf16_64x64_sliced1x2_ldg8_f2f_tn");
  EXPECT_EQ(k.grid, (Dim3{40, 2, 1}));
  EXPECT_DOUBLE_EQ(k.dur_us, 5.5);
  EXPECT_EQ(k.stream, 7);
  ASSERT_EQ(t.launches.count(k.correlation), 1u);
  ASSERT_EQ(t.ops.size(), 1u);
  const TraceOp& op = t.ops[0];
  ASSERT_EQ(op.inputs.size(), 5u);
  EXPECT_EQ(op.inputs[1].shapes, (std::vector<std::vector<std::int64_t>>{{141, 512}}));
  EXPECT_EQ(op.inputs[2].strides, (std::vector<std::int64_t>{1, 512}));
  EXPECT_EQ(op.inputs[3].shapes.size(), 0u) << "a Scalar is not a tensor";
  EXPECT_EQ(op.inputs[4].concrete, "1");
}

TEST(KinetoTrace, AcceptsLegacyCategoriesAndABareEventArray) {
  const std::string json = R"([
    {"ph":"X","cat":"Operator","name":"aten::relu","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2,"dur":1,"args":{"correlation id":5}},
    {"ph":"X","cat":"Kernel","name":"relu_kernel","pid":0,"tid":7,"ts":20,"dur":3,"args":{"correlation id":5,"stream":7}}
  ])";
  const KinetoTrace t = parse_kineto_trace(json, "legacy.json");
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].correlation, 5);
  EXPECT_EQ(t.ops.size(), 1u);
  EXPECT_EQ(t.launches.size(), 1u);
}

TEST(KinetoTrace, KernelsWithoutAStartOrADurationAreCountedNotReplayed) {
  const std::string json = R"([
    {"ph":"X","cat":"kernel","name":"kept","pid":0,"tid":7,"ts":20,"dur":3},
    {"ph":"X","cat":"kernel","name":"negative","pid":0,"tid":7,"ts":30,"dur":-1},
    {"ph":"X","cat":"kernel","name":"no_duration","pid":0,"tid":7,"ts":40},
    {"ph":"X","cat":"kernel","name":"text_duration","pid":0,"tid":7,"ts":50,"dur":"long"},
    {"ph":"X","cat":"kernel","name":"quoted_duration","pid":0,"tid":7,"ts":60,"dur":"5"},
    {"ph":"X","cat":"kernel","name":"no_start","pid":0,"tid":7,"dur":2},
    {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":0}
  ])";
  const KinetoTrace t = parse_kineto_trace(json, "t.json");
  ASSERT_EQ(t.kernels.size(), 2u) << "a quoted number is a number";
  EXPECT_EQ(t.strings[t.kernels[0].name], "kept");
  EXPECT_EQ(t.skipped_kernels, 4u);
  EXPECT_EQ(t.ops.size(), 1u) << "an operator without a duration still gives its shapes";

  const std::string none_usable = R"([
    {"ph":"X","cat":"kernel","name":"negative","pid":0,"tid":7,"ts":30,"dur":-1}
  ])";
  EXPECT_NE(message_of(none_usable).find("none of the trace's 1 GPU kernel events has a start"),
            std::string::npos)
      << message_of(none_usable);
}

TEST(KinetoTrace, EmptyTensorListsAreNotTensors) {
  const std::string json =
      test::TraceJson()
          .op("aten::_foreach_add_", 0, 10, "[[],[]]", R"(["TensorList","TensorList"])")
          .op("aten::zeros", 20, 10, "[[]]", R"(["float"])")
          .kernel("k", 1, 30, 1)
          .str();
  const KinetoTrace t = parse_kineto_trace(json, "t.json");
  EXPECT_TRUE(t.ops[0].inputs[0].shapes.empty());
  ASSERT_EQ(t.ops[1].inputs[0].shapes.size(), 1u) << "[] of an element type is a 0-dim tensor";
  EXPECT_TRUE(t.ops[1].inputs[0].shapes[0].empty());
}

TEST(KinetoTrace, TruncatedAndGarbledTextGiveOneClearError) {
  const std::string json = test::TraceJson().kernel("k", 1, 2, 3).str();
  EXPECT_NE(message_of(json.substr(0, json.size() / 2)).find("ends early"), std::string::npos);
  EXPECT_NE(message_of("{\"traceEvents\": [ {\"ph\": X } ]}").find("invalid JSON at byte"),
            std::string::npos);
  EXPECT_NE(message_of("{\"schemaVersion\": 1}").find("no \"traceEvents\""), std::string::npos);
  EXPECT_NE(message_of("{\"traceEvents\": []}").find("no GPU kernel events"), std::string::npos);
  EXPECT_NE(message_of("").find("t.json"), std::string::npos);
}

TEST(KinetoTrace, FieldsOfTheWrongTypeAreToleratedNotTrusted) {
  const std::string json = R"({"traceEvents":[
    {"ph":"X","cat":"kernel","name":"k1","ts":"abc","dur":1,"args":{}},
    {"ph":"X","cat":"kernel","name":"k2","ts":5,"dur":-3,"args":{}},
    {"ph":"X","cat":"kernel","name":7,"ts":5,"dur":2,"args":{"grid":"big","block":[0,-1],"stream":{},"correlation":[1]}},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","ts":0,"dur":9,"args":{"Input Dims":"x","Input type":[1,2]}}
  ]})";
  const KinetoTrace t = parse_kineto_trace(json, "odd.json");
  ASSERT_EQ(t.kernels.size(), 1u) << "events without a usable time are dropped";
  EXPECT_EQ(t.skipped_kernels, 2u) << "and counted";
  EXPECT_EQ(t.kernels[0].grid, (Dim3{1, 1, 1}));
  EXPECT_EQ(t.kernels[0].block, (Dim3{1, 1, 1}));
  EXPECT_EQ(t.kernels[0].correlation, -1);
}

TEST(KinetoTrace, ReadsGzipFilesAndRankInfo) {
  const auto dir = test::scratch_dir("kineto");
  std::string json = test::TraceJson().kernel("k", 1, 2, 3).str();
  json.insert(1, R"("distributedInfo":{"rank":3,"world_size":8},)");
  test::write_gzip(dir / "r.json.gz", json);
  const KinetoTrace t = read_kineto_trace(dir / "r.json.gz");
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.world_size, 8);
  EXPECT_EQ(t.source, "r.json.gz");
}

}  // namespace
}  // namespace pm2lat::reports
