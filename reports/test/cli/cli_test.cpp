// The pm2lat command line on good and bad inputs: one clear error line, non-zero exit.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pm2lat/record_jsonl.h"
#include "support/test_support.h"

namespace pm2lat {
namespace {

const std::string kPm2lat = PM2LAT_BINARY;

struct Cli : ::testing::Test {
  std::filesystem::path dir = test::scratch_dir("cli");
  std::filesystem::path profiles = test::scratch_dir("profiles");
  // A synthetic trace of one transformer layer (test_support.h), gzip-compressed.
  std::filesystem::path trace = dir / "layer.json.gz";
  void SetUp() override {
    test::write_catalogue(profiles);
    test::write_gzip(trace, test::transformer_layer_trace());
  }
  test::ProcessResult run(std::vector<std::string> args) const {
    args.insert(args.begin(), kPm2lat);
    args.push_back("--profiles");
    args.push_back(profiles.string());
    return test::run_process(args);
  }
  // Exactly one line on stderr, starting with "error:" and containing `needle`.
  static void expect_one_error(const test::ProcessResult& r, const std::string& needle) {
    EXPECT_FALSE(r.signaled);
    EXPECT_NE(r.code, 0);
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }
};

TEST_F(Cli, ReplayPrintsTheTableAndWritesTheJson) {
  const auto r = run({"replay", trace.string(), "--targets", "A100,L4", "--json",
                      (dir / "r.json").string(), "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("family"), std::string::npos);
  EXPECT_NE(r.out.find("layer.json.gz"), std::string::npos);
  const auto j = nlohmann::json::parse(test::read_text(dir / "r.json"));
  EXPECT_EQ(j["traces"][0]["kernels"], test::kTransformerLayerTraceKernels);
  EXPECT_EQ(j["traces"][0]["gpu"], "H100-SXM");
  for (const char* f : {"layer.html", "layer.trace.json", "layer.csv", "records.layer.jsonl"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / "out" / f)) << f;
  }
  // What replay wrote is a records file the other commands read.
  const auto rep = run({"report", (dir / "out").string(), "--out", (dir / "rep").string()});
  EXPECT_EQ(rep.code, 0) << rep.err;
  EXPECT_NE(rep.out.find("accuracy on H100-SXM: " +
                         std::to_string(test::kTransformerLayerTraceKernels) + " kernels"),
            std::string::npos)
      << rep.out;
  // Beside a runtime's summary (here one written for the replay's records), the report says
  // the GPU's copies and memsets the summary counted.
  EXPECT_EQ(rep.out.find("not forecast"), std::string::npos) << rep.out;
  test::write_text(dir / "out" / "records.layer.summary.json",
                   R"({"schema":"pm2lat.summary","version":1,"transfers":[)"
                   R"({"kind":"host_to_device","count":5,"bytes":1,"measured_ms":2.5}]})");
  const auto with_copies = run({"report", (dir / "out").string(), "--out", (dir / "rep").string()});
  EXPECT_NE(with_copies.out.find("note: not forecast: the GPU's memory copies (5, 2.500 ms) and "
                                 "memsets (0, 0.000 ms) besides its kernels"),
            std::string::npos)
      << with_copies.out;
  // The HTML report gives the notes the console does.
  const std::string html = test::read_text(dir / "rep" / "pm2lat-report.html");
  EXPECT_NE(html.find("note: not forecast: the GPU's memory copies (5, 2.500 ms)"),
            std::string::npos);
  const auto chk = run({"check", (dir / "out").string(), "--max-mape", "100000"});
  EXPECT_EQ(chk.code, 0) << chk.out << chk.err;
  const auto strict = run({"check", (dir / "out").string(), "--max-mape", "0"});
  EXPECT_EQ(strict.code, 1) << strict.out << strict.err;
  EXPECT_NE(strict.out.find("FAIL"), std::string::npos);
}

TEST_F(Cli, BadTracesGiveOneClearError) {
  const std::string gz = test::read_text(trace);
  test::write_text(dir / "cut.json.gz", gz.substr(0, gz.size() / 3));
  expect_one_error(run({"replay", (dir / "cut.json.gz").string()}), "cut.json.gz");
  const std::string json =
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur")";
  test::write_text(dir / "truncated.json", json);
  expect_one_error(run({"replay", (dir / "truncated.json").string()}), "ends early");
  test::write_text(dir / "garbled.json", "{\"traceEvents\": [}\n");
  expect_one_error(run({"replay", (dir / "garbled.json").string()}), "invalid JSON");
  test::write_text(dir / "nokernels.json",
                   R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"a","ts":1,"dur":1}]})");
  expect_one_error(run({"replay", (dir / "nokernels.json").string()}), "no GPU kernel events");
  test::write_text(dir / "empty.json", "");
  expect_one_error(run({"replay", (dir / "empty.json").string()}), "empty");
  expect_one_error(run({"replay", (dir / "missing.json").string()}), "no such file");
  expect_one_error(run({"replay", trace.string(), "--targets", "H100,Z9000"}),
                   "unknown GPU 'Z9000'");
}

