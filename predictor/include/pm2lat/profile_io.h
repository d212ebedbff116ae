// Reading and writing device profiles (versioned JSON). Every malformed input gives one
// ProfileError that names the file and the field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "pm2lat/profile.h"

namespace pm2lat {

Profile load_profile(const std::filesystem::path& file);
// Parses profile JSON text; `file` only names the source in errors.
Profile parse_profile(const std::string& text, const std::string& file);

// The calibration point tables of a profile. Points are most of a profile's size and a model
// needs them only while it builds its indexes: a profile may be loaded without them and each
// table read when its model is built (Predictor::from_directory), so that the tables of
// every profile are never all held at once.
enum class PointTable : std::uint8_t { kGemm, kVector, kAttention, kConv, kScaledGemm, kFamily };

// Profile::points_in_file bit of `table`.
constexpr std::uint8_t point_table_bit(PointTable table) noexcept {
  return static_cast<std::uint8_t>(1u << static_cast<unsigned>(table));
}

// The profile without its point tables (fits, configurations, overheads, provenance), every
// field checked as load_profile checks it; the tables the file holds are noted in
// Profile::points_in_file, for load_points.
Profile load_profile_without_points(const std::filesystem::path& file);
// Parses profile JSON text as load_profile_without_points reads a file.
Profile parse_profile_without_points(const std::string& text, const std::string& file);
// Reads `table` into a profile loaded without points, from its file (Profile::file), checked
// as load_profile checks it. Does nothing when the file has no such table or it is read.
void load_points(Profile& profile, PointTable table);
std::string serialize_profile(const Profile& profile);
void save_profile(const Profile& profile, const std::filesystem::path& file);

// Every *.json in `dir` except the device catalogue, sorted by file name.
std::vector<Profile> load_profiles(const std::filesystem::path& dir);
// The same profiles, each loaded without points (load_profile_without_points).
std::vector<Profile> load_profiles_without_points(const std::filesystem::path& dir);

}  // namespace pm2lat
