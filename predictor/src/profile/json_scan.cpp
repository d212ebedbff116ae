#include "profile/json_scan.h"

#include <utility>

namespace pm2lat::json_scan {
namespace {

constexpr std::size_t kNotFound = std::string_view::npos;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t skip_space(std::string_view t, std::size_t i) {
  while (i < t.size() && is_space(t[i])) ++i;
  return i;
}

// `i` at an opening quote: the index after the closing one.
std::size_t skip_string(std::string_view t, std::size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\') {
      ++i;
    } else if (t[i] == '"') {
      return i + 1;
    }
  }
  return kNotFound;
}

// `i` at a value: the index after it.
std::size_t skip_value(std::string_view t, std::size_t i) {
  if (i >= t.size()) return kNotFound;
  if (t[i] == '"') return skip_string(t, i);
  if (t[i] != '{' && t[i] != '[') {
    while (i < t.size() && t[i] != ',' && t[i] != '}' && t[i] != ']' && !is_space(t[i])) ++i;
    return i;
  }
  int depth = 0;
  while (i < t.size()) {
    const char c = t[i];
    if (c == '"') {
      i = skip_string(t, i);
      if (i == kNotFound) return kNotFound;
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) return i + 1;
    ++i;
  }
  return kNotFound;
}

}  // namespace

std::vector<Member> object_members(std::string_view t, std::size_t i) {
  std::vector<Member> out;
  i = skip_space(t, i);
  if (i >= t.size() || t[i] != '{') return {};
  i = skip_space(t, i + 1);
  if (i < t.size() && t[i] == '}') return out;
  while (i < t.size()) {
    if (t[i] != '"') return {};
    Member m;
    m.key_begin = i;
    const std::size_t key_end = skip_string(t, i);
    if (key_end == kNotFound) return {};
    m.key = t.substr(i + 1, key_end - i - 2);
    i = skip_space(t, key_end);
    if (i >= t.size() || t[i] != ':') return {};
    m.value_begin = skip_space(t, i + 1);
    m.value_end = skip_value(t, m.value_begin);
    if (m.value_end == kNotFound || m.value_end == m.value_begin) return {};
    out.push_back(m);
    i = skip_space(t, m.value_end);
    if (i < t.size() && t[i] == '}') return out;
    if (i >= t.size() || t[i] != ',') return {};
    i = skip_space(t, i + 1);
  }
  return {};
}

std::vector<Member> top_level_members(std::string_view t) { return object_members(t, 0); }

std::string without_members(std::string_view t, const std::vector<Member>& members) {
  std::string out;
  std::size_t kept = 0;  // text before this is copied or dropped
  for (const Member& m : members) {
    std::size_t begin = m.key_begin;
    std::size_t end = m.value_end;
    if (const std::size_t after = skip_space(t, end); after < t.size() && t[after] == ',') {
      end = after + 1;  // the comma after it
    } else {
      std::size_t before = begin;
      while (before > kept && is_space(t[before - 1])) --before;
      if (before > kept && t[before - 1] == ',') begin = before - 1;  // the comma before it
    }
    out.append(t.substr(kept, begin - kept));
    kept = end;
  }
  out.append(t.substr(kept));
  return out;
}

}  // namespace pm2lat::json_scan
