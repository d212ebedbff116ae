// Records files (record_jsonl.h schema, one file per rank: records.<rank>.jsonl, plain or
// gzip): finding a run's files, reading them into a RunTable (optionally predicting every
// record again for other targets), and writing one.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "pm2lat/record_jsonl.h"
#include "pm2lat/reports/run_table.h"

namespace pm2lat::reports {

class RunPredictor;

// Files as given; a directory contributes its records.*.jsonl[.gz] files (sorted). InputError
// when an input does not exist or a directory holds no records file.
std::vector<std::filesystem::path> find_records_files(const std::vector<std::string>& inputs);

// Whether directory `dir` holds a records file (records.*.jsonl[.gz]); false when it does not
// exist or cannot be read.
bool holds_records_files(const std::filesystem::path& dir);

// The header line of a records file (InputError for an empty file or a missing header).
RecordsHeader read_records_header(const std::filesystem::path& file);

struct RunInput {
  RunTable table;
  std::vector<std::string> notes;  // recoverable oddities (a truncated last line, ...)
};

// Reads every file as one rank. With `predictor`, every record is also predicted on its
// targets (replacing recorded predictions for the same GPU). InputError names file and line
// for a malformed record; a cut-off last line (a process killed mid-write) is skipped with a
// note. InputError when no file holds any kernel record.
RunInput read_run(const std::vector<std::filesystem::path>& files,
                  const RunPredictor* predictor = nullptr);

// Writes header + records as JSONL.
void write_records_file(const std::filesystem::path& file, const RecordsHeader& header,
                        const std::vector<PredictedRecord>& records);

}  // namespace pm2lat::reports
