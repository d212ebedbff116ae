// Reading and writing device profiles (versioned JSON). Every malformed input gives one
// ProfileError that names the file and the field.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "pm2lat/profile.h"

namespace pm2lat {

Profile load_profile(const std::filesystem::path& file);
// Parses profile JSON text; `file` only names the source in errors.
Profile parse_profile(const std::string& text, const std::string& file);
std::string serialize_profile(const Profile& profile);
void save_profile(const Profile& profile, const std::filesystem::path& file);

// Every *.json in `dir` except the device catalogue, sorted by file name.
std::vector<Profile> load_profiles(const std::filesystem::path& dir);

}  // namespace pm2lat
