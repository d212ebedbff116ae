#include "config.h"

#include <cstdlib>
#include <string>

#include "pm2lat/text.h"

namespace pm2lat::shim {

namespace {

bool parse_uint(std::string_view s, std::uint32_t lo, std::uint32_t hi, std::uint32_t* out) {
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + std::uint64_t(c - '0');
    if (v > hi) return false;
  }
  if (v < lo) return false;
  *out = static_cast<std::uint32_t>(v);
  return true;
}

}  // namespace

Config Config::from_environment(const std::function<const char*(const char*)>& getenv_fn) {
  auto get = [&](const char* name) -> const char* {
    return getenv_fn ? getenv_fn(name) : std::getenv(name);
  };
  Config c;
  auto bad = [&](const char* var, std::string_view value, const char* expected) {
    c.problems.push_back(std::string(var) + "=" + std::string(value) + " is not valid (expected " +
                         expected + "); using the default");
  };

  if (const char* v = get("PM2LAT_DISABLE"); v && *v && std::string_view(v) != "0") {
    c.disabled = true;
  }
  if (const char* v = get("PM2LAT_TARGETS")) c.targets = pm2lat::split_list(v);
  if (const char* v = get("PM2LAT_OUT")) {
    const std::string s = pm2lat::ascii_lower(v);
    c.out = (s.empty() || s == "none") ? std::string() : std::string(v);
  }
  if (const char* v = get("PM2LAT_SUMMARY")) {
    const std::string s = pm2lat::ascii_lower(v);
    c.summary = (s.empty() || s == "none") ? std::string() : (s == "stderr" ? s : std::string(v));
  }
  if (const char* v = get("PM2LAT_CUPTI")) {
    const std::string s = pm2lat::ascii_lower(v);
    if (s == "off" || s == "0") {
      c.cupti = CuptiUse::kOff;
    } else if (s != "auto" && s != "on" && s != "1") {
      bad("PM2LAT_CUPTI", v, "auto|off");
    }
  }
  if (const char* v = get("PM2LAT_CUPTI_LIBRARY")) c.cupti_library = v;
  if (const char* v = get("PM2LAT_LAUNCH_SOURCE")) {
    const std::string s = pm2lat::ascii_lower(v);
    if (s == "hooks") {
      c.launch_source = LaunchSource::kHooks;
    } else if (s != "auto") {
      bad("PM2LAT_LAUNCH_SOURCE", v, "auto|hooks");
    }
  }
  if (const char* v = get("PM2LAT_TIMING")) {
    const std::string s = pm2lat::ascii_lower(v);
    if (s == "cupti") {
      c.timing = TimingSource::kCupti;
    } else if (s == "events") {
      c.timing = TimingSource::kEvents;
    } else if (s == "none") {
      c.timing = TimingSource::kNone;
    } else if (s != "auto") {
      bad("PM2LAT_TIMING", v, "auto|cupti|events|none");
    }
  }
  if (const char* v = get("PM2LAT_NVTX")) {
    const std::string s = pm2lat::ascii_lower(v);
    if (s == "on" || s == "1") {
      c.nvtx = NvtxUse::kOn;
    } else if (s == "off" || s == "0") {
      c.nvtx = NvtxUse::kOff;
    } else if (s != "auto") {
      bad("PM2LAT_NVTX", v, "auto|on|off");
    }
  }
  if (const char* v = get("PM2LAT_LOG")) {
    const std::string s = pm2lat::ascii_lower(v);
    if (s == "off") {
      c.log = LogLevel::kOff;
    } else if (s == "info") {
      c.log = LogLevel::kInfo;
    } else if (s != "warn") {
      bad("PM2LAT_LOG", v, "off|warn|info");
    }
  }
  if (const char* v = get("PM2LAT_RING_SLOTS")) {
    if (!parse_uint(v, 64, 1u << 20, &c.ring_slots)) bad("PM2LAT_RING_SLOTS", v, "64..1048576");
  }
  if (const char* v = get("PM2LAT_FLUSH_MS")) {
    if (!parse_uint(v, 1, 60000, &c.flush_ms)) bad("PM2LAT_FLUSH_MS", v, "1..60000");
  }
  if (const char* v = get("PM2LAT_DRIFT_PCT")) {
    std::uint32_t pct = 0;
    if (parse_uint(v, 0, 100000, &pct)) {
      c.drift_pct = pct;
    } else {
      bad("PM2LAT_DRIFT_PCT", v, "0..100000");
    }
  }
  if (const char* v = get("PM2LAT_MEASURE"); v && std::string_view(v) == "0") {
    c.timing = TimingSource::kNone;  // `pm2lat run --no-measure`
  }
  for (const char* var : {"PM2LAT_RANK", "RANK", "LOCAL_RANK"}) {
    std::uint32_t r = 0;
    if (const char* v = get(var); v != nullptr && parse_uint(v, 0, 1u << 20, &r)) {
      c.rank = static_cast<std::int32_t>(r);
      c.rank_known = true;
      break;
    }
  }
  return c;
}

std::string expand_path(std::string_view tmpl, long pid, bool insert_pid) {
  std::string out(tmpl);
  const std::string p = std::to_string(pid);
  bool had_pid = false;
  for (std::size_t pos = out.find("%p"); pos != std::string::npos; pos = out.find("%p", pos)) {
    out.replace(pos, 2, p);
    pos += p.size();
    had_pid = true;
  }
  if (!had_pid && insert_pid) {
    const std::size_t slash = out.rfind('/');
    const std::size_t dot = out.rfind('.');
    if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)) {
      out.insert(dot, "." + p);
    } else {
      out += "." + p;
    }
  }
  return out;
}

}  // namespace pm2lat::shim
