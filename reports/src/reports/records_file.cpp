#include "pm2lat/reports/records_file.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "pm2lat/reports/input_file.h"
#include "pm2lat/reports/replay/kernel_class_cache.h"
#include "pm2lat/reports/run_predictor.h"

namespace pm2lat::reports {
namespace {

bool is_records_name(const std::string& n) {
  if (n.rfind("records", 0) != 0) return false;
  auto ends = [&](const std::string& s) {
    return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".jsonl") || ends(".jsonl.gz");
}

// Line reader over plain or gzip files (zlib reads plain files unchanged).
class LineReader {
 public:
  explicit LineReader(const std::filesystem::path& file) : file_(file.string()) {
    f_ = gzopen(file.c_str(), "rb");
    if (f_ == nullptr) throw InputError(file_ + ": cannot be opened: " + std::strerror(errno));
    gzbuffer(f_, 1u << 17);
  }
  ~LineReader() {
    if (f_ != nullptr) gzclose(f_);
  }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Next line without its newline; false at end of file. `terminated` says whether the line
  // ended with a newline (a last line without one may have been cut off).
  bool next(std::string& line, bool& terminated) {
    line.clear();
    char buf[1 << 16];
    for (;;) {
      if (gzgets(f_, buf, sizeof(buf)) == nullptr) {
        int err = Z_OK;
        const char* msg = gzerror(f_, &err);
        if (err != Z_OK && err != Z_STREAM_END)
          throw InputError(file_ + ": corrupt or truncated data (" +
                           (msg != nullptr ? msg : "unknown") + ")");
        terminated = false;
        return !line.empty();
      }
      line += buf;
      if (!line.empty() && line.back() == '\n') {
        line.pop_back();
        if (!line.empty() && line.back() == '\r') line.pop_back();
        terminated = true;
        return true;
      }
    }
  }

 private:
  std::string file_;
  gzFile f_ = nullptr;
};

bool blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

// One rank of a records file: the GPU its records ran on, its row in the run table, and that
// GPU's spec (what a re-prediction takes as the source).
struct FileRank {
  std::string gpu;
  std::size_t index = 0;
  const DeviceSpec* source = nullptr;
};

}  // namespace

std::vector<std::filesystem::path> find_records_files(const std::vector<std::string>& inputs) {
  std::vector<std::filesystem::path> files;
  for (const auto& in : inputs) {
    const std::filesystem::path p(in);
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) throw InputError(in + ": no such file or directory");
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::filesystem::path> found;
      for (const auto& e : std::filesystem::directory_iterator(p)) {
        if (e.is_regular_file() && is_records_name(e.path().filename().string()))
          found.push_back(e.path());
      }
      if (found.empty())
        throw InputError(in + ": no records files (records.*.jsonl) in this directory");
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }
  return files;
}

bool holds_records_files(const std::filesystem::path& dir) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (is_records_name(it->path().filename().string())) return true;
  }
  return false;
}

RecordsHeader read_records_header(const std::filesystem::path& file) {
  LineReader reader(file);
  std::string line;
  bool terminated = false;
  while (reader.next(line, terminated)) {
    if (blank(line)) continue;
    try {
      return header_from_jsonl(line, file.string() + ":1");
    } catch (const std::exception& e) {
      throw InputError(e.what());
    }
  }
  throw InputError(file.string() + ": file is empty (no records header)");
}

RunInput read_run(const std::vector<std::filesystem::path>& files, const RunPredictor* predictor) {
  RunInput in;
  KernelClassCache classes;
  if (predictor != nullptr) predictor->add_columns(in.table);
  std::size_t kernels = 0;
  for (const auto& file : files) {
    const RecordsHeader header = read_records_header(file);
    for (const auto& t : header.targets) in.table.add_target(t);
    // A rank per GPU the file's records ran on (the header's for a process on one GPU model;
    // one more for each other model a process drove), each scored against its own GPU.
    std::vector<FileRank> ranks;
    auto rank_of = [&](const std::string& gpu) -> const FileRank& {
      for (const FileRank& r : ranks) {
        if (r.gpu == gpu) return r;
      }
      RankInfo rank;
      rank.rank = header.rank;
      rank.gpu = gpu;
      rank.source = file.string() + (gpu == header.gpu ? "" : " (" + gpu + ")");
      rank.host = header.host;
      rank.command = header.command;
      const std::size_t index = in.table.add_rank(std::move(rank));
      return ranks.emplace_back(
          FileRank{gpu, index, predictor != nullptr ? predictor->source_spec(gpu) : nullptr});
    };

    LineReader reader(file);
    std::string line, pending_error;
    bool terminated = false, header_seen = false;
    std::size_t line_no = 0;
    while (reader.next(line, terminated)) {
      ++line_no;
      if (blank(line)) continue;
      if (!header_seen) {
        header_seen = true;
        continue;
      }
      if (!pending_error.empty()) throw InputError(pending_error);
      PredictedRecord r;
      try {
        r = record_from_jsonl(line, file.string() + ":" + std::to_string(line_no));
      } catch (const std::exception& e) {
        // Only the last line may be cut off (a process killed while writing); anything
        // before it is a malformed file.
        if (!terminated) {
          in.notes.push_back(file.string() + ":" + std::to_string(line_no) +
                             ": ignored a cut-off last line");
          break;
        }
        pending_error = e.what();
        continue;
      }
      // A record that does not name its GPU ran on the header's.
      const FileRank& rank = rank_of(r.gpu.empty() ? header.gpu : r.gpu);
      const std::size_t row =
          in.table.add_kernel(r.record.launch.name, r.family, rank.index, r.record.stream,
                              r.record.ts_ns, r.record.measured_us);
      for (const auto& [target, p] : r.predictions)
        in.table.set_prediction(row, in.table.add_target(target), p);
      if (predictor != nullptr) {
        const KernelClass& cls = classes.classify(r.record.launch.name);
        predictor->predict(r.record, cls, rank.source, in.table, row);
      }
      ++kernels;
    }
    if (!pending_error.empty()) throw InputError(pending_error);
    if (ranks.empty()) rank_of(header.gpu);  // a file with no records is still a rank
  }
  if (kernels == 0) {
    throw InputError(files.size() == 1
                         ? files.front().string() + ": no kernel records (only a header)"
                         : "no kernel records in any of the " + std::to_string(files.size()) +
                               " files");
  }
  return in;
}

void write_records_file(const std::filesystem::path& file, const RecordsHeader& header,
                        const std::vector<PredictedRecord>& records) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(file.string() + ": cannot be written");
  out << header_to_jsonl(header) << '\n';
  for (const auto& r : records) out << record_to_jsonl(r) << '\n';
  if (!out) throw std::runtime_error(file.string() + ": write failed");
}

}  // namespace pm2lat::reports
