#include <gtest/gtest.h>

#include "pm2lat/reports/input_file.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

TEST(InputFile, ReadsPlainAndGzipFilesAlike) {
  const auto dir = test::scratch_dir("input");
  const std::string text = std::string(300000, 'x') + "end";
  test::write_text(dir / "a.json", text);
  test::write_gzip(dir / "b.json.gz", text);
  test::write_gzip(dir / "gzip-without-suffix", text);
  EXPECT_EQ(read_input_file(dir / "a.json"), text);
  EXPECT_EQ(read_input_file(dir / "b.json.gz"), text);
  EXPECT_EQ(read_input_file(dir / "gzip-without-suffix"), text);
}

TEST(InputFile, TruncatedGzipIsOneClearError) {
  const auto dir = test::scratch_dir("input");
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "{\"event\": " + std::to_string(i * 7919 % 1000) + "},";
  test::write_gzip(dir / "full.gz", text);
  const std::string gz = test::read_text(dir / "full.gz");
  test::write_text(dir / "cut.gz", gz.substr(0, gz.size() / 2));
  try {
    read_input_file(dir / "cut.gz");
    FAIL() << "a truncated gzip file was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.gz"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
}

TEST(InputFile, MissingEmptyAndDirectoryInputsAreRefused) {
  const auto dir = test::scratch_dir("input");
  test::write_text(dir / "empty.json", "");
  EXPECT_THROW(read_input_file(dir / "none.json"), InputError);
  EXPECT_THROW(read_input_file(dir / "empty.json"), InputError);
  EXPECT_THROW(read_input_file(dir), InputError);
}

}  // namespace
}  // namespace pm2lat::reports
