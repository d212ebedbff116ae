#include "pm2lat/error_band_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "pm2lat/classifier.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_error.h"

namespace pm2lat {
namespace {

constexpr int kAny = BandGroup::kAny;

BandGroup group(int family, int model, int flags, int scope, int basis, double band,
                int duration = kAny) {
  BandGroup g;
  g.duration = duration;
  g.family = family;
  g.model = model;
  g.flags = flags;
  g.scope = scope;
  g.basis = basis;
  g.band_pct = band;
  g.n = 40;
  return g;
}

int i(auto e) { return static_cast<int>(e); }

// The fallback order of the shipped table (estimated by scripts/build-error-bands.py, which
// sets it): the level numbers below are positions in it.
const std::vector<BandLevel>& shipped_levels() {
  static const std::vector<BandLevel> levels =
      ErrorBandTable::load(std::filesystem::path(PM2LAT_PROFILE_DIR) / kErrorBandsFile).levels();
  return levels;
}

// Finest group 10, the GEMM family's kernel times (any model) 20, call times without flags
// 33, every no_shape prediction 60, the cross-GPU scope 45, everything 50.
ErrorBandTable sample_table() {
  return ErrorBandTable::from_groups(
      {group(i(KernelFamily::kGemm), i(ModelKind::kGemmWave), i(BandFlagGroup::kNone),
             i(BandScope::kSameGpu), i(TimeBasis::kKernel), 10),
       group(i(KernelFamily::kGemm), kAny, i(BandFlagGroup::kNone), i(BandScope::kSameGpu),
             i(TimeBasis::kKernel), 20),
       group(kAny, kAny, i(BandFlagGroup::kNone), i(BandScope::kSameGpu), i(TimeBasis::kCall), 33),
       group(kAny, kAny, i(BandFlagGroup::kNoShape), i(BandScope::kSameGpu), kAny, 60),
       group(kAny, kAny, kAny, i(BandScope::kCrossGpu), kAny, 45),
       group(kAny, kAny, kAny, kAny, kAny, 50)},
      0.8, shipped_levels());
}

TEST(ErrorBandTable, TheFinestGroupWithEnoughPredictionsAnswers) {
  const ErrorBandTable t = sample_table();
  const BandKey exact{KernelFamily::kGemm, ModelKind::kGemmWave, BandFlagGroup::kNone,
                      BandScope::kSameGpu, TimeBasis::kKernel};
  EXPECT_FLOAT_EQ(t.band_pct(exact), 10);
  EXPECT_EQ(t.level(exact), 4u);  // its group pools both durations
}

TEST(ErrorBandTable, FallsBackWithinTheTimeBasisFirstThenFlagGroupScopeAndAll) {
  const ErrorBandTable t = sample_table();
  // Same family and basis, another model: the family's group.
  const BandKey family{KernelFamily::kGemm, ModelKind::kRoofline, BandFlagGroup::kNone,
                       BandScope::kSameGpu, TimeBasis::kKernel};
  EXPECT_FLOAT_EQ(t.band_pct(family), 20);
  EXPECT_EQ(t.level(family), 5u);
  // The same kernel timed as a call: the call-time group, not the family's kernel times.
  const BandKey call{KernelFamily::kGemm, ModelKind::kRoofline, BandFlagGroup::kNone,
                     BandScope::kSameGpu, TimeBasis::kCall};
  EXPECT_FLOAT_EQ(t.band_pct(call), 33);
  EXPECT_EQ(t.level(call), 7u);
  // A shapeless copy: no family group, the no_shape group whatever the basis.
  const BandKey shapeless{KernelFamily::kCopy, ModelKind::kMemoryBound, BandFlagGroup::kNoShape,
                          BandScope::kSameGpu, TimeBasis::kKernel};
  EXPECT_FLOAT_EQ(t.band_pct(shapeless), 60);
  EXPECT_EQ(t.level(shapeless), 9u);
  // Another GPU: the cross-GPU scope, even for the family with a same-GPU group.
  const BandKey cross{KernelFamily::kGemm, ModelKind::kGemmWave, BandFlagGroup::kNone,
                      BandScope::kCrossGpu, TimeBasis::kKernel};
  EXPECT_FLOAT_EQ(t.band_pct(cross), 45);
  EXPECT_EQ(t.level(cross), 10u);
  // Nothing closer: the pool of all predictions, never nothing.
  const BandKey other{KernelFamily::kSoftmax, ModelKind::kMemoryBound, BandFlagGroup::kClamped,
                      BandScope::kSameGpu, TimeBasis::kKernel};
  EXPECT_FLOAT_EQ(t.band_pct(other), 50);
  EXPECT_EQ(t.level(other), 11u);
}

// The cross-GPU groups hold call times of kernels every GPU calibrated (the tables): a
// shapeless kernel-time prediction for another GPU must not take their narrow band when the
// same prediction for the GPU it ran on has a wide one.
TEST(ErrorBandTable, ACrossGpuBandIsNeverNarrowerThanTheSameGpuOne) {
  const ErrorBandTable t = sample_table();
  const BandKey shapeless_here{KernelFamily::kCopy, ModelKind::kMemoryBound,
                               BandFlagGroup::kNoShape, BandScope::kSameGpu, TimeBasis::kKernel};
  BandKey shapeless_there = shapeless_here;
  shapeless_there.scope = BandScope::kCrossGpu;
  EXPECT_FLOAT_EQ(t.band_pct(shapeless_here), 60);
  EXPECT_FLOAT_EQ(t.band_pct(shapeless_there), 60);  // not the cross-GPU pool's 45
  // Where the cross-GPU band is the wider, it stands.
  const BandKey gemm_there{KernelFamily::kGemm, ModelKind::kGemmWave, BandFlagGroup::kNone,
                           BandScope::kCrossGpu, TimeBasis::kKernel};
  EXPECT_FLOAT_EQ(t.band_pct(gemm_there), 45);
}

// A kernel of a few microseconds errs by a larger share than a long one of the same group:
// each duration has its own band where the table has one, and the group's pool of both
// answers for a duration it has too few predictions of.
TEST(ErrorBandTable, ShortAndLongPredictionsOfOneGroupHaveTheirOwnBands) {
  const int gemm = i(KernelFamily::kGemm), wave = i(ModelKind::kGemmWave);
  const int none = i(BandFlagGroup::kNone), same = i(BandScope::kSameGpu);
  const int kernel = i(TimeBasis::kKernel);
  const ErrorBandTable t = ErrorBandTable::from_groups(
      {group(gemm, wave, none, same, kernel, 40, i(BandDuration::kShort)),
       group(gemm, wave, none, same, kernel, 12), group(kAny, kAny, kAny, kAny, kAny, 50)},
      0.8, shipped_levels());
  BandKey k{KernelFamily::kGemm, ModelKind::kGemmWave, BandFlagGroup::kNone,
            BandScope::kSameGpu, TimeBasis::kKernel,   BandDuration::kShort};
  EXPECT_FLOAT_EQ(t.band_pct(k), 40);
  EXPECT_EQ(t.level(k), 0u);
  // No long group at any level that keeps the duration: the group's pool of both.
  k.duration = BandDuration::kLong;
  EXPECT_FLOAT_EQ(t.band_pct(k), 12);
  EXPECT_EQ(t.level(k), 4u);
  // A prediction's duration is its predicted time's.
  EXPECT_EQ(band_duration(kShortPredictionUs / 2), BandDuration::kShort);
  EXPECT_EQ(band_duration(kShortPredictionUs), BandDuration::kLong);
  Prediction p;
  p.model = ModelKind::kGemmWave;
  p.us = 3;
  EXPECT_FLOAT_EQ(t.band_pct(KernelFamily::kGemm, p, true), 40);
  p.us = 300;
  EXPECT_FLOAT_EQ(t.band_pct(KernelFamily::kGemm, p, true), 12);
}

TEST(ErrorBandTable, AnEmptyTableGivesNoBand) {
  const ErrorBandTable t;
  EXPECT_TRUE(t.empty());
  EXPECT_TRUE(std::isnan(t.band_pct({})));
  EXPECT_EQ(t.level({}), ErrorBandTable::kNoLevel);
}

TEST(ErrorBandTable, TheFirstFlagInPriorityNamesTheGroup) {
  using namespace prediction_flags;
  EXPECT_EQ(band_flag_group(0), BandFlagGroup::kNone);
  EXPECT_EQ(band_flag_group(kConfigChosen), BandFlagGroup::kNone);
  EXPECT_EQ(band_flag_group(kNoShape | kFallback), BandFlagGroup::kFallback);
  EXPECT_EQ(band_flag_group(kClamped | kNoShape), BandFlagGroup::kNoShape);
  EXPECT_EQ(band_flag_group(kSpecScaled | kDtypeSubstituted), BandFlagGroup::kSpecScaled);
  EXPECT_EQ(band_flag_group(kCommunication | kFallback), BandFlagGroup::kCommunication);
  for (std::size_t g = 0; g < kBandFlagGroupCount; ++g) {
    bool known = false;
    EXPECT_EQ(parse_band_flag_group(to_string(static_cast<BandFlagGroup>(g)), &known),
              static_cast<BandFlagGroup>(g));
    EXPECT_TRUE(known);
  }
}

// A table file in a fresh directory, removed with the fixture.
class ErrorBandFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pm2lat_bands_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path write(const std::string& text) const {
    auto path = dir_ / kErrorBandsFile;
    std::ofstream(path) << text;
    return path;
  }
  static constexpr const char* kFlagGroups = R"(["none","fallback","anchored","shape_rejected",
      "no_shape","clamped","extrapolated","spec_scaled","dtype_substituted","communication"])";
  // Each group with the duration, then without it, then the scope alone, then all.
  static constexpr const char* kLevels =
      R"([["family","model","flags","scope","basis","duration"],
          ["family","model","flags","scope","basis"],["scope"],[]])";
  static std::string table(const std::string& groups, const std::string& flag_groups = kFlagGroups,
                           const std::string& levels = kLevels) {
    return R"({"schema":"pm2lat.error_bands","version":2,"quantile":0.8,"flag_groups":)" +
           flag_groups + R"(,"levels":)" + levels + R"(,"groups":[)" + groups + "]}";
  }
  std::filesystem::path dir_;
};

