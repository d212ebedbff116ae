// Small string helpers shared by the kernel-name decoders (no regex: classification runs
// once per distinct kernel, but replay classifies millions of trace events).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pm2lat {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

inline bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Splits on '_' (empty tokens kept out).
inline std::vector<std::string_view> split_underscore(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '_') {
      if (i > start) out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// Parses a non-negative decimal integer that is the whole of `s` (bounded to int32).
inline std::optional<std::int32_t> parse_int(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  std::int32_t v = 0;
  for (char c : s) {
    if (!is_digit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// "128x64" -> {128, 64}; "128x128x8" -> {128, 128, 8}. All parts must be integers.
inline std::vector<std::int32_t> parse_dims(std::string_view s) {
  std::vector<std::int32_t> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == 'x') {
      auto v = parse_int(s.substr(start, i - start));
      if (!v) return {};
      out.push_back(*v);
      start = i + 1;
    }
  }
  return out.size() >= 2 ? out : std::vector<std::int32_t>{};
}

// The integer right after `key` in `s` ("stage3" with key "stage" -> 3).
inline std::optional<std::int32_t> int_after(std::string_view s, std::string_view key) {
  const std::size_t p = s.find(key);
  if (p == std::string_view::npos) return std::nullopt;
  std::size_t e = p + key.size();
  std::size_t b = e;
  while (e < s.size() && is_digit(s[e])) ++e;
  return parse_int(s.substr(b, e - b));
}

// The dims right after `key` ("tilesize128x64x8_..." with key "tilesize" -> {128,64,8}).
inline std::vector<std::int32_t> dims_after(std::string_view s, std::string_view key) {
  const std::size_t p = s.find(key);
  if (p == std::string_view::npos) return {};
  std::size_t e = p + key.size();
  const std::size_t b = e;
  while (e < s.size() && (is_digit(s[e]) || s[e] == 'x')) ++e;
  std::string_view d = s.substr(b, e - b);
  while (!d.empty() && d.back() == 'x') d.remove_suffix(1);
  return parse_dims(d);
}

// Template argument list of the first template in `s` split at depth 1 commas:
// "f<4, g<1,2>, float>" -> {"4", "g<1,2>", "float"}.
inline std::vector<std::string_view> template_args(std::string_view s) {
  std::vector<std::string_view> out;
  const std::size_t lt = s.find('<');
  if (lt == std::string_view::npos) return out;
  int depth = 0;
  std::size_t start = lt + 1;
  for (std::size_t i = lt; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(') {
      ++depth;
    } else if (c == '>' || c == ')') {
      --depth;
      if (depth == 0) {
        out.push_back(trim(s.substr(start, i - start)));
        return out;
      }
    } else if (c == ',' && depth == 1) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;  // unbalanced: what was found so far
}

// Function name part before any template argument list ("a::b<...>" -> "a::b").
inline std::string_view base_name(std::string_view s) {
  const std::size_t lt = s.find('<');
  return lt == std::string_view::npos ? s : s.substr(0, lt);
}

}  // namespace pm2lat
