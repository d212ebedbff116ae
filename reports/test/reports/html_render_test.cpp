// The HTML report as a browser shows it: headless Chromium renders it, the test reads back
// the DOM the browser built and looks at the screenshot's pixels. Skipped when no Chromium
// is installed (Debian package "chromium").
#include <gtest/gtest.h>

#include <fstream>

#include "pm2lat/reports/html_reporter.h"
#include "pm2lat/test/occurrences.h"
#include "support/png_image.h"
#include "support/run_fixture.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

std::string find_chromium() {
  for (const char* c :
       {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
    if (std::filesystem::exists(c)) return c;
  }
  return "";
}

std::vector<std::string> chromium_args(const std::string& chromium,
                                       const std::filesystem::path& profile) {
  return {chromium,
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--hide-scrollbars",
          "--user-data-dir=" + profile.string(),
          "--window-size=1200,2600"};
}

TEST(HtmlRender, ChromiumDrawsEveryPlot) {
  const std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed";
  // A run with enough kernels for every plot to have content.
  std::vector<test::FixtureKernel> kernels;
  for (int i = 0; i < 40; ++i) {
    const double m = 5.0 + i * 3.0;
    kernels.push_back({"ampere_sgemm_128x64_tn", KernelFamily::kGemm, 0, 7, i * 200.0, m,
                       m * (0.8 + 0.01 * i), m * 2});
    kernels.push_back({"vectorized_elementwise_kernel", KernelFamily::kElementwise, 0, 7,
                       i * 200.0 + 100, m / 2, m / 2 * 1.3, m});
  }
  const RunTable t = test::fixture_run(kernels);
  const auto dir = test::scratch_dir("html");
  {
    std::ofstream out(dir / "report.html");
    ReportHeading h;
    h.title = "render check";
    write_html_report(out, t, summarize(t), h);
  }
  const std::string url = "file://" + (dir / "report.html").string();

  auto args = chromium_args(chromium, dir / "profile-dom");
  args.push_back("--dump-dom");
  args.push_back(url);
  const auto dom = test::run_process(args);
  ASSERT_EQ(dom.code, 0) << dom.err;
  const std::string& d = dom.out;
  ASSERT_NE(d.find("render check"), std::string::npos) << "the DOM dump is the rendered report";
  EXPECT_EQ(test::occurrences(d, "<circle class=\"pt\""), 80u)
      << "one point per kernel, inside the scatter SVGs";
  // The points are inside the scatter SVG (a parser would move stray elements out of it).
  const std::size_t gemm_svg = d.find("<svg class=\"scatter\" data-family=\"gemm\"");
  ASSERT_NE(gemm_svg, std::string::npos);
  const std::size_t svg_end = d.find("</svg>", gemm_svg);
  EXPECT_EQ(test::occurrences(d.substr(gemm_svg, svg_end - gemm_svg), "<circle class=\"pt\""), 40u);
  EXPECT_EQ(test::occurrences(d, "class=\"bar\""), 3u);
  EXPECT_EQ(test::occurrences(d, "class=\"hbar\""), 21u);
  EXPECT_EQ(test::occurrences(d, "<details class=\"topk\""), 2u);

  args = chromium_args(chromium, dir / "profile-png");
  args.push_back("--screenshot=" + (dir / "shot.png").string());
  args.push_back(url);
  const auto shot = test::run_process(args);
  ASSERT_EQ(shot.code, 0) << shot.err;
  const test::RgbImage img = test::decode_png(test::read_text(dir / "shot.png"));
  EXPECT_EQ(img.width, 1200u);
  EXPECT_GT(img.distinct_colours(), 50u) << "a blank page has one colour";
  // The step-time bars and the histogram are drawn in the palette's blue and orange.
  EXPECT_GT(img.count(0x1f, 0x77, 0xb4), 500u);
  EXPECT_GT(img.count(0xff, 0x7f, 0x0e), 200u);
}

}  // namespace
}  // namespace pm2lat::reports
