#include "pm2lat/text.h"

namespace pm2lat {

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

std::vector<std::string> split_list(std::string_view text, char separator) {
  constexpr std::string_view kBlanks = " \t";
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(start, end - start);
    const std::size_t first = item.find_first_not_of(kBlanks);
    if (first != std::string_view::npos) {
      item = item.substr(first, item.find_last_not_of(kBlanks) - first + 1);
      items.emplace_back(item);
    }
    start = end + 1;
  }
  return items;
}

std::string join_list(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (&item != &items.front()) out += separator;
    out += item;
  }
  return out;
}

}  // namespace pm2lat
