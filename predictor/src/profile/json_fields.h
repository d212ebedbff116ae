// Typed access to JSON fields that reports the file and the dotted field path on error.
// Shared by the profile and device-catalogue readers.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "pm2lat/profile_error.h"

namespace pm2lat::json_fields {

using nlohmann::json;

class Reader {
 public:
  Reader(const json& j, std::string file, std::string path)
      : j_(j),
        file_(std::make_shared<const std::string>(std::move(file))),
        path_(std::make_shared<const std::string>(std::move(path))) {}

  const json& value() const { return j_; }
  // The dotted field path ("gemm.points.m[12]"); built only when needed (errors), so that
  // reading large point tables costs no string work per element.
  std::string path() const {
    return index_ == kNoIndex ? *path_ : *path_ + "[" + std::to_string(index_) + "]";
  }
  const std::string& file() const { return *file_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw ProfileError(*file_, path(), what);
  }

  bool has(const char* key) const { return j_.is_object() && j_.contains(key); }

  Reader child(const char* key) const {
    if (!j_.is_object()) fail("expected an object");
    auto it = j_.find(key);
    const std::string base = path();
    std::string p = base.empty() ? key : base + "." + key;
    if (it == j_.end()) throw ProfileError(*file_, p, "missing");
    return Reader(*it, file_, std::make_shared<const std::string>(std::move(p)), kNoIndex);
  }
  Reader at(std::size_t i) const {
    if (index_ != kNoIndex) {  // nested arrays: fold this level into the path
      return Reader(j_.at(i), file_, std::make_shared<const std::string>(path()), i);
    }
    return Reader(j_.at(i), file_, path_, i);
  }

  const json& array() const {
    if (!j_.is_array()) fail("expected an array");
    return j_;
  }
  std::size_t size() const { return array().size(); }

  double number() const {
    if (!j_.is_number()) fail("expected a number");
    const double v = j_.get<double>();
    if (!std::isfinite(v)) fail("not a finite number");
    return v;
  }
  double non_negative() const {
    const double v = number();
    if (v < 0) fail("must not be negative");
    return v;
  }
  std::int64_t integer() const {
    if (!j_.is_number_integer()) fail("expected an integer");
    return j_.get<std::int64_t>();
  }
  std::int64_t positive_integer() const {
    const auto v = integer();
    if (v <= 0) fail("must be positive");
    return v;
  }
  std::string string() const {
    if (!j_.is_string()) fail("expected a string");
    return j_.get<std::string>();
  }
  bool boolean() const {
    if (!j_.is_boolean()) fail("expected true or false");
    return j_.get<bool>();
  }

  double number(const char* key, double fallback) const {
    return has(key) ? child(key).number() : fallback;
  }
  std::int64_t integer(const char* key, std::int64_t fallback) const {
    return has(key) ? child(key).integer() : fallback;
  }
  std::string string(const char* key, const std::string& fallback) const {
    return has(key) ? child(key).string() : fallback;
  }
  bool boolean(const char* key, bool fallback) const {
    return has(key) ? child(key).boolean() : fallback;
  }

 private:
  static constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);
  Reader(const json& j, std::shared_ptr<const std::string> file,
         std::shared_ptr<const std::string> path, std::size_t index)
      : j_(j), file_(std::move(file)), path_(std::move(path)), index_(index) {}

  const json& j_;
  std::shared_ptr<const std::string> file_;
  std::shared_ptr<const std::string> path_;  // path of this value, or of its array
  std::size_t index_ = kNoIndex;             // index in that array, if an element
};

// Parses text as JSON, turning syntax errors into a ProfileError at the root. `filter`, when
// given, is nlohmann's parser callback: values it declines are not stored.
inline json parse_text(std::string_view text, const std::string& file,
                       const json::parser_callback_t& filter = nullptr) {
  try {
    return json::parse(text.begin(), text.end(), filter);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number no double holds ("9E999999").
    throw ProfileError(file, "", std::string("not valid JSON: ") + e.what());
  }
}

// Reads and parses a JSON file: a file that cannot be opened or is not JSON is one
// ProfileError naming it.
inline json parse_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ProfileError(file.string(), "", "cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_text(text.str(), file.string());
}

// Reads the column `key` of a column-wise point table, checking its length against `n`;
// `set(i, value)` takes each entry.
template <typename F>
void read_column(const Reader& table, const char* key, std::size_t n, F&& set) {
  const Reader col = table.child(key);
  if (col.size() != n) {
    col.fail("has " + std::to_string(col.size()) + " entries, expected " + std::to_string(n));
  }
  for (std::size_t i = 0; i < n; ++i) set(i, col.at(i));
}

// Checks {"schema": expected_schema, "version": expected_version}.
inline void check_schema(const Reader& root, const char* expected_schema, int expected_version) {
  if (!root.value().is_object()) root.fail("expected a JSON object at the top level");
  const std::string schema = root.child("schema").string();
  if (schema != expected_schema) {
    root.child("schema").fail("is '" + schema + "', expected '" + expected_schema + "'");
  }
  const auto version = root.child("version").integer();
  if (version != expected_version) {
    root.child("version").fail("is " + std::to_string(version) + ", this build reads version " +
                               std::to_string(expected_version));
  }
}

}  // namespace pm2lat::json_fields
