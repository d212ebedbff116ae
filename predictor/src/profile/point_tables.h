// The calibration point tables of a profile's sections, read column-wise (one array per
// field) into a profile whose fits and configurations are read already: with the rest of the
// profile (parse_profile), or one table at a time later (load_points), so that a predictor
// never holds every table of every profile at once.
#pragma once

#include "pm2lat/profile.h"
#include "pm2lat/profile_io.h"
#include "profile/json_fields.h"

namespace pm2lat::point_tables {

// The profile section (top-level key) holding `table`'s points under "points".
const char* section_of(PointTable table) noexcept;

// Reads `table`'s points from `section` (the JSON of section_of(table)) into `profile`,
// checking each entry against the section's fits or configurations.
void read(const json_fields::Reader& section, PointTable table, Profile& profile);

}  // namespace pm2lat::point_tables