constexpr const char* kGemmGroup =
    R"({"family":"gemm","model":"gemm_wave","flags":"none","scope":"same_gpu","basis":"kernel",
        "band_pct":12.5,"n":31})";
constexpr const char* kAllGroup =
    R"({"family":"*","model":"*","flags":"*","scope":"*","basis":"*","band_pct":80,"n":900})";

TEST_F(ErrorBandFile, LoadsGroupsWithWildcards) {
  const ErrorBandTable t =
      ErrorBandTable::load(write(table(std::string(kGemmGroup) + "," + kAllGroup)));
  EXPECT_FALSE(t.empty());
  EXPECT_DOUBLE_EQ(t.quantile(), 0.8);
  EXPECT_FLOAT_EQ(t.band_pct({KernelFamily::kGemm, ModelKind::kGemmWave, BandFlagGroup::kNone,
                              BandScope::kSameGpu, TimeBasis::kKernel}),
                  12.5);
  EXPECT_FLOAT_EQ(t.band_pct({KernelFamily::kCopy, ModelKind::kMemoryBound, BandFlagGroup::kNone,
                              BandScope::kCrossGpu, TimeBasis::kCall}),
                  80);
}

TEST_F(ErrorBandFile, LoadsGroupsOfOneDuration) {
  const ErrorBandTable t = ErrorBandTable::load(
      write(table(std::string(kGemmGroup) + "," + kAllGroup +
                  R"(,{"family":"gemm","model":"gemm_wave","flags":"none","scope":"same_gpu",
           "basis":"kernel","duration":"short","band_pct":30,"n":31})")));
  BandKey k{KernelFamily::kGemm, ModelKind::kGemmWave, BandFlagGroup::kNone,
            BandScope::kSameGpu, TimeBasis::kKernel,   BandDuration::kShort};
  EXPECT_FLOAT_EQ(t.band_pct(k), 30);
  k.duration = BandDuration::kLong;
  EXPECT_FLOAT_EQ(t.band_pct(k), 12.5);
}

TEST_F(ErrorBandFile, ErrorsNameTheField) {
  struct Case {
    std::string text, field;
  };
  const Case cases[] = {
      {R"({"schema":"pm2lat.devices","version":1})", "schema"},
      {table(R"({"family":"gemm","model":"*","flags":"*","scope":"*","basis":"*","n":3})"),
       "groups[0].band_pct"},
      {table(R"({"family":"gemmm","model":"*","flags":"*","scope":"*","basis":"*",
                 "band_pct":1,"n":3})"),
       "groups[0].family"},
      {table(std::string(kAllGroup) +
             R"(,{"family":"*","model":"*","flags":"slow","scope":"*","basis":"*",
                  "band_pct":1,"n":3})"),
       "groups[1].flags"},
      {table(R"({"family":"*","model":"*","flags":"*","scope":"*","basis":"*",
                 "band_pct":-1,"n":3})"),
       "groups[0].band_pct"},
      {table(R"({"family":"*","model":"*","flags":"*","scope":"*","basis":"*",
                 "duration":"brief","band_pct":1,"n":3})"),
       "groups[0].duration"},
      {table(kAllGroup, R"(["none","no_shape"])"), "flag_groups"},
      {table(kAllGroup, R"(["none","no_shape","anchored","shape_rejected","fallback","clamped",
          "extrapolated","spec_scaled","dtype_substituted","communication"])"),
       "flag_groups[1]"},
      // The fallback levels: present, known fields, each once, the last pooling everything.
      {R"({"schema":"pm2lat.error_bands","version":2,"quantile":0.8,"flag_groups":)" +
           std::string(kFlagGroups) + R"(,"groups":[]})",
       "levels"},
      {table(kAllGroup, kFlagGroups, "[]"), "levels"},
      {table(kAllGroup, kFlagGroups, R"([["family","gpu"],[]])"), "levels[0][1]"},
      {table(kAllGroup, kFlagGroups, R"([["scope","basis","scope"],[]])"), "levels[0][2]"},
      {table(kAllGroup, kFlagGroups, R"([["family","model"],["scope"]])"), "levels[1]"},
      {table(kAllGroup, kFlagGroups, R"([["family",3],[]])"), "levels[0][1]"},
      // A table of the version before the levels were in the file.
      {R"({"schema":"pm2lat.error_bands","version":1,"quantile":0.8,"flag_groups":)" +
           std::string(kFlagGroups) + R"(,"groups":[]})",
       "version"},
  };
  for (const Case& c : cases) {
    try {
      (void)ErrorBandTable::load(write(c.text));
      ADD_FAILURE() << "no error for " << c.text;
    } catch (const ProfileError& e) {
      EXPECT_EQ(e.field(), c.field) << e.what();
    }
  }
  EXPECT_THROW((void)ErrorBandTable::load(dir_ / "absent.json"), ProfileError);
}

