// Private to the runtime: the kiln_module_target record of a kernel module or a statically
// linked model ("target=NAME;arch=x86_64|aarch64;features=F1,F2", kernel_abi.h), and what this
// CPU lacks of it: both loaders refuse a module before any of its code runs.
#pragma once

#include <string>
#include <string_view>

namespace kiln {

struct TargetRecord {
  std::string target;    // the target's name ("x86-avx512", ...)
  std::string arch;      // "x86_64", "aarch64"
  std::string features;  // comma-separated LLVM feature names
};

TargetRecord parse_target_record(std::string_view record);

// The record's features this CPU lacks, joined by ", " ("" when it has them all); `count` gets
// how many.
std::string missing_cpu_features(const TargetRecord& record, std::size_t* count);

}  // namespace kiln
