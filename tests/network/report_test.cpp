// `kiln run --profile` and `kiln report` as a user runs them: the real binary on a small
// compiled network; the page rendered by a real browser (Debian's headless Chromium) and the
// screenshot checked for the charts' colours; bad inputs give one line and exit status 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/network/test_models.h"
#include "tests/tuner/png_reader.h"

namespace kiln::network::test {
namespace {

namespace fs = std::filesystem;

struct Output {
  int status = -1;
  std::string text;  // stdout and stderr
};

Output sh(const std::string& command) {
  Output o;
  std::FILE* p = popen((command + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf;
  while (std::fgets(buf.data(), buf.size(), p)) o.text += buf.data();
  o.status = WEXITSTATUS(pclose(p));
  return o;
}

Output kiln(const std::string& args) { return sh(std::string(KILN_BIN) + " " + args); }

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A compiled small CNN and a raw input for it, shared by the tests.
class Report : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("kiln-report-test");
    std::ofstream(dir_->file("net.onnx"), std::ios::binary) << conv_bn_relu_pool_gemm_softmax();
    std::vector<float> input(3 * 16 * 16, 0.5f);
    std::ofstream(dir_->file("in.bin"), std::ios::binary)
        .write(reinterpret_cast<const char*>(input.data()), input.size() * sizeof(float));
    Output o = kiln("compile " + dir_->file("net.onnx") +
                    " --target host --input-shape image=1,3,16,16 -o " + dir_->file("model"));
    ASSERT_EQ(o.status, 0) << o.text;
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::string model() { return dir_->file("model"); }
  static size_t layers() {
    std::ifstream f(dir_->file("model/model.json"));
    return nlohmann::json::parse(f)["layers"].size();
  }
  static TempDir* dir_;
};
TempDir* Report::dir_ = nullptr;

TEST_F(Report, RunProfileTimesEveryLayer) {
  const std::string profile = dir_->file("profile.json");
  Output o = kiln("run " + model() + " --input image=" + dir_->file("in.bin") +
                  " --runs 3 --profile " + profile);
  ASSERT_EQ(o.status, 0) << o.text;
  EXPECT_NE(o.text.find("slowest layers"), std::string::npos) << o.text;
  // The time by kind of kernel: every template of the model's layers is a candidate row, and
  // the first row is the one that took longest.
  const size_t by = o.text.find("time by kernel template:\n");
  ASSERT_NE(by, std::string::npos) << o.text;
  std::ifstream f(dir_->file("model/model.json"));
  const nlohmann::json model_json = nlohmann::json::parse(f);
  const std::string first_row = o.text.substr(by + 25, o.text.find('\n', by + 25) - by - 25);
  bool named = false;
  for (const auto& l : model_json["layers"])
    named |= first_row.rfind("  " + l.value("template", "") + "  ", 0) == 0;
  EXPECT_TRUE(named) << first_row;
  EXPECT_NE(first_row.find(" steps  "), std::string::npos) << first_row;
  EXPECT_NE(first_row.find("%)"), std::string::npos) << first_row;
  nlohmann::json p = nlohmann::json::parse(read_text(profile));
  ASSERT_EQ(p["step_ms"].size(), layers());
  double sum = 0;
  for (double ms : p["step_ms"]) {
    EXPECT_GE(ms, 0);
    sum += ms;
  }
  EXPECT_GT(sum, 0);
  // The layers add up to the whole run (the hook is called after every step).
  EXPECT_NEAR(sum, p["total_ms"].get<double>(), 0.5 * p["total_ms"].get<double>() + 0.05);
}

TEST_F(Report, PageFromAProfileHasEveryLayerAndChart) {
  const std::string profile = dir_->file("profile2.json");
  ASSERT_EQ(kiln("run " + model() + " --input image=" + dir_->file("in.bin") +
                 " --runs 2 --profile " + profile).status, 0);
  const std::string page = dir_->file("from_profile.html");
  Output o = kiln("report " + model() + " --profile " + profile + " -o " + page);
  ASSERT_EQ(o.status, 0) << o.text;
  std::string html = read_text(page);
  EXPECT_EQ(count(html, "<tr"), layers() + 1);  // a header row, then one per layer
  EXPECT_NE(html.find("Time per layer (ms)"), std::string::npos);
  // A profile may come from a board: this machine's roofline is not drawn against it.
  EXPECT_EQ(html.find("Roofline ("), std::string::npos);
}

// A model built from records: the page lists its tuned kernels with their records' spread and
// how each compared with the untuned config (model.json's "spread" and "verdict").
TEST_F(Report, TunedKernelsShowTheirSpreadAndVerdict) {
  const std::string copy = dir_->file("tuned_model");
  fs::remove_all(copy);
  fs::copy(model(), copy, fs::copy_options::recursive);
  nlohmann::json j = nlohmann::json::parse(read_text(copy + "/model.json"));
  ASSERT_GE(j["kernels"].size(), 2u);
  j["kernels"][0]["tuned"] = true;
  j["kernels"][0]["spread"] = 0.125;
  j["kernels"][0]["verdict"] = "1.18x faster than the untuned config (p=0.002, 15 vs 15 times)";
  j["kernels"][1]["tuned"] = true;
  j["kernels"][1]["kept_untuned_config"] = true;
  std::ofstream(copy + "/model.json") << j.dump(2);
  const std::string profile = dir_->file("profile3.json");
  ASSERT_EQ(kiln("run " + copy + " --input image=" + dir_->file("in.bin") + " --runs 1 --profile " +
                 profile).status, 0);
  Output o = kiln("report " + copy + " --profile " + profile + " -o " + dir_->file("tuned.html"));
  ASSERT_EQ(o.status, 0) << o.text;
  const std::string html = read_text(dir_->file("tuned.html"));
  EXPECT_NE(html.find("<h2>Tuned kernels</h2>"), std::string::npos);
  EXPECT_NE(html.find(">12.5%</td><td>1.18x faster than the untuned config (p=0.002, 15 vs 15 "
                      "times)</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td>kept the untuned config</td>"), std::string::npos);
  // The untuned model has no such table.
  Output plain = kiln("report " + model() + " --profile " + profile + " -o " + dir_->file("p.html"));
  ASSERT_EQ(plain.status, 0) << plain.text;
  EXPECT_EQ(read_text(dir_->file("p.html")).find("Tuned kernels"), std::string::npos);
}

// A model compiled with records of both precisions: the page lists each layer's two times and
// the form it takes (model.json "int8_paths" / "half_paths").
TEST_F(Report, EachLayersTwoPrecisionsAreListed) {
  const std::string copy = dir_->file("precision_model");
  fs::remove_all(copy);
  fs::copy(model(), copy, fs::copy_options::recursive);
  nlohmann::json j = nlohmann::json::parse(read_text(copy + "/model.json"));
  j["int8_paths"] = {{{"node", "conv_a"}, {"int8_ms", 0.412}, {"f32_ms", 0.3}, {"takes", "float"}},
                     {{"node", "conv_b"}, {"int8_ms", 0.0}, {"f32_ms", 0.0}, {"takes", "rule"}}};
  j["max_error"] = {{"budget", 0.01},          {"inputs", 4},         {"error", 0.0082},
                    {"error_all_fast", 0.031}, {"moved", {"conv_c"}}, {"kept_fast", {"conv_d"}}};
  std::ofstream(copy + "/model.json") << j.dump(2);
  const std::string profile = dir_->file("profile4.json");
  ASSERT_EQ(kiln("run " + copy + " --input image=" + dir_->file("in.bin") + " --runs 1 --profile " +
                 profile)
                .status,
            0);
  Output o = kiln("report " + copy + " --profile " + profile + " -o " + dir_->file("prec.html"));
  ASSERT_EQ(o.status, 0) << o.text;
  const std::string html = read_text(dir_->file("prec.html"));
  EXPECT_NE(html.find("<h2>Precision per layer</h2>"), std::string::npos) << html;
  EXPECT_NE(html.find("<tr><td>conv_a</td><td>int8</td><td class=\"n\">0.412</td><td "
                      "class=\"n\">0.300</td><td>float</td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<tr><td>conv_b</td><td>int8</td><td class=\"n\">-</td><td "
                      "class=\"n\">-</td><td>rule</td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<p>--max-error 0.01: 1 of 2 layers kept in their fast form, measured error "
                      "0.0082 (all fast: 0.031), the relative RMS of each output against the "
                      "precise model on 4 inputs.</p>"),
            std::string::npos)
      << html;
  // A model compiled without such records has no such table.
  Output plain =
      kiln("report " + model() + " --profile " + profile + " -o " + dir_->file("p2.html"));
  ASSERT_EQ(plain.status, 0) << plain.text;
  EXPECT_EQ(read_text(dir_->file("p2.html")).find("Precision per layer"), std::string::npos);
}

// A ranged batch: the page times the whole model at its ends, classes and sizes between.
TEST_F(Report, ARangedBatchShowsLatencyAgainstBatchSize) {
  const std::string ranged = dir_->file("ranged");
  Output c = kiln("compile " + dir_->file("net.onnx") + " --target host --range batch=1..4 -o " +
                  ranged);
  ASSERT_EQ(c.status, 0) << c.text;
  Output o = kiln("report " + ranged + " --runs 3 -o " + dir_->file("ranged.html"));
  ASSERT_EQ(o.status, 0) << o.text;
  const std::string html = read_text(dir_->file("ranged.html"));
  const size_t table = html.find("<h2>Latency against batch size</h2>");
  ASSERT_NE(table, std::string::npos) << html;
  const std::string rows = html.substr(table, html.find("</table>", table) - table);
  for (int b = 1; b <= 4; ++b)
    EXPECT_NE(rows.find("<tr><td class=\"n\">" + std::to_string(b) + "</td>"), std::string::npos)
        << b << "\n" << rows;
  EXPECT_EQ(count(rows, "<tr>"), 5u);  // the header and batches 1-4
}

TEST_F(Report, MeasuresHereAndCachesTheRoofline) {
  TempDir cache("kiln-report-cache");
  const std::string env = "KILN_CACHE_DIR=" + cache.path() + " ";
  const std::string page = dir_->file("here.html");
  Output o = sh(env + KILN_BIN + " report " + model() + " --runs 2 -o " + page);
  ASSERT_EQ(o.status, 0) << o.text;
  nlohmann::json r = nlohmann::json::parse(read_text(cache.file("roofline.json")));
  EXPECT_GT(r["peak_gflops_1t"].get<double>(), 0.5);
  EXPECT_GT(r["bandwidth_gbs"].get<double>(), 0.1);
  std::string html = read_text(page);
  EXPECT_NE(html.find("Roofline ("), std::string::npos);
  EXPECT_NE(html.find("measured by kiln report"), std::string::npos);
  // The second report reuses the cached figures: the file is left as it was.
  auto written = fs::last_write_time(cache.file("roofline.json"));
  ASSERT_EQ(sh(env + KILN_BIN + " report " + model() + " --runs 1 -o " + page).status, 0);
  EXPECT_EQ(fs::last_write_time(cache.file("roofline.json")), written);
}

TEST_F(Report, RendersInABrowser) {
  TempDir cache("kiln-report-cache");
  const std::string page = dir_->file("browser.html");
  ASSERT_EQ(sh("KILN_CACHE_DIR=" + cache.path() + " " + KILN_BIN + " report " + model() +
               " --runs 2 -o " + page).status, 0);
  const std::string png = dir_->file("page.png");
  Output o = sh(std::string(KILN_CHROMIUM) +
                " --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,1800"
                " --screenshot=" + png + " file://" + page);
  ASSERT_EQ(o.status, 0) << o.text;
  std::string error;
  kiln::testing::Image img = kiln::testing::read_png(png, &error);
  ASSERT_GT(img.width, 0u) << error;
  // The fallback bars' grey and the roof's red are on the page, so the SVG was drawn.
  std::set<uint32_t> colours;
  for (uint32_t y = 0; y < img.height; ++y)
    for (uint32_t x = 0; x < img.width; ++x) {
      const uint8_t* p = img.pixel(x, y);
      colours.insert(uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]);
    }
  EXPECT_TRUE(colours.count(0x9e9e9e)) << "no fallback bar drawn";
  EXPECT_TRUE(colours.count(0xd62728)) << "no roofline drawn";
}

TEST_F(Report, BadInputIsOneLineAndExitTwo) {
  TempDir empty("kiln-report-empty");
  std::ofstream(dir_->file("short.json")) << R"({"threads":1,"runs":1,"total_ms":1,"step_ms":[1]})";
  std::ofstream(dir_->file("junk.json")) << "not json";
  for (const std::string& args :
       {"report " + empty.path(), "report " + model() + " --profile " + dir_->file("short.json"),
        "report " + model() + " --profile " + dir_->file("junk.json"),
        "report " + model() + " --profile " + dir_->file("missing.json"),
        "report " + model() + " --runs 0"}) {
    Output o = kiln(args);
    EXPECT_EQ(o.status, 2) << args << "\n" << o.text;
    EXPECT_EQ(count(o.text, "\n"), 1u) << args << "\n" << o.text;
  }
}

}  // namespace
}  // namespace kiln::network::test
