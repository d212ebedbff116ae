// Runs a test program under libpm2lat.so with the fake CUDA stack, in a scratch directory,
// and reads back what everyone wrote: the records file, the summary, the fake driver's
// ground-truth log, the program's output and exit status.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pm2lat::test {

struct RunResult {
  int exit_code = -1;  // valid when !signaled
  int signal = 0;      // the signal that killed it, 0 if it exited
  std::string out;     // stdout
  std::string err;     // stderr
  std::string dir;     // scratch directory with the files below
};

struct RunOptions {
  std::vector<std::string> argv;           // argv[0]: program path
  std::map<std::string, std::string> env;  // added to / overriding the defaults
  bool preload_shim = true;
  int timeout_s = 240;
  // Libraries are found only where the environment says (LD_LIBRARY_PATH, the system's own
  // directories), never through the loader's cache, which on a machine with the CUDA toolkit
  // installed lists NVIDIA's libraries: a test about where the runtime looks for a library
  // must not find the real one, which cannot run on the fake driver.
  bool without_loader_cache = false;
};

// The defaults: LD_PRELOAD=libpm2lat.so (or $PM2LAT_TEST_SHIM), LD_LIBRARY_PATH=<fake CUDA stack>,
// PM2LAT_OUT=<dir>/records.jsonl, PM2LAT_SUMMARY=<dir>/summary.json,
// FAKE_CUDA_LOG=<dir>/fake.log (per-kernel lines), PM2LAT_TARGETS=A100.
RunResult run(const RunOptions& options);

std::string program(const std::string& name);  // path of a test program
std::string scratch_dir();                     // a new empty directory

std::string read_file(const std::string& path);
bool file_exists(const std::string& path);
std::vector<std::string> list_dir(const std::string& dir);

// Records file: the header line and the kernel records.
struct Records {
  nlohmann::json header;
  std::vector<nlohmann::json> kernels;
};
Records read_records(const std::string& path);

// One line of the fake driver's log: a kernel it executed.
struct FakeExecution {
  std::uint32_t correlation = 0;
  std::string name;
  std::uint32_t grid[3] = {};
  std::uint32_t block[3] = {};
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t graph_node = 0;
};
struct FakeLog {
  std::uint64_t launches = 0;
  std::uint64_t events_created = 0;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> kernels;  // count, total ns
  std::vector<FakeExecution> executions;
  // cuFunc*/cuKernel* calls made on the other kind of handle, by entry point.
  std::map<std::string, std::uint64_t> misuse;
};
FakeLog read_fake_log(const std::string& path);

// "notes" of a record's runtime object.
std::vector<std::string> notes_of(const nlohmann::json& record);
bool has_note(const nlohmann::json& record, const std::string& note);

}  // namespace pm2lat::test
