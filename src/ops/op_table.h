// The op table: for each (domain, op type) one or more definitions, each applying from an opset
// version on. A definition parses a node's attributes and returns its kernel, and states its
// numeric contract. Families register their ops in register_<family>_ops() (one file each);
// register_all.cc calls every family. See docs/adding-an-op.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/attrs.h"
#include "ops/kernel.h"

namespace pg::ops {

// How exactly an op's reference kernel reproduces ONNX's reference implementation.
enum class NumericContract : uint8_t {
    kExact,        // bit-exact (data movement, integer math, comparisons)
    kRounding,     // one IEEE rounding per element (add, mul, ...)
    kApproximate,  // libm / accumulation order differences (exp, conv, matmul, reductions)
    kRandom,       // seeded random output (RandomNormal, Dropout in training mode)
};

const char* contract_name(NumericContract c);

using MakeKernel = std::function<KernelFn(const Attrs& attrs, int64_t opset)>;

// domain and name view static storage (string literals). The table keeps a few hundred of these
// for the whole process: with two std::strings and 64-bit fields an entry took 112 bytes, now 72
// (23 KiB -> 16 KiB with the reserve, a per-process cost that the memory target of a small model
// feels; docs/performance.md).
struct OpDef {
    std::string_view domain;  // "" = default ONNX domain
    std::string_view name;
    int32_t since_version = 1;  // applies from this opset until the next definition of the op
    NumericContract contract = NumericContract::kExact;
    MakeKernel make;
};

class OpTable {
  public:
    void add(OpDef def);
    // Shorthand for the default domain.
    void add(std::string_view name, int32_t since, NumericContract c, MakeKernel make) {
        add(OpDef{"", name, since, c, std::move(make)});
    }
    // The definition in force for `name` at `opset`, or nullptr (unknown op, or opset too old).
    const OpDef* find(const std::string& domain, const std::string& name, int64_t opset) const;
    // Every registered "domain::name" (domain omitted for ONNX ops), sorted.
    std::vector<std::string> names() const;
    // Room for n definitions, so that building the table does not leave the freed buffers of
    // its growth behind.
    void reserve(size_t n) { defs_.reserve(n); }

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