TEST_F(Cli, ATraceThatCannotBeReadIsSaidAndTheOthersAreStillReplayed) {
  const std::filesystem::path traces = dir / "traces";
  std::filesystem::create_directories(traces);
  std::filesystem::copy_file(trace, traces / "b_layer.json.gz");
  test::write_text(traces / "a_garbled.json", "{\"traceEvents\": [}\n");
  const auto r =
      run({"replay", traces.string(), "--quiet", "--json", (dir / "mixed.json").string()});
  expect_one_error(r, "a_garbled.json");
  EXPECT_NE(r.out.find("b_layer.json.gz"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(test::read_text(dir / "mixed.json"));
  ASSERT_EQ(j["traces"].size(), 1u);
  EXPECT_EQ(j["traces"][0]["trace"], "b_layer.json.gz");
  ASSERT_EQ(j["failed"].size(), 1u);
  EXPECT_EQ(j["failed"][0]["trace"], "a_garbled.json");
  EXPECT_NE(j["failed"][0]["error"].get<std::string>().find("invalid JSON"), std::string::npos);
}

TEST_F(Cli, AJsonFileThatCannotBeWrittenIsRefusedBeforeTheReplay) {
  // Said at once, before the traces are replayed (which may take minutes), not after.
  const auto missing = run({"replay", trace.string(), "--json", (dir / "no" / "r.json").string()});
  expect_one_error(missing, "cannot be written (no directory");
  EXPECT_EQ(missing.out.find("trace "), std::string::npos) << "replayed first:\n" << missing.out;
  expect_one_error(run({"replay", trace.string(), "--json", dir.string()}), "is a directory");
  expect_one_error(
      run({"eval", "models", "--data", dir.string(), "--json", (dir / "no" / "m.json").string()}),
      "cannot be written");
}

TEST_F(Cli, AnEvalOptionTheChosenModeDoesNotReadIsRefusedNotIgnored) {
  const auto runs = test::write_toy_model_runs("cli_models");
  expect_one_error(run({"eval", "models", "--data", runs.string(), "--matrix"}),
                   "--matrix is not read without --source or --target");
  expect_one_error(run({"eval", "models", "--data", runs.string(), "--no-guard"}),
                   "is not read without --source or --target");
  // A live run picks its GPUs with --source and --target, not --devices.
  const auto devices = run(
      {"eval", "models", "--data", runs.string(), "--devices", "T4", "--source", "V100-PCIE-32GB"});
  EXPECT_NE(devices.code, 0);
  EXPECT_NE(devices.err.find("--devices excludes --source"), std::string::npos) << devices.err;
  std::filesystem::remove_all(runs);
  // Collections are a table's rows scored on their own GPU, which a cross-GPU score is not.
  test::write_text(dir / "kernels.csv",
                   "device,op,kernel_name,grid_x,grid_y,grid_z,block_x,block_y,block_z,B,M,N,K,"
                   "H,latency_us\nT4,bmm,volta_sgemm_128x64_nn,8,16,4,256,1,1,4,1024,512,1024,,"
                   "1500\n");
  expect_one_error(run({"eval", "kernels", "--data", (dir / "kernels.csv").string(), "--source",
                        "T4", "--by-collection"}),
                   "--by-collection is not read with --source or --target");
}

TEST_F(Cli, DevicesListsTheCatalogueAndWhereEachGpusPredictionsComeFrom) {
  auto r = test::run_process({kPm2lat, "devices", "--profiles", PM2LAT_SHIPPED_PROFILES});
  ASSERT_EQ(r.code, 0) << r.err;
  auto line_of = [&](const std::string& gpu) {
    const auto at = r.out.find("\n" + gpu + " ");
    if (at == std::string::npos) return std::string();
    return r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  EXPECT_NE(line_of("T4").find("gemm fp32; operators; conv"), std::string::npos) << r.out;
  EXPECT_NE(line_of("H100-SXM").find("attention"), std::string::npos) << r.out;
  EXPECT_NE(line_of("A10").find("none: spec-scaled from "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("also: H100"), std::string::npos) << r.out;  // the forgiving names
  EXPECT_NE(r.out.find("MIG: 4 compute slices; a partition: 'A30 MIG <g>g.<GB>gb'"),
            std::string::npos)
      << r.out;
  // Without profiles every GPU is listed, each predicted by the roofline alone.
  r = run({"devices"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("none: roofline only"), std::string::npos) << r.out;
}

TEST_F(Cli, DevicesResolvesTheNamesATraceOrDriverGives) {
  auto r = test::run_process({kPm2lat, "devices", "--profiles", PM2LAT_SHIPPED_PROFILES,
                              "NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM2e"});
  ASSERT_EQ(r.code, 0) << r.err;
  // Only the GPUs asked for, each under the name it was asked by.
  EXPECT_NE(r.out.find("'NVIDIA A100-SXM4-40GB': A100"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'NVIDIA H100 80GB HBM2e': not in the catalogue; priced as its closest "
                       "relative, H100"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("\nT4 "), std::string::npos) << r.out;
  expect_one_error(run({"devices", "H100", "Z9000"}), "unknown GPU 'Z9000'");
  // A MIG partition's name: what share of which GPU it is priced as.
  r = test::run_process({kPm2lat, "devices", "--profiles", PM2LAT_SHIPPED_PROFILES,
                         "NVIDIA A100-SXM4-40GB MIG 3g.20gb"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU 'NVIDIA A100-SXM4-40GB MIG 3g.20gb' is a MIG partition of "
                       "A100-SXM4-40GB: predicted and scored as 45 of its 108 SMs"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nA100-SXM4-40GB MIG 3g.20gb "), std::string::npos) << r.out;
}

TEST_F(Cli, BadRecordsGiveOneClearError) {
  test::write_text(dir / "records.0.jsonl", "");
  expect_one_error(run({"report", (dir / "records.0.jsonl").string()}), "empty");
  RecordsHeader h;
  h.gpu = "H100-SXM";
  test::write_text(dir / "header_only.jsonl", header_to_jsonl(h) + "\n");
  expect_one_error(run({"merge", (dir / "header_only.jsonl").string()}), "no kernel records");
  const auto chk = run({"check", (dir / "header_only.jsonl").string(), "--max-mape", "10"});
  EXPECT_EQ(chk.code, 2) << "records that cannot be checked are not a pass";
  expect_one_error(run({"report", test::scratch_dir("nothing").string()}), "no records files");
}

TEST_F(Cli, MergeReportsEveryRankAndTheTotal) {
  for (int rank = 0; rank < 2; ++rank) {
    RecordsHeader h;
    h.gpu = "H100-SXM";
    h.targets = {"H100-SXM", "A100-SXM"};
    h.rank = rank;
    std::string text = header_to_jsonl(h) + "\n";
    for (int i = 0; i < 2 + rank; ++i) {
      PredictedRecord r;
      r.rank = rank;
      r.record.ts_ns = static_cast<std::uint64_t>(i) * 10000;
      r.record.launch.name = "ampere_sgemm_128x64_tn";
      r.record.measured_us = 10;
      r.family = KernelFamily::kGemm;
      Prediction p;
      p.us = 9;
      r.predictions.emplace_back("H100-SXM", p);
      p.us = 20;
      r.predictions.emplace_back("A100-SXM", p);
      text += record_to_jsonl(r) + "\n";
    }
    const auto node = dir / ("node" + std::to_string(rank));
    std::filesystem::create_directories(node);
    test::write_text(node / ("records." + std::to_string(rank) + ".jsonl"), text);
  }
  const auto r = run(
      {"merge", (dir / "node0").string(), (dir / "node1").string(), "--out", (dir / "m").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("step time per rank"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(slowest rank)"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir / "m" / "pm2lat-merged.html"));
}

}  // namespace
}  // namespace pm2lat
