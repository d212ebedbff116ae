#include "support/png_image.h"

#include <zlib.h>

#include <cstdlib>
#include <set>
#include <stdexcept>

namespace pm2lat::test {
namespace {

std::uint32_t be32(const std::string& s, std::size_t p) {
  return (std::uint32_t(std::uint8_t(s[p])) << 24) | (std::uint32_t(std::uint8_t(s[p + 1])) << 16) |
         (std::uint32_t(std::uint8_t(s[p + 2])) << 8) | std::uint32_t(std::uint8_t(s[p + 3]));
}

std::uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return static_cast<std::uint8_t>(a);
  return static_cast<std::uint8_t>(pb <= pc ? b : c);
}

}  // namespace

std::size_t RgbImage::count(std::uint8_t r, std::uint8_t g, std::uint8_t b) const {
  std::size_t n = 0;
  for (std::size_t i = 0; i + 2 < rgb.size(); i += 3)
    n += rgb[i] == r && rgb[i + 1] == g && rgb[i + 2] == b;
  return n;
}

std::size_t RgbImage::distinct_colours() const {
  std::set<std::uint32_t> seen;
  for (std::size_t i = 0; i + 2 < rgb.size(); i += 3)
    seen.insert((rgb[i] << 16) | (rgb[i + 1] << 8) | rgb[i + 2]);
  return seen.size();
}

RgbImage decode_png(const std::string& s) {
  if (s.size() < 33 || s.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0)
    throw std::runtime_error("not a PNG");
  RgbImage img;
  int channels = 0;
  std::string idat;
  for (std::size_t p = 8; p + 8 <= s.size();) {
    const std::uint32_t len = be32(s, p);
    const std::string type = s.substr(p + 4, 4);
    if (p + 12 + len > s.size()) throw std::runtime_error("truncated PNG");
    if (type == "IHDR") {
      img.width = be32(s, p + 8);
      img.height = be32(s, p + 12);
      const int depth = std::uint8_t(s[p + 16]), colour = std::uint8_t(s[p + 17]),
                interlace = std::uint8_t(s[p + 20]);
      if (depth != 8 || interlace != 0 || (colour != 2 && colour != 6))
        throw std::runtime_error("unsupported PNG");
      channels = colour == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      idat.append(s, p + 8, len);
    } else if (type == "IEND") {
      break;
    }
    p += 12 + len;
  }
  const std::size_t stride = std::size_t(img.width) * channels;
  std::vector<std::uint8_t> raw((stride + 1) * img.height);
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) !=
          Z_OK ||
      raw_len != raw.size())
    throw std::runtime_error("bad PNG data");
  std::vector<std::uint8_t> prev(stride, 0), cur(stride);
  img.rgb.reserve(std::size_t(img.width) * img.height * 3);
  for (std::uint32_t y = 0; y < img.height; ++y) {
    const std::uint8_t filter = raw[y * (stride + 1)];
    const std::uint8_t* line = &raw[y * (stride + 1) + 1];
    for (std::size_t x = 0; x < stride; ++x) {
      const int a = x >= std::size_t(channels) ? cur[x - channels] : 0, b = prev[x],
                c = x >= std::size_t(channels) ? prev[x - channels] : 0;
      int v = line[x];
      switch (filter) {
        case 1: v += a; break;
        case 2: v += b; break;
        case 3: v += (a + b) / 2; break;
        case 4: v += paeth(a, b, c); break;
        default: break;
      }
      cur[x] = static_cast<std::uint8_t>(v);
    }
    for (std::uint32_t x = 0; x < img.width; ++x)
      for (int k = 0; k < 3; ++k) img.rgb.push_back(cur[x * channels + k]);
    prev.swap(cur);
  }
  return img;
}

}  // namespace pm2lat::test
