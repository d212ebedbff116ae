// Configuration of libpm2lat.so, read from the environment once, when the program first
// initialises CUDA (never in the library constructor). One table documents every variable:
// shim/README.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pm2lat::shim {

enum class CuptiUse : std::uint8_t { kAuto, kOff };
enum class LaunchSource : std::uint8_t { kAuto, kHooks };
enum class TimingSource : std::uint8_t { kAuto, kCupti, kEvents, kNone };
enum class NvtxUse : std::uint8_t { kAuto, kOn, kOff };
enum class LogLevel : std::uint8_t { kOff, kWarn, kInfo };

struct Config {
  bool disabled = false;
  std::vector<std::string> targets;
  // A directory (existing, or ending in '/'): records.<rank|pid>.jsonl and summary.<...>.json
  // in it, as `pm2lat run` expects. Otherwise a file path, "%p" = pid. "" = no records file.
  std::string out = "records.%p.jsonl";
  std::string summary = "stderr";  // "stderr", "" (none) or a path
  std::string cupti_library;       // "" = search
  CuptiUse cupti = CuptiUse::kAuto;
  LaunchSource launch_source = LaunchSource::kAuto;
  TimingSource timing = TimingSource::kAuto;
  NvtxUse nvtx = NvtxUse::kAuto;
  LogLevel log = LogLevel::kWarn;
  std::uint32_t ring_slots = 8192;
  std::uint32_t flush_ms = 200;
  double drift_pct = 30;  // rolling per-family error that draws a warning; 0 = no check
  std::int32_t rank = 0;
  bool rank_known = false;            // PM2LAT_RANK, RANK or LOCAL_RANK was set
  std::vector<std::string> problems;  // unparsable values, reported once at start-up

  // `getenv` is injectable for tests.
  static Config from_environment(
      const std::function<const char*(const char*)>& getenv_fn = nullptr);
};

// Replaces "%p" with the process id; with `insert_pid`, a path without "%p" gets ".<pid>"
// before its extension (so a forked child never overwrites its parent's file).
std::string expand_path(std::string_view tmpl, long pid, bool insert_pid);

}  // namespace pm2lat::shim
