// ASCII text helpers every layer shares: lower-casing (kernel, operator and GPU names are
// ASCII; a locale must not change how they compare), splitting the comma-separated lists
// users type (--targets H100, A100) and tables store, and writing such a list.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pm2lat {

// 'A'-'Z' to 'a'-'z'; every other byte unchanged.
constexpr char ascii_lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
std::string ascii_lower(std::string_view text);

// The items of a `separator`-separated list, each without surrounding blanks (spaces, tabs);
// empty items are dropped: "H100, A100,,l4" -> {"H100", "A100", "l4"}.
std::vector<std::string> split_list(std::string_view text, char separator = ',');

// The items as one list, `separator` between them: {"H100-SXM", "A100-SXM"} ->
// "H100-SXM, A100-SXM"; "" for none.
std::string join_list(const std::vector<std::string>& items, std::string_view separator = ", ");

}  // namespace pm2lat
