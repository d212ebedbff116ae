#include "scratch_directory.h"

#include <unistd.h>

namespace pm2lat::calibrate::run::test {
namespace {

namespace fs = std::filesystem;

struct ProcessDirectory {
  fs::path path;
  ProcessDirectory()
      : path(fs::temp_directory_path() /
             ("pm2lat-calibrate-run-test-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ProcessDirectory() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const fs::path& directory() {
  static ProcessDirectory d;
  return d.path;
}

}  // namespace

fs::path scratch_file(const std::string& name) {
  const fs::path f = directory() / name;
  fs::remove_all(f);
  return f;
}

fs::path scratch_subdirectory(const std::string& name) {
  const fs::path d = scratch_file(name);
  fs::create_directories(d);
  return d;
}

}  // namespace pm2lat::calibrate::run::test
