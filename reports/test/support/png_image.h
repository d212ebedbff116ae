// Decoding the PNG screenshots headless Chromium writes (8-bit RGB/RGBA, not interlaced),
// enough for a test to count the pixels of a colour.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pm2lat::test {

struct RgbImage {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::vector<std::uint8_t> rgb;  // width * height * 3

  std::size_t count(std::uint8_t r, std::uint8_t g, std::uint8_t b) const;
  std::size_t distinct_colours() const;
};

// Throws std::runtime_error for anything but 8-bit non-interlaced RGB(A) PNG.
RgbImage decode_png(const std::string& bytes);

}  // namespace pm2lat::test
