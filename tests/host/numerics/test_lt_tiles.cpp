// The cuBLASLt tile/stage id translation against the text of the cublasLt.h tcbench is built
// with: every "CUBLASLT_MATMUL_TILE_<R>x<C> = <id>" line is parsed here independently of the
// table (which is built from the enum constants), and each id must translate to R x C. A newer
// header that adds ids fails the coverage check, which says to extend the table.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>

#include "tcbench/numerics/lt_tiles.hpp"

namespace tn = tcbench::numerics;

#ifndef TCBENCH_CUBLASLT_HEADER
#error "tests/CMakeLists.txt passes the path of cublasLt.h as TCBENCH_CUBLASLT_HEADER"
#endif

namespace {

std::string header_text() {
  std::ifstream in(TCBENCH_CUBLASLT_HEADER);
  if (!in) ADD_FAILURE() << "cannot read " << TCBENCH_CUBLASLT_HEADER;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// id -> (first number, second token) for every "<prefix><a>x<b> = <id>" in the header.
std::map<std::uint32_t, std::pair<int, std::string>> parse(const std::string& text,
                                                           const std::string& prefix) {
  std::map<std::uint32_t, std::pair<int, std::string>> out;
  const std::regex re(prefix + R"((\d+)x(\w+)\s*=\s*(\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    const auto id = static_cast<std::uint32_t>(std::stoul((*it)[3].str()));
    out[id] = {std::stoi((*it)[1].str()), (*it)[2].str()};
  }
  return out;
}

TEST(LtTiles, EveryHeaderTileIdTranslatesToItsName) {
  const auto tiles = parse(header_text(), "CUBLASLT_MATMUL_TILE_");
  ASSERT_GT(tiles.size(), 600u) << "the header parse found too few tile ids";
  for (const auto& [id, rc] : tiles) {
    const auto shape = tn::lt_tile_shape(id);
    ASSERT_TRUE(shape.has_value()) << "tile id " << id << " (" << rc.first << "x" << rc.second
                                   << ") is missing from lt_tiles.cpp: extend the table";
    EXPECT_EQ(shape->m, rc.first) << "tile id " << id;
    EXPECT_EQ(shape->n, std::stoll(rc.second)) << "tile id " << id;
    EXPECT_EQ(tn::lt_tile_label(id), std::to_string(rc.first) + "x" + rc.second);
  }
  // The table holds exactly the header's ids, no more.
  EXPECT_EQ(tn::lt_tile_count(), static_cast<int>(tiles.size()));
}

TEST(LtTiles, KnownValuesAndEdges) {
  // Spot values read off cublasLt.h (cuBLAS 13.1): the ids are not ordered by shape.
  EXPECT_EQ(tn::lt_tile_label(18), "128x64");
  EXPECT_EQ(tn::lt_tile_label(20), "128x128");
  EXPECT_EQ(tn::lt_tile_label(24), "256x128");
  EXPECT_EQ(tn::lt_tile_label(393), "128x8");
  EXPECT_EQ(tn::lt_tile_label(634), "512x1024");
  EXPECT_FALSE(tn::lt_tile_shape(0).has_value());
  EXPECT_EQ(tn::lt_tile_label(0), "undefined");
  EXPECT_FALSE(tn::lt_tile_shape(100000).has_value());
  EXPECT_EQ(tn::lt_tile_label(100000), "tile_id 100000");
}

TEST(LtStages, EveryHeaderStagesIdTranslatesToItsName) {
  const auto stages = parse(header_text(), "CUBLASLT_MATMUL_STAGES_");
  ASSERT_GT(stages.size(), 30u);
  for (const auto& [id, bs] : stages) {
    const auto s = tn::lt_stages(id);
    ASSERT_TRUE(s.has_value()) << "stages id " << id << " is missing: extend the table";
    EXPECT_EQ(s->bk, bs.first) << "stages id " << id;
    EXPECT_EQ(s->stages, bs.second == "AUTO" ? 0 : std::stoi(bs.second)) << "stages id " << id;
    EXPECT_EQ(tn::lt_stages_label(id), std::to_string(bs.first) + "x" + bs.second);
  }
  EXPECT_EQ(tn::lt_stages_count(), static_cast<int>(stages.size()));
  EXPECT_EQ(tn::lt_stages_label(0), "undefined");
  EXPECT_EQ(tn::lt_stages_label(29), "stages_id 29");  // 29 and 30 are unassigned in 13.1
}

}  // namespace
