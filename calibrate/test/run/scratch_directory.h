// Files the tests write go to a directory of this test process's own, removed with
// everything in it when the process ends.
#pragma once

#include <filesystem>
#include <string>

namespace pm2lat::calibrate::run::test {

// A path for `name` in the process's directory, with no file there yet.
std::filesystem::path scratch_file(const std::string& name);
// A fresh, empty subdirectory.
std::filesystem::path scratch_subdirectory(const std::string& name);

}  // namespace pm2lat::calibrate::run::test
