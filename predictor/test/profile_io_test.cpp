#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "pm2lat/profile_io.h"

namespace pm2lat {
namespace {

Profile sample_profile() {
  Profile p;
  p.device = "T4";
  p.basis = TimeBasis::kCall;
  p.provenance.source = "unit test";
  p.provenance.environment["cuda"] = "13.0";
  p.call_overhead["bmm"] = CallOverhead{30.0, 12.0};
  GemmConfigFit c;
  c.config = "volta_sgemm_128x64_nn";
  c.blocks_per_sm = 2;
  c.tile_m = 128;
  c.tile_n = 64;
  c.tile_k = 8;
  c.c0 = 3;
  c.c_wave_k = 0.7;
  c.c_wave = 2;
  c.c_mem = 1.1;
  p.gemm_configs.push_back(c);
  GemmPoint pt;
  pt.op = "bmm";
  pt.config = 0;
  pt.batch = 4;
  pt.m = 256;
  pt.n = 512;
  pt.k = 64;
  pt.grid = {4, 4, 4};
  pt.us = 80;
  p.gemm_points.push_back(pt);
  VectorFit v;
  v.op = "add";
  v.c0 = 2;
  v.c_byte = 1.2;
  p.vector_fits.push_back(v);
  p.vector_points.push_back(VectorPoint{0, 128, 1024, 3 * 128 * 1024 * 4.0, 40});
  VectorFit family;
  family.op = "layernorm";
  family.config = "at::native::(anonymous namespace)::vectorized_layer_norm_kernel";
  family.c0 = 3;
  family.c_byte = 1.4;
  family.bytes_min = 1e5;
  family.bytes_max = 4e7;
  family.rows_max = 512;
  p.family_fits.push_back(family);
  return p;
}

TEST(ProfileIo, RoundTrip) {
  const Profile p = sample_profile();
  const Profile q = parse_profile(serialize_profile(p), "mem.json");
  EXPECT_EQ(q.device, "T4");
  EXPECT_EQ(q.basis, TimeBasis::kCall);
  EXPECT_EQ(q.provenance.environment.at("cuda"), "13.0");
  EXPECT_DOUBLE_EQ(q.call_overhead.at("bmm").pre_us, 12.0);
  ASSERT_EQ(q.gemm_configs.size(), 1u);
  EXPECT_EQ(q.gemm_configs[0].blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(q.gemm_configs[0].c_wave_k, 0.7);
  ASSERT_EQ(q.gemm_points.size(), 1u);
  EXPECT_EQ(q.gemm_points[0].grid, (Dim3{4, 4, 4}));
  EXPECT_EQ(q.gemm_points[0].op, "bmm");
  ASSERT_EQ(q.vector_points.size(), 1u);
  EXPECT_EQ(q.vector_points[0].cols, 1024);
  // A fit's byte and row ranges survive; a fit without them stays without.
  ASSERT_EQ(q.family_fits.size(), 1u);
  EXPECT_DOUBLE_EQ(q.family_fits[0].bytes_min, 1e5);
  EXPECT_DOUBLE_EQ(q.family_fits[0].bytes_max, 4e7);
  EXPECT_DOUBLE_EQ(q.family_fits[0].rows_max, 512);
  EXPECT_DOUBLE_EQ(q.vector_fits[0].bytes_max, 0);
  EXPECT_DOUBLE_EQ(q.vector_fits[0].rows_max, 0);
}

// A configuration standing for the library's own choice says so in its profile; one of a named
// kernel writes nothing more than before the field.
TEST(ProfileIo, ANominalLaunchRoundTripsAndANamedKernelWritesNoField) {
  Profile p = sample_profile();
  EXPECT_EQ(serialize_profile(p).find("nominal_launch"), std::string::npos);
  EXPECT_FALSE(parse_profile(serialize_profile(p), "a.json").gemm_configs[0].nominal_launch);
  p.gemm_configs[0].nominal_launch = true;
  EXPECT_TRUE(parse_profile(serialize_profile(p), "b.json").gemm_configs[0].nominal_launch);
}

TEST(ProfileIo, ANumberNoDoubleHoldsIsAProfileError) {
  // Found by the profile_loader fuzzer: the JSON library reports overflow as out_of_range.
  EXPECT_THROW(parse_profile(std::string("999999999E9999999\0", 18), "n.json"), ProfileError);
  EXPECT_THROW(parse_profile("{\"schema\": 1E99999}", "n.json"), ProfileError);
}

TEST(ProfileIo, GraphTimingAndOffsetRoundTrip) {
  Profile p = sample_profile();
  EXPECT_FALSE(parse_profile(serialize_profile(p), "a.json").graph_replay);
  p.graph_replay = true;
  p.graph_kernel_offset_us = 3.25;
  const Profile q = parse_profile(serialize_profile(p), "b.json");
  EXPECT_TRUE(q.graph_replay);
  EXPECT_DOUBLE_EQ(q.graph_kernel_offset_us, 3.25);
  std::string text = serialize_profile(p);
  text.replace(text.find("graph_replay"), 12, "graph_replays");
  try {
    parse_profile(text, "c.json");
    FAIL() << "an unknown timing was accepted";
  } catch (const ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("c.json"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("timing"), std::string::npos);
  }
}

// Each corruption must produce one ProfileError naming the file and the field.
struct Corruption {
  const char* what;
  std::string from, to;
  std::string field;
};

TEST(ProfileIo, CorruptProfilesNameFileAndField) {
  const std::string good = serialize_profile(sample_profile());
  const std::vector<Corruption> cases = {
      {"wrong schema", "\"pm2lat.profile\"", "\"other.schema\"", "schema"},
      {"wrong version", "\"version\":1", "\"version\":7", "version"},
      {"bad basis", "\"basis\":\"call\"", "\"basis\":\"wall\"", "basis"},
      {"negative coefficient", "\"c_wave_k\":0.7", "\"c_wave_k\":-0.7", "gemm.configs[0].c_wave_k"},
      {"string for number", "\"blocks_per_sm\":2", "\"blocks_per_sm\":\"two\"",
       "gemm.configs[0].blocks_per_sm"},
      {"config index out of range", "\"config\":[0]", "\"config\":[5]", "gemm.points.config[0]"},
      {"column length", "\"m\":[256]", "\"m\":[256,512]", "gemm.points.m"},
      {"zero latency", "\"us\":[80.0]", "\"us\":[0.0]", "gemm.points.us[0]"},
      {"missing device", "\"device\":\"T4\",", "", "device"},
  };
  for (const auto& c : cases) {
    std::string text = good;
    const auto pos = text.find(c.from);
    ASSERT_NE(pos, std::string::npos) << c.what << ": pattern not in " << text.substr(0, 300);
    text.replace(pos, c.from.size(), c.to);
    try {
      parse_profile(text, "bad.json");
      ADD_FAILURE() << c.what << ": accepted";
    } catch (const ProfileError& e) {
      EXPECT_EQ(e.file(), "bad.json") << c.what;
      EXPECT_EQ(e.field(), c.field) << c.what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos);
    }
  }
}

// Loaded without points, then one table at a time: the same profile as loaded whole (shipped
// profiles holding every kind of table; StagedLoad checks the predictions of them all).
TEST(ProfileIo, PointsReadLaterAreThePointsReadWithTheProfile) {
  for (const char* name :
       {"H100-SXM.traces-kernel.json", "L4.neusight-fp32.json", "A100-PCIE-80GB.neusight-conv.json",
        "A100-SXM.aiconfigurator-attention.json", "H100-SXM.aiconfigurator-lowp.json"}) {
    const Profile whole = load_profile(std::filesystem::path(PM2LAT_PROFILE_DIR) / name);
    Profile staged = load_profile_without_points(whole.file);
    EXPECT_TRUE(staged.gemm_points.empty() && staged.vector_points.empty() &&
                staged.attention_points.empty() && staged.conv_points.empty() &&
                staged.scaled_gemm_points.empty() && staged.family_points.empty())
        << whole.file;
    EXPECT_NE(staged.points_in_file, 0) << whole.file;
    for (PointTable t : {PointTable::kGemm, PointTable::kVector, PointTable::kAttention,
                         PointTable::kConv, PointTable::kScaledGemm, PointTable::kFamily}) {
      load_points(staged, t);
    }
    EXPECT_EQ(staged.points_in_file, 0) << whole.file;
    EXPECT_EQ(serialize_profile(staged), serialize_profile(whole)) << whole.file;
  }
}

// A bad point table is found when it is read, with the same error as a whole load gives.
TEST(ProfileIo, BadPointsLoadedLaterNameFileAndField) {
  const auto dir = std::filesystem::temp_directory_path() / "pm2lat_profile_io_points_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string text = serialize_profile(sample_profile());
  const std::string good_us = "\"us\":[80.0]";
  text.replace(text.find(good_us), good_us.size(), "\"us\":[0.0]");
  const auto file = dir / "bad.json";
  std::ofstream(file) << text;
  Profile p = load_profile_without_points(file);
  EXPECT_EQ(p.points_in_file, point_table_bit(PointTable::kGemm) |
                                  point_table_bit(PointTable::kVector) |
                                  point_table_bit(PointTable::kFamily));
  load_points(p, PointTable::kVector);
  EXPECT_EQ(p.vector_points.size(), 1u);
  try {
    load_points(p, PointTable::kGemm);
    ADD_FAILURE() << "a zero latency was accepted";
  } catch (const ProfileError& e) {
    EXPECT_EQ(e.file(), file.string());
    EXPECT_EQ(e.field(), "gemm.points.us[0]");
  }
  std::filesystem::remove_all(dir);
}

// The tables are cut from the text by its strings and brackets: brackets, quotes and
// "points" keys inside strings, or under a section that holds no table, are not tables.
TEST(ProfileIo, PointsLoadedLaterThroughTrickyText) {
  Profile tricky = sample_profile();
  tricky.provenance.notes = "a \"quoted\" {\"points\": [1, 2]} ] } \\";
  tricky.provenance.environment["points"] = "{\"us\": [";
  tricky.call_overhead["points"] = CallOverhead{1.0, 0.5};
  const auto dir = std::filesystem::temp_directory_path() / "pm2lat_profile_io_tricky_test";
  std::filesystem::remove_all(dir);
  save_profile(tricky, dir / "T4.tricky.json");
  const Profile whole = load_profile(dir / "T4.tricky.json");
  Profile staged = load_profile_without_points(dir / "T4.tricky.json");
  EXPECT_TRUE(staged.gemm_points.empty());
  EXPECT_EQ(staged.call_overhead.at("points").pre_us, 0.5);
  for (PointTable t : {PointTable::kGemm, PointTable::kVector, PointTable::kFamily})
    load_points(staged, t);
  EXPECT_EQ(serialize_profile(staged), serialize_profile(whole));
  // A syntax error inside a table: the profile loads without it, the table is refused with
  // the error a whole load gives.
  std::string text = serialize_profile(tricky);
  const std::string good_m = "\"m\":[256]";
  text.replace(text.find(good_m), good_m.size(), "\"m\":[256,,]");
  std::ofstream(dir / "T4.broken.json") << text;
  std::string whole_error;
  try {
    load_profile(dir / "T4.broken.json");
  } catch (const ProfileError& e) {
    whole_error = e.what();
  }
  ASSERT_FALSE(whole_error.empty());
  Profile broken = load_profile_without_points(dir / "T4.broken.json");
  EXPECT_THROW(
      {
        try {
          load_points(broken, PointTable::kGemm);
        } catch (const ProfileError& e) {
          EXPECT_EQ(e.what(), whole_error);
          throw;
        }
      },
      ProfileError);
  std::filesystem::remove_all(dir);
}

TEST(ProfileIo, TruncatedAndMissingFiles) {
  const std::string good = serialize_profile(sample_profile());
  EXPECT_THROW(parse_profile(good.substr(0, good.size() / 2), "t.json"), ProfileError);
  EXPECT_THROW(parse_profile("", "t.json"), ProfileError);
  EXPECT_THROW(parse_profile("[]", "t.json"), ProfileError);
  EXPECT_THROW(load_profile("/nonexistent/profile.json"), ProfileError);
}

TEST(ProfileIo, SaveAndLoadDirectory) {
  const auto dir = std::filesystem::temp_directory_path() / "pm2lat_profile_io_test";
  std::filesystem::remove_all(dir);
  save_profile(sample_profile(), dir / "T4.test.json");
  std::ofstream(dir / "devices.json") << "{}";  // the catalogue is not a profile
  const auto all = load_profiles(dir);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].device, "T4");
  EXPECT_EQ(all[0].file, (dir / "T4.test.json").string());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pm2lat
