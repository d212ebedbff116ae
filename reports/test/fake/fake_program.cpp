// A program for the launcher tests, run as `pm2lat run -- fake_program MODE [ARG]`. It writes
// what it saw of its environment to $PM2LAT_OUT/env.txt, a records file and a summary where
// the runtime would, then ends as MODE says:
//   exit N       exit with status N
//   raise SIG    kill itself with signal SIG
//   wait         write $PM2LAT_OUT/ready, wait for SIGTERM, record it and exit 42
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "pm2lat/record_jsonl.h"

namespace {

volatile sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "<unset>" : v;
}

void write_outputs(const std::string& out) {
  std::ofstream e(out + "/env.txt");
  e << "PM2LAT_TARGETS=" << env("PM2LAT_TARGETS") << "\n"
    << "PM2LAT_OUT=" << env("PM2LAT_OUT") << "\n"
    << "PM2LAT_MEASURE=" << env("PM2LAT_MEASURE") << "\n"
    << "PM2LAT_PROFILES=" << env("PM2LAT_PROFILES") << "\n"
    << "LD_PRELOAD=" << env("LD_PRELOAD") << "\n"
    << "runtime_loaded="
    << (dlsym(RTLD_DEFAULT, "pm2lat_fake_runtime_loaded") != nullptr ? "yes" : "no") << "\n";

  pm2lat::RecordsHeader h;
  h.gpu = "H100-SXM";
  h.targets = {"H100-SXM", "A100-SXM"};
  h.pid = getpid();
  h.command = "fake_program";
  std::ofstream r(out + "/records.0.jsonl");
  r << pm2lat::header_to_jsonl(h) << "\n";
  for (int i = 0; i < 3; ++i) {
    pm2lat::PredictedRecord pr;
    pr.record.seq = static_cast<std::uint64_t>(i);
    pr.record.ts_ns = static_cast<std::uint64_t>(i) * 20000;
    pr.record.stream = 7;
    pr.record.launch.name = "ampere_sgemm_128x64_tn";
    pr.record.measured_us = 10.0;
    pr.gpu = "H100-SXM";
    pr.family = pm2lat::KernelFamily::kGemm;
    pm2lat::Prediction p;
    p.us = 11.0;
    p.model = pm2lat::ModelKind::kGemmWave;
    pr.predictions.emplace_back("H100-SXM", p);
    p.us = 20.0;
    pr.predictions.emplace_back("A100-SXM", p);
    r << pm2lat::record_to_jsonl(pr) << "\n";
  }
  // The runtime's summary beside the records: two host-to-device copies and a memset.
  std::ofstream s(out + "/summary.0.json");
  s << R"({"schema":"pm2lat.summary","version":1,"transfers":[)"
    << R"({"kind":"host_to_device","count":2,"bytes":2097152,"measured_ms":0.09},)"
    << R"({"kind":"memset","count":1,"bytes":1024,"measured_ms":0.01}]})"
    << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out = env("PM2LAT_OUT");
  if (out != "<unset>") write_outputs(out);
  const std::string mode = argc > 1 ? argv[1] : "exit";
  const int arg = argc > 2 ? std::atoi(argv[2]) : 0;
  if (mode == "exit") return arg;
  if (mode == "raise") {
    signal(arg, SIG_DFL);
    raise(arg);
    return 99;
  }
  if (mode == "wait") {
    signal(SIGTERM, on_signal);
    std::ofstream(out + "/ready") << "ready\n";
    for (int i = 0; i < 3000 && g_signal == 0; ++i) usleep(10000);
    std::ofstream(out + "/got_signal") << g_signal << "\n";
    return g_signal == SIGTERM ? 42 : 1;
  }
  return 2;
}
