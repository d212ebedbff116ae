#include "collect/record_notes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pm2lat/record_jsonl.h"

namespace pm2lat::shim {
namespace {

TEST(RecordNotes, AppendedToASharedSchemaRecordWhichStillParses) {
  PredictedRecord pr;
  pr.record.seq = 12;
  pr.record.launch.name = "ampere_sgemm_128x64_tn";
  pr.record.measured_us = 3.25;
  std::string line = record_to_jsonl(pr);
  RecordNotes n;
  n.api = "cuLaunchKernelEx";
  n.via = "cudaLaunchKernelExC";
  n.correlation = 812;
  n.call = 44;
  n.args = {4096, 128};
  n.bits = notes::kFirstLaunch | notes::kGraphReplay;
  append_notes(line, n);
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j.at("seq"), 12);
  EXPECT_EQ(j.at("runtime").at("api"), "cuLaunchKernelEx");
  EXPECT_EQ(j.at("runtime").at("via"), "cudaLaunchKernelExC");
  EXPECT_EQ(j.at("runtime").at("corr"), 812);
  EXPECT_EQ(j.at("runtime").at("call"), 44);
  EXPECT_EQ(j.at("runtime").at("args"), (nlohmann::json{4096, 128}));
  EXPECT_EQ(j.at("runtime").at("notes"), (nlohmann::json{"first_launch", "graph_replay"}));
  // Readers of the shared schema ignore the runtime's object.
  const PredictedRecord back = record_from_jsonl(line, "test");
  EXPECT_EQ(back.record.launch.name, "ampere_sgemm_128x64_tn");
  EXPECT_DOUBLE_EQ(*back.record.measured_us, 3.25);
}

TEST(RecordNotes, NamesFollowBitOrderAndUnknownFieldsAreLeftOut) {
  EXPECT_EQ(notes::names(notes::kUnhooked | notes::kUnmeasured),
            (std::vector<std::string>{"unmeasured", "unhooked"}));
  std::string line = "{\"seq\":1}";
  append_notes(line, RecordNotes{});
  EXPECT_EQ(line, "{\"seq\":1,\"runtime\":{\"notes\":[]}}");
}

}  // namespace
}  // namespace pm2lat::shim
