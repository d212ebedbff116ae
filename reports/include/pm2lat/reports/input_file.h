// Reading the files users hand to pm2lat: plain or gzip-compressed (detected by content, not
// by name), with progress for big inputs and one clear error for unreadable ones.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace pm2lat::reports {

class ProgressBar;

// A user input that cannot be used: the message names the file and says what is wrong.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The whole content of `file`, decompressed when it is gzip data. Throws InputError for a
// missing, unreadable, empty, truncated or corrupt file.
std::string read_input_file(const std::filesystem::path& file, ProgressBar* progress = nullptr);

}  // namespace pm2lat::reports
