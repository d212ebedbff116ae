// Task results as one line of JSON each (the journal's lines). Doubles are written with
// enough digits to read back exactly.
#pragma once

#include <string>

#include "pm2lat/calibrate/run/measurement.h"

namespace pm2lat::calibrate::run {

std::string to_json_line(const TaskResult& result);  // no trailing newline
// Throws std::invalid_argument on malformed text.
TaskResult task_result_from_json(const std::string& line);

}  // namespace pm2lat::calibrate::run
