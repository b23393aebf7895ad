// attention_mask_form: which masks the attention kernel reads as they broadcast, and how.
#include <gtest/gtest.h>

#include "compiler/graph/rewrites/fuse_attention.h"

namespace kiln::graph {
namespace {

// [batches, every, rows] of the form, or {} when the mask is refused.
std::vector<int64_t> form(const std::vector<int64_t>& scores, const std::vector<int64_t>& mask) {
  std::optional<AttentionMask> f = attention_mask_form(scores, mask);
  return f ? std::vector<int64_t>{f->batches, f->every, f->rows} : std::vector<int64_t>{};
}

TEST(AttentionMaskForm, BroadcastsAsTheKernelReads) {
  const std::vector<int64_t> s = {2, 12, 7, 9};  // 2 sequences, 12 heads, 7 queries, 9 keys
  using V = std::vector<int64_t>;
  EXPECT_EQ(form(s, {2, 1, 1, 9}), (V{2, 12, 1}));   // BERT's padding mask
  EXPECT_EQ(form(s, {1, 1, 7, 9}), (V{1, 24, 7}));   // causal
  EXPECT_EQ(form(s, {7, 9}), (V{1, 24, 7}));         // causal, rank 2
  EXPECT_EQ(form(s, {9}), (V{1, 24, 1}));            // one row for all
  EXPECT_EQ(form(s, {12, 7, 9}), (V{12, 1, 7}));     // a per-head bias
  EXPECT_EQ(form(s, {2, 12, 7, 9}), (V{24, 1, 7}));  // a full mask
  EXPECT_EQ(form(s, {2, 12, 1, 9}), (V{24, 1, 1}));
  EXPECT_EQ(form(s, {1, 7, 1}), V{});  // broadcast along the keys
  EXPECT_EQ(form(s, {2, 1, 7, 1}), V{});
  EXPECT_EQ(form(s, {3, 9}), V{});            // rows neither 1 nor M
  EXPECT_EQ(form(s, {1, 2, 12, 7, 9}), V{});  // a higher rank
  // Kept batch dimensions on both sides of a broadcast one are not one run.
  EXPECT_EQ(form({2, 3, 4, 7, 9}, {2, 1, 4, 7, 9}), V{});
  EXPECT_EQ(form({2, 1, 4, 7, 9}, {2, 1, 4, 7, 9}), (V{8, 1, 7}));  // a 1 between is no gap
}

}  // namespace
}  // namespace kiln::graph
