// Reading measurement tables: CSV, plain or gzip-compressed, RFC 4180 quoting.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pm2lat::calibrate {

class TableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CsvTable {
 public:
  // Reads the whole file (.csv or .csv.gz, detected by content). Throws TableError naming
  // the file and line for unreadable files, unterminated quotes or ragged rows.
  static CsvTable read(const std::filesystem::path& file);
  static CsvTable parse(std::string_view text, const std::string& source);

  const std::vector<std::string>& header() const noexcept { return header_; }
  std::size_t rows() const noexcept { return rows_.size(); }
  const std::vector<std::string>& row(std::size_t i) const { return rows_.at(i); }
  const std::string& source() const noexcept { return source_; }

  // Column index by name, or nullopt.
  std::optional<std::size_t> column(std::string_view name) const noexcept;
  // Column index by name; throws TableError listing the missing column.
  std::size_t require(std::string_view name) const;

 private:
  std::string source_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Reads a whole file, gunzipping it when it is gzip data.
std::string read_maybe_gzipped(const std::filesystem::path& file);

// Field conversions that accept the formats the tables use ("96.0" for an integer column,
// empty = missing).
std::optional<double> to_double(std::string_view s) noexcept;
std::optional<long long> to_int(std::string_view s) noexcept;

}  // namespace pm2lat::calibrate

namespace pm2lat::calibrate {

// Writes rows as CSV (quoting fields that need it); gzip-compressed when `file` ends in .gz.
void write_csv(const std::filesystem::path& file, const std::vector<std::string>& header,
               const std::vector<const std::vector<std::string>*>& rows);

}  // namespace pm2lat::calibrate
