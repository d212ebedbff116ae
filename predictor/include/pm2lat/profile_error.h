// The one error type for unreadable profiles and catalogues: it names the file and the field.
#pragma once

#include <stdexcept>
#include <string>

namespace pm2lat {

class ProfileError : public std::runtime_error {
 public:
  ProfileError(std::string file, std::string field, const std::string& what);
  const std::string& file() const noexcept { return file_; }
  const std::string& field() const noexcept { return field_; }

 private:
  std::string file_;
  std::string field_;
};

}  // namespace pm2lat
