#include "pm2lat/profile_error.h"

namespace pm2lat {

ProfileError::ProfileError(std::string file, std::string field, const std::string& what)
    : std::runtime_error(file + ": " + (field.empty() ? std::string() : "field '" + field + "': ") +
                         what),
      file_(std::move(file)),
      field_(std::move(field)) {}

}  // namespace pm2lat
