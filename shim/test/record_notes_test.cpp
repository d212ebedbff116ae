#include "collect/record_notes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pm2lat/record_fields.h"

namespace pm2lat::shim {
namespace {

namespace field = record_field;

TEST(RecordNotes, WrittenAsTheRecordsRuntimeObjectWhichReadersOfTheSchemaIgnore) {
  PredictedRecord pr;
  pr.record.seq = 12;
  pr.record.launch.name = "ampere_sgemm_128x64_tn";
  pr.record.measured_us = 3.25;
  RecordNotes n;
  n.api = "cuLaunchKernelEx";
  n.via = "cudaLaunchKernelExC";
  n.correlation = 812;
  n.call = 44;
  n.args = {4096, 128};
  n.bits = notes::kFirstLaunch | notes::kGraphReplay;
  const RecordRuntime rt = record_runtime(n);
  const std::string line = record_to_jsonl(pr, &rt);
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j.at(field::kSeq), 12);
  const auto& r = j.at(field::runtime::kObject);
  EXPECT_EQ(r.at(field::runtime::kApi), "cuLaunchKernelEx");
  EXPECT_EQ(r.at(field::runtime::kVia), "cudaLaunchKernelExC");
  EXPECT_EQ(r.at(field::runtime::kCorrelation), 812);
  EXPECT_EQ(r.at(field::runtime::kCall), 44);
  EXPECT_EQ(r.at(field::runtime::kArgs), (nlohmann::json{4096, 128}));
  EXPECT_EQ(r.at(field::runtime::kNotes), (nlohmann::json{"first_launch", "graph_replay"}));
  const PredictedRecord back = record_from_jsonl(line, "test");
  EXPECT_EQ(back.record.launch.name, "ampere_sgemm_128x64_tn");
  EXPECT_DOUBLE_EQ(*back.record.measured_us, 3.25);
}

TEST(RecordNotes, NamesFollowBitOrderAndUnknownFieldsAreLeftOut) {
  EXPECT_EQ(notes::names(notes::kUnhooked | notes::kUnmeasured),
            (std::vector<std::string_view>{"unmeasured", "unhooked"}));
  const RecordRuntime rt = record_runtime(RecordNotes{});
  const auto j = nlohmann::json::parse(record_to_jsonl(PredictedRecord{}, &rt));
  EXPECT_EQ(j.at(field::runtime::kObject),
            (nlohmann::json{{field::runtime::kNotes, nlohmann::json::array()}}));
}

}  // namespace
}  // namespace pm2lat::shim
