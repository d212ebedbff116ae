#include "launch_path/string_table.h"

#include <gtest/gtest.h>

namespace pm2lat::shim {
namespace {

TEST(StringTable, InterningIsIdempotentAndLookupsReturnTheString) {
  StringTable t;
  const auto a = t.intern("ampere_sgemm_128x64_tn");
  const auto b = t.intern("splitKreduce_kernel");
  EXPECT_NE(a, b);
  EXPECT_EQ(t.intern("ampere_sgemm_128x64_tn"), a);
  EXPECT_EQ(t.get(a), "ampere_sgemm_128x64_tn");
  EXPECT_EQ(t.get(b), "splitKreduce_kernel");
  EXPECT_EQ(t.get(StringTable::kUnknown), "");
  EXPECT_EQ(t.get(12345), "");  // never handed out
}

TEST(StringTable, LongNamesSurviveAndStorageIsBounded) {
  StringTable t(4096);
  const std::string long_name(3000, 'x');
  const auto id = t.intern(long_name);
  EXPECT_EQ(t.get(id), long_name);
  EXPECT_EQ(t.intern(std::string(3000, 'y')), StringTable::kFull);
  EXPECT_EQ(t.get(StringTable::kFull), "<name table full>");
  EXPECT_EQ(t.intern(long_name), id);  // known names still resolve
}

}  // namespace
}  // namespace pm2lat::shim
