// CPUs and boards by name (compiler/target/profiles.h): every profile builds the fallback of
// every template that applies to a dense, a conv and a depthwise conv in each dtype it may run,
// and a profile's features decide the instructions whatever this machine has: a Sapphire
// Rapids or Zen 4 build uses the bf16 dot products on an AVX2-only build machine, a Graviton3
// build BFMMLA/BFDOT, a Raspberry Pi 5 build f16 FMAs, and a Zen 3 or Raspberry Pi 4 build none
// of them.
#include "compiler/target/profiles.h"

#include <gtest/gtest.h>

#include "compiler/base/error.h"
#include "compiler/codegen/codegen.h"
#include "schedules/registry.h"
#include "tuner/builder.h"

namespace kiln::testing {
namespace {

using ir::DataType;
using schedules::OpTemplate;
using schedules::Workload;

Workload dense(DataType t) {
  return {"dense", {{"M", 4}, {"N", 32}, {"K", 64}}, t, {}};
}
Workload conv(DataType t, int64_t groups = 1) {
  return {"conv2d",
          {{"N", 1},
           {"C", 16},
           {"H", 8},
           {"W", 8},
           {"O", 16},
           {"KH", 3},
           {"KW", 3},
           {"PH", 1},
           {"PW", 1},
           {"groups", groups}},
          t,
          {}};
}

// The assembly of `tpl`'s fallback for `w` on target `t` as the profile names it.
std::string assembly(const OpTemplate& tpl, const Workload& w, const Target& t) {
  codegen::CodegenOptions o;
  o.emit_assembly = true;
  return codegen::compile_module(
             {tuner::lower_template(tpl, w, t, tpl.fallback(w, t), "kernel").func}, t, o)
      .assembly;
}

// The templates that build `w` on `t` (none where the target has no kernel for its dtype).
std::vector<const OpTemplate*> applicable(const Workload& w, const Target& t) {
  try {
    return schedules::templates_for(w, t);
  } catch (const UserError&) {
    return {};
  }
}

// The default (first) template's assembly for `w` on the named target.
std::string default_assembly(const Workload& w, const std::string& target) {
  const Target t = target_from_name(target);
  return assembly(*schedules::templates_for(w, t).front(), w, t);
}

TEST(Profiles, EveryProfileBuildsEveryApplicableFallback) {
  for (const CpuProfile& p : cpu_profiles()) {
    int built = 0;
    for (DataType dt : {DataType::f32(), DataType::bf16(), DataType::f16(), DataType::u8()})
      for (const Workload& w : {dense(dt), conv(dt), conv(dt, 16)})
        for (const OpTemplate* tpl : applicable(w, p.target)) {
          SCOPED_TRACE(p.name + ": " + tpl->name() + " " + w.str());
          EXPECT_NO_THROW(assembly(*tpl, w, p.target));
          ++built;
        }
    EXPECT_GE(built, 5) << p.name;
  }
}

TEST(Profiles, FeaturesDecideTheInstructionsNotTheBuildMachine) {
  for (const char* x86 : {"sapphirerapids", "znver4", "cooperlake"}) {
    const std::string s = default_assembly(dense(DataType::bf16()), x86);
    EXPECT_TRUE(s.find("vdpbf16ps") != std::string::npos ||
                s.find("tdpbf16ps") != std::string::npos)
        << x86;
  }
  EXPECT_EQ(default_assembly(dense(DataType::bf16()), "znver3").find("dpbf16"), std::string::npos);
  const std::string g3 = default_assembly(dense(DataType::bf16()), "graviton3");
  EXPECT_TRUE(g3.find("bfmmla") != std::string::npos || g3.find("bfdot") != std::string::npos);
  EXPECT_NE(default_assembly(dense(DataType::f16()), "rpi5").find(".8h"), std::string::npos);
  EXPECT_TRUE(schedules::templates_for(dense(DataType::bf16()), target_from_name("rpi4"))
                  .front()
                  ->name()
                  .find("bf16") == std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
