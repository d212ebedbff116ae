// The shared text helpers and the shared hash.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "pm2lat/hash.h"
#include "pm2lat/text.h"

namespace pm2lat {
namespace {

TEST(SplitList, TrimsBlanksAndDropsEmptyItems) {
  EXPECT_EQ(split_list("H100, A100,,\tl4 "), (std::vector<std::string>{"H100", "A100", "l4"}));
  EXPECT_EQ(split_list("a;b c ;", ';'), (std::vector<std::string>{"a", "b c"}));
  EXPECT_TRUE(split_list("").empty());
  EXPECT_TRUE(split_list(" , ,").empty());
  EXPECT_EQ(split_list("single"), (std::vector<std::string>{"single"}));
}

TEST(JoinList, PutsTheSeparatorBetweenItemsOnly) {
  EXPECT_EQ(join_list({"H100-SXM", "A100-SXM"}), "H100-SXM, A100-SXM");
  EXPECT_EQ(join_list({"only"}), "only");
  EXPECT_EQ(join_list({}), "");
  EXPECT_EQ(join_list({"a", "", "b"}, ";"), "a;;b");
  EXPECT_EQ(split_list(join_list({"H100", "A100"})), (std::vector<std::string>{"H100", "A100"}));
}

TEST(AsciiLower, ChangesOnlyAsciiCapitals) {
  EXPECT_EQ(ascii_lower("NVIDIA H100 80GB_Hbm3-x"), "nvidia h100 80gb_hbm3-x");
  EXPECT_EQ(ascii_lower("\xC3\x84"), "\xC3\x84");  // UTF-8 bytes stay as they are
  static_assert(ascii_lower('Z') == 'z' && ascii_lower('[') == '[' && ascii_lower('@') == '@');
}

TEST(Fnv1a, FollowsTheFnvStepsFromTheProjectsBasis) {
  EXPECT_EQ(fnv1a(""), kFnvOffsetBasis);
  EXPECT_EQ(fnv1a("a"), (kFnvOffsetBasis ^ 0x61U) * kFnvPrime);
  // Continuing a hash is hashing the concatenation.
  EXPECT_EQ(fnv1a("kernel", fnv1a("gemm_")), fnv1a("gemm_kernel"));
  const std::uint32_t v = 0x01020304U;
  unsigned char bytes[sizeof v];
  std::memcpy(bytes, &v, sizeof v);
  EXPECT_EQ(fnv1a_value(v, kFnvOffsetBasis), fnv1a(bytes, sizeof v));
  EXPECT_NE(fnv1a("ab"), fnv1a("ba"));
}

}  // namespace
}  // namespace pm2lat