// The order of the fallback is the file's: the same groups under two orders answer a GEMM
// kernel from its family's group or from its scope's, whichever level comes first.
TEST_F(ErrorBandFile, TheTablesLevelsSetTheFallbackOrder) {
  const std::string groups =
      std::string(kAllGroup) +
      R"(,{"family":"gemm","model":"*","flags":"*","scope":"*","basis":"*","band_pct":20,"n":40},
          {"family":"*","model":"*","flags":"*","scope":"same_gpu","basis":"*","band_pct":30,
           "n":40})";
  const BandKey gemm{KernelFamily::kGemm, ModelKind::kGemmWave, BandFlagGroup::kNone,
                     BandScope::kSameGpu, TimeBasis::kKernel};
  const ErrorBandTable family_first =
      ErrorBandTable::load(write(table(groups, kFlagGroups, R"([["family"],["scope"],[]])")));
  EXPECT_FLOAT_EQ(family_first.band_pct(gemm), 20);
  EXPECT_EQ(family_first.level(gemm), 0u);
  const ErrorBandTable scope_first =
      ErrorBandTable::load(write(table(groups, kFlagGroups, R"([["scope"],["family"],[]])")));
  EXPECT_FLOAT_EQ(scope_first.band_pct(gemm), 30);
  EXPECT_EQ(scope_first.levels().size(), 3u);
  // A key of no group but the last level's: every field pooled.
  const BandKey copy_elsewhere{KernelFamily::kCopy, ModelKind::kMemoryBound, BandFlagGroup::kNone,
                               BandScope::kCrossGpu, TimeBasis::kKernel};
  EXPECT_FLOAT_EQ(scope_first.band_pct(copy_elsewhere), 80);
  EXPECT_EQ(scope_first.level(copy_elsewhere), 2u);
}

