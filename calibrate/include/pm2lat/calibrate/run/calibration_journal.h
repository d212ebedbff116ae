// The journal of a calibration run: an append-only file with one JSON line per finished
// measurement, after a header line naming the GPU and the library versions the measurements
// belong to. An interrupted run starts again with the same command and skips what the
// journal already holds; a journal of another GPU or library version is refused.
#pragma once

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pm2lat/calibrate/run/measurement.h"

namespace pm2lat::calibrate::run {

class JournalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr const char* kJournalSchema = "pm2lat.calibration-journal";
inline constexpr int kJournalVersion = 1;

// What must not change between a run and its resumption: device name and the versions of
// the driver and cuBLASLt (their kernels are what is measured).
struct JournalIdentity {
  std::string device;
  std::map<std::string, std::string> versions;
};

class CalibrationJournal {
 public:
  // Opens `file`, creating it with `identity` in its header when absent (or when `restart`).
  // An existing journal is read back; a last line cut short by an interruption is dropped
  // (and truncated away before appending). Throws JournalError when the file's identity
  // differs or its header is malformed.
  static CalibrationJournal open(const std::filesystem::path& file, const JournalIdentity& identity,
                                 bool restart = false);

  CalibrationJournal(CalibrationJournal&&) noexcept;
  CalibrationJournal& operator=(CalibrationJournal&&) noexcept;
  ~CalibrationJournal();

  // Measurements already in the journal, in the order they were written.
  const std::vector<TaskResult>& results() const noexcept { return results_; }
  std::size_t dropped_lines() const noexcept { return dropped_; }
  const std::filesystem::path& file() const noexcept { return file_; }

  // Writes one line and flushes it to the operating system (a crash of this process does not
  // lose it).
  void append(const TaskResult& result);

 private:
  CalibrationJournal() = default;
  std::filesystem::path file_;
  std::FILE* out_ = nullptr;
  std::vector<TaskResult> results_;
  std::size_t dropped_ = 0;
};

// Reads a journal without opening it for writing (for `fit` from a finished run and tests).
struct JournalContents {
  JournalIdentity identity;
  std::vector<TaskResult> results;
  std::size_t dropped_lines = 0;
};
JournalContents read_journal(const std::filesystem::path& file);

}  // namespace pm2lat::calibrate::run
