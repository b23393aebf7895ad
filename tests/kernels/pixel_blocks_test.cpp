// The helpers of conv2d.1x1's pixel blocks (schedules/conv2d/pixel_blocks.h): the fallback's
// block sizes, the weight-stream split of the packed weights, the clamp of the streams knob
// and which workloads count as small 1x1 convolutions. Nothing is built: unit label.
#include <gtest/gtest.h>

#include "schedules/conv2d/pixel_blocks.h"

namespace kiln::schedules {
namespace {

TEST(PixelBlocks, BlockTilesDivideThePlaneWhenTheyCan) {
  EXPECT_EQ(pick_block_tiles(49, 7), 7);    // 7x7: one block of the whole plane
  EXPECT_EQ(pick_block_tiles(196, 7), 7);   // 14x14: four blocks of 49
  EXPECT_EQ(pick_block_tiles(1, 1), 1);     // 1x1 spatial: no block
  EXPECT_EQ(pick_block_tiles(49, 6), 8);    // 9 tiles: none divides, the widest that fits
  EXPECT_LE(pick_block_tiles(3136, 12) * 12, 64);
}

TEST(PixelBlocks, KChunksSplitTheChannels) {
  EXPECT_EQ(kc_choices(64), (std::vector<int64_t>{0}));
  EXPECT_EQ(kc_choices(960), (std::vector<int64_t>{0, 64, 128, 256}));
  EXPECT_EQ(block_tiles_choices(1), (std::vector<int64_t>{1}));
}

TEST(PixelBlocks, WeightStreamsAreWholeVectors) {
  Config cfg({{"weight_streams", 4}});
  EXPECT_EQ(weight_streams(cfg, 64, 16), 4);
  EXPECT_EQ(weight_streams(cfg, 32, 16), 2);  // two vectors: two streams at most
  EXPECT_EQ(weight_streams(cfg, 16, 16), 1);
  EXPECT_EQ(weight_streams(Config(), 64, 16), 1);  // a log from before the knob
}

TEST(PixelBlocks, SplitStreamsKeepsEachPartContiguousOverK) {
  // 2 output blocks of 4 channels, K = 3: [OB, K, 4] -> [OB, 2, K, 2].
  Values packed(2 * 3 * 4);
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<float>(i);
  Values s = split_weight_streams(packed, 2, 3, 4, 2);
  // Block 0, stream 1, k = 2, lane 0 is channel 2 of block 0 at k = 2: packed[(0*3+2)*4+2].
  EXPECT_EQ(s[((0 * 2 + 1) * 3 + 2) * 2 + 0], packed[(0 * 3 + 2) * 4 + 2]);
  EXPECT_EQ(s[((1 * 2 + 0) * 3 + 1) * 2 + 1], packed[(1 * 3 + 1) * 4 + 1]);
  EXPECT_EQ(split_weight_streams(packed, 2, 3, 4, 1), packed);
}

TEST(PixelBlocks, SmallOneByOneConvolutions) {
  auto conv = [](int64_t hw, int64_t k, int64_t stride) {
    return Workload{"conv2d",
                    {{"N", 1}, {"C", 64}, {"H", hw}, {"W", hw}, {"O", 64}, {"KH", k}, {"KW", k},
                     {"stride", stride}},
                    ir::DataType::f32(),
                    {}};
  };
  EXPECT_TRUE(conv2d_1x1_preferred(conv(7, 1, 1)));
  EXPECT_TRUE(conv2d_1x1_preferred(conv(14, 1, 1)));
  EXPECT_TRUE(conv2d_1x1_preferred(conv(14, 1, 2)));   // strided: a 7x7 output
  EXPECT_FALSE(conv2d_1x1_preferred(conv(28, 1, 2)));  // but not 14x14
  EXPECT_FALSE(conv2d_1x1_preferred(conv(28, 1, 1)));
  EXPECT_FALSE(conv2d_1x1_preferred(conv(7, 3, 1)));
  Workload half = conv(7, 1, 1);
  half.dtype = ir::DataType::f16();
  EXPECT_FALSE(conv2d_1x1_preferred(half));
}

}  // namespace
}  // namespace kiln::schedules
