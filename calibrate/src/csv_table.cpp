#include "pm2lat/calibrate/csv_table.h"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>

namespace pm2lat::calibrate {

std::string read_maybe_gzipped(const std::filesystem::path& file) {
  // gzread reads plain files unchanged, so one path serves .csv and .csv.gz.
  gzFile f = gzopen(file.c_str(), "rb");
  if (f == nullptr) {
    throw TableError(file.string() + ": cannot be opened: " + std::strerror(errno));
  }
  std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(f, gzclose);
  std::string out;
  std::vector<char> buf(1 << 20);
  for (;;) {
    const int n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int err = 0;
      const char* msg = gzerror(f, &err);
      throw TableError(file.string() + ": read failed: " + (msg ? msg : "unknown error"));
    }
    if (n == 0) break;
    out.append(buf.data(), static_cast<std::size_t>(n));
  }
  return out;
}

CsvTable CsvTable::read(const std::filesystem::path& file) {
  return parse(read_maybe_gzipped(file), file.string());
}

CsvTable CsvTable::parse(std::string_view text, const std::string& source) {
  CsvTable t;
  t.source_ = source;
  std::vector<std::string> fields;
  std::string field;
  bool in_quotes = false;
  bool any = false;
  std::size_t line = 1;
  std::size_t record_line = 1;
  auto end_record = [&]() {
    fields.push_back(std::move(field));
    field.clear();
    const bool blank = fields.size() == 1 && fields[0].empty();
    if (!blank) {
      if (t.header_.empty()) {
        t.header_ = std::move(fields);
        if (!t.header_.empty() && t.header_[0].rfind("\xEF\xBB\xBF", 0) == 0)
          t.header_[0].erase(0, 3);  // UTF-8 byte-order mark
      } else {
        if (fields.size() != t.header_.size()) {
          throw TableError(source + ":" + std::to_string(record_line) + ": " +
                           std::to_string(fields.size()) + " fields, the header has " +
                           std::to_string(t.header_.size()));
        }
        t.rows_.push_back(std::move(fields));
      }
    }
    fields.clear();
    any = false;
    record_line = line;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field.push_back(c);
      }
      continue;
    }
    switch (c) {
      case '"':
        in_quotes = true;
        any = true;
        break;
      case ',':
        fields.push_back(std::move(field));
        field.clear();
        any = true;
        break;
      case '\r': break;
      case '\n':
        ++line;
        end_record();
        break;
      default: field.push_back(c); any = true;
    }
  }
  if (in_quotes)
    throw TableError(source + ":" + std::to_string(record_line) + ": unterminated quoted field");
  if (any || !field.empty() || !fields.empty()) end_record();
  if (t.header_.empty()) throw TableError(source + ": empty table (no header)");
  return t;
}

std::optional<std::size_t> CsvTable::column(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  return std::nullopt;
}

std::size_t CsvTable::require(std::string_view name) const {
  if (auto c = column(name)) return *c;
  throw TableError(source_ + ": missing column '" + std::string(name) + "'");
}

std::optional<double> to_double(std::string_view s) noexcept {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<long long> to_int(std::string_view s) noexcept {
  const auto d = to_double(s);
  if (!d || std::floor(*d) != *d || std::fabs(*d) > 9.0e15) return std::nullopt;
  return static_cast<long long>(*d);
}

}  // namespace pm2lat::calibrate

namespace pm2lat::calibrate {
namespace {

void append_field(std::string& out, const std::string& f) {
  if (f.find_first_of(",\"\n\r") == std::string::npos) {
    out += f;
    return;
  }
  out += '"';
  for (char c : f) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void append_row(std::string& out, const std::vector<std::string>& row) {
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i) out += ',';
    append_field(out, row[i]);
  }
  out += '\n';
}

}  // namespace

void write_csv(const std::filesystem::path& file, const std::vector<std::string>& header,
               const std::vector<const std::vector<std::string>*>& rows) {
  std::string text;
  append_row(text, header);
  for (const auto* r : rows) append_row(text, *r);
  const bool gz = file.extension() == ".gz";
  gzFile f = gzopen(file.c_str(), gz ? "wb6" : "wbT");
  if (f == nullptr)
    throw TableError(file.string() + ": cannot be written: " + std::strerror(errno));
  std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(f, gzclose);
  std::size_t off = 0;
  while (off < text.size()) {
    const auto chunk = static_cast<unsigned>(std::min<std::size_t>(text.size() - off, 1u << 20));
    if (gzwrite(f, text.data() + off, chunk) != static_cast<int>(chunk))
      throw TableError(file.string() + ": write failed");
    off += chunk;
  }
}

}  // namespace pm2lat::calibrate
