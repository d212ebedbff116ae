#include "pm2lat/calibrate/run/calibration_journal.h"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "pm2lat/calibrate/run/measurement_json.h"

namespace pm2lat::calibrate::run {
namespace {

using nlohmann::json;

std::string header_line(const JournalIdentity& id) {
  return json{{"schema", kJournalSchema},
              {"version", kJournalVersion},
              {"device", id.device},
              {"versions", id.versions}}
      .dump();
}

JournalIdentity parse_header(const std::string& line, const std::filesystem::path& file) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception&) {
    throw JournalError(fmt::format("{}: the first line is not a journal header", file.string()));
  }
  if (!j.is_object() || j.value("schema", "") != kJournalSchema) {
    throw JournalError(
        fmt::format("{}: not a calibration journal (schema '{}')", file.string(), kJournalSchema));
  }
  if (j.value("version", 0) != kJournalVersion) {
    throw JournalError(fmt::format("{}: journal version {} (this calibrator writes {})",
                                   file.string(), j.value("version", 0), kJournalVersion));
  }
  JournalIdentity id;
  id.device = j.value("device", "");
  if (j.contains("versions") && j["versions"].is_object()) {
    for (const auto& [k, v] : j["versions"].items()) {
      if (v.is_string()) id.versions[k] = v.get<std::string>();
    }
  }
  return id;
}

// Results read back, and where the last complete line ends.
struct Parsed {
  JournalIdentity identity;
  std::vector<TaskResult> results;
  std::size_t dropped = 0;
  std::size_t good_bytes = 0;  // file prefix made of complete, readable lines
};

Parsed parse(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw JournalError(fmt::format("{}: cannot read", file.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  Parsed p;
  std::size_t pos = 0;
  bool header = true;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const bool complete = nl != std::string::npos;
    const std::string line = text.substr(pos, complete ? nl - pos : std::string::npos);
    const std::size_t next = complete ? nl + 1 : text.size();
    if (header) {
      if (!complete) throw JournalError(fmt::format("{}: header line cut short", file.string()));
      p.identity = parse_header(line, file);
      header = false;
      p.good_bytes = next;
    } else if (!line.empty()) {
      // A line cut short by an interruption (no newline) is dropped, as is one that does not
      // parse: measurements are cheap to redo, a wrong one is not.
      bool ok = complete;
      if (ok) {
        try {
          p.results.push_back(task_result_from_json(line));
        } catch (const std::invalid_argument&) {
          ok = false;
        }
      }
      if (ok) {
        p.good_bytes = next;
      } else {
        ++p.dropped;
      }
    } else {
      p.good_bytes = next;
    }
    pos = next;
  }
  if (header) throw JournalError(fmt::format("{}: empty journal", file.string()));
  return p;
}

void check_identity(const JournalIdentity& have, const JournalIdentity& want,
                    const std::filesystem::path& file) {
  std::string diff;
  if (have.device != want.device)
    diff += fmt::format(" device '{}' (now '{}')", have.device, want.device);
  for (const auto& [k, v] : want.versions) {
    const auto it = have.versions.find(k);
    if (it != have.versions.end() && it->second != v)
      diff += fmt::format(" {} {} (now {})", k, it->second, v);
  }
  if (!diff.empty()) {
    throw JournalError(
        fmt::format("{}: the journal belongs to another setup:{}. Its measurements cannot be mixed "
                    "with this run's; use "
                    "--restart to start over or another --journal",
                    file.string(), diff));
  }
}

}  // namespace

CalibrationJournal CalibrationJournal::open(const std::filesystem::path& file,
                                            const JournalIdentity& identity, bool restart) {
  CalibrationJournal j;
  j.file_ = file;
  std::error_code ec;
  const bool exists = std::filesystem::exists(file, ec) && std::filesystem::file_size(file, ec) > 0;
  if (exists && !restart) {
    Parsed p = parse(file);
    check_identity(p.identity, identity, file);
    j.results_ = std::move(p.results);
    j.dropped_ = p.dropped;
    if (p.good_bytes < std::filesystem::file_size(file))
      std::filesystem::resize_file(file, p.good_bytes);
    j.out_ = std::fopen(file.c_str(), "ab");
    if (j.out_ == nullptr) throw JournalError(fmt::format("{}: cannot append", file.string()));
  } else {
    if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
    j.out_ = std::fopen(file.c_str(), "wb");
    if (j.out_ == nullptr) throw JournalError(fmt::format("{}: cannot create", file.string()));
    const std::string h = header_line(identity) + "\n";
    if (std::fwrite(h.data(), 1, h.size(), j.out_) != h.size() || std::fflush(j.out_) != 0) {
      throw JournalError(fmt::format("{}: cannot write", file.string()));
    }
  }
  return j;
}

CalibrationJournal::CalibrationJournal(CalibrationJournal&& o) noexcept
    : file_(std::move(o.file_)),
      out_(o.out_),
      results_(std::move(o.results_)),
      dropped_(o.dropped_) {
  o.out_ = nullptr;
}

CalibrationJournal& CalibrationJournal::operator=(CalibrationJournal&& o) noexcept {
  if (this != &o) {
    if (out_ != nullptr) std::fclose(out_);
    file_ = std::move(o.file_);
    out_ = o.out_;
    results_ = std::move(o.results_);
    dropped_ = o.dropped_;
    o.out_ = nullptr;
  }
  return *this;
}

CalibrationJournal::~CalibrationJournal() {
  if (out_ != nullptr) std::fclose(out_);
}

void CalibrationJournal::append(const TaskResult& result) {
  const std::string line = to_json_line(result) + "\n";
  if (out_ == nullptr || std::fwrite(line.data(), 1, line.size(), out_) != line.size() ||
      std::fflush(out_) != 0) {
    throw JournalError(fmt::format("{}: cannot write", file_.string()));
  }
  results_.push_back(result);
}

JournalContents read_journal(const std::filesystem::path& file) {
  Parsed p = parse(file);
  return JournalContents{std::move(p.identity), std::move(p.results), p.dropped};
}

}  // namespace pm2lat::calibrate::run