// scripts/build-error-bands.py estimates the table the predictor loads: made-up predictions
// (band rows as `pm2lat eval kernels --band-rows` writes them), each duration's group its own
// quantile; a duration with too few predictions takes the coarser groups of that duration
// first, then its own group's pool of both.
TEST_F(ErrorBandFile, TheScriptsTableGivesEachDurationItsOwnQuantile) {
  const auto rows = dir_ / "rows.csv";
  {
    std::ofstream out(rows);
    out << "shape,family,model,flags,scope,basis,measured_us,predicted_us,band_pct\n";
    // GEMMs: 40 short predictions erring 1..40 %, 40 long ones 0.5..20 %.
    for (int i = 1; i <= 40; ++i) {
      out << "a,gemm,gemm_wave,none,same_gpu,call,5," << 5 * (1 + i / 100.0) << ",\n";
      out << "b,gemm,gemm_wave,none,same_gpu,call,100," << 100 * (1 + i / 200.0) << ",\n";
    }
    // Copies: 10 short ones erring 50 % (too few for a group) and 30 long ones erring 10 %,
    // unflagged; the same again flagged `clamped`, a flag group nothing else has.
    for (const char* flags : {"none", "clamped"}) {
      for (int i = 0; i < 10; ++i)
        out << "c,copy,memory_bound," << flags << ",same_gpu,call,2,3,\n";
      for (int i = 0; i < 30; ++i)
        out << "d,copy,memory_bound," << flags << ",same_gpu,call,200,220,\n";
    }
  }
  const auto table = dir_ / kErrorBandsFile;
  const std::string command = "python3 " + std::string(PM2LAT_BAND_SCRIPT) + " --out " +
                              table.string() + " --rows " + rows.string() + " > /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const ErrorBandTable t = ErrorBandTable::load(table);
  // The 80th percentile, nearest rank: the 32nd of 40.
  BandKey gemm{KernelFamily::kGemm, ModelKind::kGemmWave, BandFlagGroup::kNone,
               BandScope::kSameGpu, TimeBasis::kCall,     BandDuration::kShort};
  EXPECT_NEAR(t.band_pct(gemm), 32, 0.01);
  EXPECT_EQ(t.level(gemm), 0u);
  gemm.duration = BandDuration::kLong;
  EXPECT_NEAR(t.band_pct(gemm), 16, 0.01);
  EXPECT_EQ(t.level(gemm), 0u);
  BandKey copy{KernelFamily::kCopy, ModelKind::kMemoryBound, BandFlagGroup::kNone,
               BandScope::kSameGpu, TimeBasis::kCall,        BandDuration::kLong};
  EXPECT_NEAR(t.band_pct(copy), 10, 0.01);
  // Short unflagged copies: every short unflagged prediction (40 GEMMs, 10 copies).
  copy.duration = BandDuration::kShort;
  EXPECT_NEAR(t.band_pct(copy), 40, 0.01);
  EXPECT_EQ(t.level(copy), 3u);
  // Short clamped copies: no short clamped group at all, so the clamped copies of both.
  copy.flags = BandFlagGroup::kClamped;
  EXPECT_NEAR(t.band_pct(copy), 50, 0.01);
  EXPECT_EQ(t.level(copy), 4u);
}

