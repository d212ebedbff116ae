// Where values sit in JSON text, found by following its strings and brackets only: no
// number, literal or syntax is checked. Loading a profile without its point tables, or one
// table at a time, hands the JSON parser only the text it needs (the tables are most of a
// profile's bytes and most of its parse time). For text that parses, the ranges are exact;
// a caller whose cut text does not parse parses the whole text instead, so that every error
// is reported as a whole load reports it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pm2lat::json_scan {

// A member of an object: `key_begin` is its opening quote, [value_begin, value_end) its value.
struct Member {
  std::string_view key;  // as written between the quotes (escapes not decoded)
  std::size_t key_begin = 0;
  std::size_t value_begin = 0;
  std::size_t value_end = 0;
};

// The members of the top-level object of `t`; empty when it does not start as one.
std::vector<Member> top_level_members(std::string_view t);
// The members of the object starting at `i` in `t`; empty when it is not an object.
std::vector<Member> object_members(std::string_view t, std::size_t i);

// `text` without the given members (each with the comma that separates it from a neighbour).
// Members must come from one object, in text order.
std::string without_members(std::string_view text, const std::vector<Member>& members);

}  // namespace pm2lat::json_scan
