// What every report says before its numbers: a title, a few facts and notes.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pm2lat::reports {

struct ReportHeading {
  std::string title;                                       // "trace x.json.gz", "run ./out"
  std::vector<std::pair<std::string, std::string>> facts;  // "GPU" -> "H100-SXM", ...
  std::vector<std::string> notes;                          // "note: ..."
};

}  // namespace pm2lat::reports
