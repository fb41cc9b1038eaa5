// The op table: for each (domain, op type) one or more definitions, each applying from an opset
// version on. A definition parses a node's attributes and returns its kernel, and states its
// numeric contract. Families register their ops in register_<family>_ops() (one file each);
// register_all.cc calls every family. See docs/adding-an-op.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/attrs.h"
#include "ops/kernel.h"

namespace pg::ops {

// How exactly an op's reference kernel reproduces ONNX's reference implementation.
enum class NumericContract {
    kExact,        // bit-exact (data movement, integer math, comparisons)
    kRounding,     // one IEEE rounding per element (add, mul, ...)
    kApproximate,  // libm / accumulation order differences (exp, conv, matmul, reductions)
    kRandom,       // seeded random output (RandomNormal, Dropout in training mode)
};

const char* contract_name(NumericContract c);

using MakeKernel = std::function<KernelFn(const Attrs& attrs, int64_t opset)>;

struct OpDef {
    std::string domain;  // "" = default ONNX domain
    std::string name;
    int64_t since_version = 1;  // applies from this opset until the next definition of the op
    NumericContract contract = NumericContract::kExact;
    MakeKernel make;
};

class OpTable {
  public:
    void add(OpDef def);
    // Shorthand for the default domain.
    void add(const std::string& name, int64_t since, NumericContract c, MakeKernel make) {
        add(OpDef{"", name, since, c, std::move(make)});
    }
    // The definition in force for `name` at `opset`, or nullptr (unknown op, or opset too old).
    const OpDef* find(const std::string& domain, const std::string& name, int64_t opset) const;
    // Every registered "domain::name" (domain omitted for ONNX ops), sorted.
    std::vector<std::string> names() const;
    // Drops spare capacity (the table is built once and kept for the process).
    void shrink_to_fit() { defs_.shrink_to_fit(); }

  private:
    // One flat array sorted by (domain, name, since_version): a few hundred definitions in one
    // allocation (a map of vectors took two allocations and ~170 more bytes per op, kept for the
    // whole process; docs/performance.md, memory).
    std::vector<OpDef> defs_;
};

// The table of every op, built on first use.
const OpTable& op_table();

// Defined in register_all.cc: calls each family's register function.
void register_all_ops(OpTable& table);

}  // namespace pg::ops