TEST_F(ErrorBandFile, PredictionsCarryTheBandOfTheDirectorysTable) {
  std::filesystem::copy_file(std::filesystem::path(PM2LAT_PROFILE_DIR) / "devices.json",
                             dir_ / "devices.json");
  KernelRecord r;
  r.launch.name = "some_unnamed_kernel";
  r.launch.grid = {108, 1, 1};
  r.launch.block = {256, 1, 1};
  const KernelClass cls = classify_kernel(r.launch.name);
  {
    // No table beside the profiles: no band.
    Predictor p = Predictor::from_directory(dir_);
    const Prediction pred = p.predict(r, cls, p.add_target("A100-SXM"));
    EXPECT_GT(pred.us, 0);
    EXPECT_TRUE(std::isnan(pred.band_pct));
  }
  write(table(std::string(kAllGroup) +
              R"(,{"family":"*","model":"*","flags":"*","scope":"cross_gpu","basis":"*",
                   "band_pct":150,"n":40})"));
  Predictor p = Predictor::from_directory(dir_);  // the table is not read as a profile
  const TargetId a100 = p.add_target("A100-SXM");
  PredictOptions same;
  same.source_device = "A100-SXM";
  EXPECT_DOUBLE_EQ(p.predict(r, cls, a100, same).band_pct, 80);
  PredictOptions other;
  other.source_device = "H100-SXM";
  EXPECT_DOUBLE_EQ(p.predict(r, cls, a100, other).band_pct, 150);
}

}  // namespace
}  // namespace pm2lat
