#include "compiler/codegen/lane_broadcasts.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopAccessAnalysis.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsAArch64.h>

#include <array>
#include <vector>

namespace kiln::codegen {
namespace {

// A broadcast of a loaded value: load -> insertelement at lane 0 -> zero shuffle, each used
// only by the next.
struct Broadcast {
  llvm::LoadInst* load;
  llvm::InsertElementInst* insert;
  llvm::ShuffleVectorInst* splat;
};

// f16 values, and the 32-bit bf16 pairs (BFDOT) and int8 quads (SDOT/UDOT) that low-precision
// dot products broadcast as one i32.
bool is_lane_type(llvm::Type* t) {
  return t->isHalfTy() || t->isIntegerTy(32);
}

bool as_broadcast(llvm::ShuffleVectorInst* s, Broadcast* out) {
  if (!s->isZeroEltSplat()) return false;
  auto* ins = llvm::dyn_cast<llvm::InsertElementInst>(s->getOperand(0));
  if (!ins || !ins->hasOneUse()) return false;
  auto* lane = llvm::dyn_cast<llvm::ConstantInt>(ins->getOperand(2));
  if (!lane || !lane->isZero()) return false;
  auto* load = llvm::dyn_cast<llvm::LoadInst>(ins->getOperand(1));
  if (!load || !load->isSimple() || !load->hasOneUse() || !is_lane_type(load->getType()) ||
      load->getParent() != s->getParent() || ins->getParent() != s->getParent())
    return false;
  *out = {load, ins, s};
  return true;
}

// The dot products whose two sources multiply alike (a pair or quad of one by the same of the
// other), so that the sources may trade places: the by-element forms take the lane from the
// second source only. (usdot, signed by unsigned, may not.)
bool is_symmetric_dot(llvm::Value* v) {
  auto* call = llvm::dyn_cast<llvm::CallInst>(v);
  if (!call || !call->getCalledFunction()) return false;
  switch (call->getCalledFunction()->getIntrinsicID()) {
    case llvm::Intrinsic::aarch64_neon_bfdot:
    case llvm::Intrinsic::aarch64_neon_sdot:
    case llvm::Intrinsic::aarch64_neon_udot:
      return true;
    default:
      return false;
  }
}

// Puts `lane` (or a bitcast of it) second among a symmetric dot product's sources.
void lane_second(llvm::Value* lane) {
  // A copy: trading operands edits the use list being walked.
  const llvm::SmallVector<llvm::User*, 8> users(lane->users());
  for (llvm::User* u : users) {
    if (llvm::isa<llvm::BitCastInst>(u)) {
      lane_second(u);
      continue;
    }
    auto* call = llvm::dyn_cast<llvm::CallInst>(u);
    if (call && is_symmetric_dot(call) && call->getArgOperand(1) == lane &&
        call->getArgOperand(2) != lane) {
      llvm::Value* other = call->getArgOperand(2);
      call->setArgOperand(2, lane);
      call->setArgOperand(1, other);
    }
  }
}

// Whether `v` (or a bitcast of it) is a source of the intrinsic `id`.
bool feeds(llvm::Value* v, llvm::Intrinsic::ID id) {
  for (llvm::User* u : v->users()) {
    if (llvm::isa<llvm::BitCastInst>(u) && feeds(u, id)) return true;
    auto* call = llvm::dyn_cast<llvm::CallInst>(u);
    if (call && call->getCalledFunction() && call->getCalledFunction()->getIntrinsicID() == id)
      return true;
  }
  return false;
}

// Rewrites the broadcasts `group` (element k at offset k from the first's address) into one
// vector load placed before the earliest of them, and lane splats. The bf16 pairs load as f32
// lanes: by-element BFDOT matches a lane of an f32 vector (SDOT/UDOT one of an i32 vector).
void rewrite(const std::vector<Broadcast*>& group, llvm::Instruction* earliest) {
  llvm::LoadInst* first = group[0]->load;
  llvm::IRBuilder<> b(earliest);
  llvm::Type* elem = feeds(group[0]->splat, llvm::Intrinsic::aarch64_neon_bfdot) ? b.getFloatTy()
                                                                                 : first->getType();
  auto* vec_type = llvm::FixedVectorType::get(elem, group.size());
  llvm::LoadInst* vec =
      b.CreateAlignedLoad(vec_type, first->getPointerOperand(), first->getAlign(), "lanes");
  // The alias scopes of the scalar loads, when they agree (they read one buffer).
  llvm::AAMDNodes aa = first->getAAMetadata();
  for (const Broadcast* m : group)
    if (m->load->getAAMetadata() != aa) aa = llvm::AAMDNodes();
  vec->setAAMetadata(aa);
  for (std::size_t k = 0; k < group.size(); ++k) {
    llvm::ShuffleVectorInst* splat = group[k]->splat;
    const auto width = llvm::cast<llvm::FixedVectorType>(splat->getType())->getNumElements();
    llvm::IRBuilder<> at(splat);
    llvm::Value* lane = at.CreateBitCast(
        at.CreateShuffleVector(vec, llvm::SmallVector<int, 16>(width, static_cast<int>(k)), "lane"),
        splat->getType());
    splat->replaceAllUsesWith(lane);
    splat->eraseFromParent();
    group[k]->insert->eraseFromParent();
    group[k]->load->eraseFromParent();
    lane_second(lane);
  }
}

int rewrite_block(llvm::BasicBlock& bb, llvm::ScalarEvolution& se, const llvm::DataLayout& dl) {
  // The broadcasts in program order, and how many memory writes the block makes before each
  // one's load: two loads with the same count have no write between them.
  std::vector<Broadcast> found;
  std::vector<int> writes_before;
  llvm::DenseMap<llvm::Instruction*, int> writes_at;
  int writes = 0;
  for (llvm::Instruction& i : bb) {
    writes_at[&i] = writes;
    if (i.mayWriteToMemory()) ++writes;
    Broadcast b;
    if (auto* s = llvm::dyn_cast<llvm::ShuffleVectorInst>(&i); s && as_broadcast(s, &b)) {
      found.push_back(b);
      writes_before.push_back(writes_at[b.load]);
    }
  }
  std::vector<bool> used(found.size(), false);
  int rewritten = 0;
  for (std::size_t a = 0; a < found.size(); ++a) {
    if (used[a]) continue;
    llvm::Type* elem = found[a].load->getType();
    // A q register's lanes (8 halves, 4 words), or a d register's half of them.
    const std::size_t full = 128 / elem->getPrimitiveSizeInBits();
    // The broadcasts of the 1 .. full - 1 elements after a's address whose loads come after
    // a's with no memory write between: a vector load in place of a's reads what they would.
    std::array<int, 8> at;
    at.fill(-1);
    at[0] = static_cast<int>(a);
    for (std::size_t c = 0; c < found.size(); ++c) {
      if (used[c] || c == a || writes_before[c] != writes_before[a] ||
          found[c].load->getType() != elem || !found[a].load->comesBefore(found[c].load))
        continue;
      const std::optional<int> d =
          llvm::getPointersDiff(elem, found[a].load->getPointerOperand(), elem,
                                found[c].load->getPointerOperand(), dl, se, /*StrictCheck=*/true);
      if (d && *d > 0 && static_cast<std::size_t>(*d) < full && at[*d] < 0)
        at[*d] = static_cast<int>(c);
    }
    std::size_t n = 0;
    while (n < full && at[n] >= 0) ++n;
    // Every lane of the load one of the scalar loads' values.
    n = n >= full ? full : n >= full / 2 ? full / 2 : 0;
    if (n == 0) continue;
    std::vector<Broadcast*> group;
    for (std::size_t k = 0; k < n; ++k) {
      group.push_back(&found[static_cast<std::size_t>(at[k])]);
      used[static_cast<std::size_t>(at[k])] = true;
    }
    rewrite(group, found[a].load);
    ++rewritten;
  }
  return rewritten;
}

}  // namespace

int broadcast_loads_by_lane(llvm::Module& m) {
  const llvm::DataLayout& dl = m.getDataLayout();
  llvm::TargetLibraryInfoImpl tlii(llvm::Triple(m.getTargetTriple()));
  int rewritten = 0;
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    llvm::TargetLibraryInfo tli(tlii, &f);
    llvm::AssumptionCache ac(f);
    llvm::DominatorTree dt(f);
    llvm::LoopInfo li(dt);
    llvm::ScalarEvolution se(f, tli, ac, dt, li);
    for (llvm::BasicBlock& bb : f) rewritten += rewrite_block(bb, se, dl);
  }
  return rewritten;
}

}  // namespace kiln::codegen
