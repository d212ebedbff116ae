#include "pm2lat/reports/input_file.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <system_error>

#include "pm2lat/reports/eval/progress_bar.h"

namespace pm2lat::reports {
namespace {

bool starts_with_gzip_magic(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

std::string read_plain(const std::filesystem::path& file, std::uintmax_t size,
                       ProgressBar* progress) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string() + ": cannot be opened: " + std::strerror(errno));
  std::string out;
  out.resize(static_cast<std::size_t>(size));
  constexpr std::size_t kChunk = 4u << 20;
  std::size_t done = 0;
  while (done < out.size()) {
    const std::size_t n = std::min(kChunk, out.size() - done);
    in.read(out.data() + done, static_cast<std::streamsize>(n));
    if (in.gcount() <= 0) break;
    done += static_cast<std::size_t>(in.gcount());
    if (progress != nullptr) progress->update(done);
  }
  out.resize(done);
  return out;
}

std::string read_gzip(const std::filesystem::path& file, ProgressBar* progress) {
  gzFile f = gzopen(file.c_str(), "rb");
  if (f == nullptr) throw InputError(file.string() + ": cannot be opened: " + std::strerror(errno));
  std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(f, gzclose);
  gzbuffer(f, 1u << 17);
  std::string out;
  std::string buf(1u << 20, '\0');
  for (;;) {
    const int n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int err = Z_OK;
      const char* msg = gzerror(f, &err);
      throw InputError(file.string() + ": corrupt gzip data (" +
                       (msg != nullptr ? msg : "unknown") + ")");
    }
    if (n == 0) break;
    out.append(buf.data(), static_cast<std::size_t>(n));
    if (progress != nullptr) progress->update(static_cast<std::uint64_t>(gzoffset(f)));
  }
  // zlib reports a stream cut short as a clean end of file with a pending error.
  int err = Z_OK;
  const char* msg = gzerror(f, &err);
  if (err != Z_OK && err != Z_STREAM_END) {
    throw InputError(file.string() + ": corrupt or truncated gzip data (" +
                     (msg != nullptr ? msg : "unknown") + ")");
  }
  return out;
}

}  // namespace

std::string read_input_file(const std::filesystem::path& file, ProgressBar* progress) {
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (ec || !std::filesystem::exists(status)) throw InputError(file.string() + ": no such file");
  if (std::filesystem::is_directory(status))
    throw InputError(file.string() + ": is a directory, expected a file");
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (ec) throw InputError(file.string() + ": cannot be read: " + ec.message());
  if (size == 0) throw InputError(file.string() + ": file is empty");
  if (progress != nullptr) progress->stage("reading " + file.filename().string(), size);
  std::string text =
      starts_with_gzip_magic(file) ? read_gzip(file, progress) : read_plain(file, size, progress);
  if (text.empty()) throw InputError(file.string() + ": no data after decompression");
  return text;
}

}  // namespace pm2lat::reports
