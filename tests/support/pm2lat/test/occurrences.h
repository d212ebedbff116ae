// How many times a string occurs in a text (overlapping occurrences counted): what the report
// and runtime tests count in printed tables, HTML and records files. Shared by the runtime's
// integration tests and the reports tests.
#pragma once

#include <cstddef>
#include <string>

namespace pm2lat::test {

inline std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace pm2lat::test
