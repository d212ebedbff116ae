#include <gtest/gtest.h>

#include "pm2lat/calibrate/csv_table.h"

namespace pm2lat::calibrate {
namespace {

TEST(CsvTable, QuotedFieldsWithCommasAndNewlines) {
  const auto t = CsvTable::parse("a,b,c\n1,\"x, y\",3\n4,\"say \"\"hi\"\"\nthere\",6\n", "t.csv");
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.row(0)[1], "x, y");
  EXPECT_EQ(t.row(1)[1], "say \"hi\"\nthere");
  EXPECT_EQ(*t.column("c"), 2u);
  EXPECT_THROW(t.require("d"), TableError);
}

TEST(CsvTable, CrLfAndMissingFinalNewline) {
  const auto t = CsvTable::parse("a,b\r\n1,2\r\n3,4", "t.csv");
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.row(1)[1], "4");
}

TEST(CsvTable, RaggedRowsAndUnterminatedQuotesAreErrors) {
  try {
    CsvTable::parse("a,b\n1,2\n3\n", "bad.csv");
    FAIL();
  } catch (const TableError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(CsvTable::parse("a,b\n1,\"2\n", "bad.csv"), TableError);
  EXPECT_THROW(CsvTable::parse("", "empty.csv"), TableError);
}

TEST(CsvTable, NumberConversions) {
  EXPECT_EQ(to_int("96.0"), 96);
  EXPECT_FALSE(to_int("96.5"));
  EXPECT_FALSE(to_double(""));
  EXPECT_FALSE(to_double("nan"));
  EXPECT_DOUBLE_EQ(*to_double(" 2.5 "), 2.5);
}

}  // namespace
}  // namespace pm2lat::calibrate
