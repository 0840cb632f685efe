//===- ContractionRules.cpp - einsum and matmul ===//
//
// The einsum spec and the shapes of contractions.
//
//===----------------------------------------------------------------------===//

#include "InferenceRules.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace rankc::dag {

std::optional<EinsumSpec> parseEinsum(std::string_view spec,
                                      std::string &error) {
  EinsumSpec out;
  size_t arrow = spec.find("->");
  if (arrow == std::string_view::npos) {
    error = "needs an explicit output ('...->...')";
    return std::nullopt;
  }
  std::string_view lhs = spec.substr(0, arrow), rhs = spec.substr(arrow + 2);
  auto letters = [](std::string_view s) {
    return llvm::all_of(s, [](char c) { return llvm::isAlpha(c); });
  };
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    std::string_view term = lhs.substr(start, comma - start);
    if (!letters(term)) {
      error = "operand terms must be letters only";
      return std::nullopt;
    }
    out.inputs.emplace_back(term);
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  if (!letters(rhs)) {
    error = "the output term must be letters only";
    return std::nullopt;
  }
  out.output = std::string(rhs);
  for (size_t i = 0; i < rhs.size(); ++i) {
    if (rhs.find(rhs[i], i + 1) != std::string_view::npos) {
      error = std::string("output letter '") + rhs[i] + "' appears twice";
      return std::nullopt;
    }
    if (lhs.find(rhs[i]) == std::string_view::npos) {
      error = std::string("output letter '") + rhs[i] +
              "' appears in no operand";
      return std::nullopt;
    }
  }
  return out;
}


LogicalResult inferContraction(RuleContext &r) {
  Node &n = r.node;
  switch (n.op) {
  case Op::Einsum: {
    std::string why;
    auto spec = parseEinsum(n.rare().spec, why);
    if (!spec)
      return r.error() << "invalid einsum spec '" << n.rare().spec << "': " << why;
    if (spec->inputs.size() != n.args.size())
      return r.error() << "einsum spec '" << n.rare().spec << "' has "
                       << spec->inputs.size() << " operand terms but "
                       << n.args.size() << " arguments";
    if (failed(r.sameDTypes()))
      return failure();
    int64_t dims[128];
    std::fill(std::begin(dims), std::end(dims), -1);
    for (size_t i = 0; i < n.args.size(); ++i) {
      const std::string &term = spec->inputs[i];
      llvm::ArrayRef<int64_t> s = r.arg(i).outShape;
      if (term.size() != s.size())
        return r.error() << "einsum term '" << term << "' has "
                         << term.size() << " letters but operand "
                         << i << " has rank " << s.size();
      for (size_t j = 0; j < term.size(); ++j) {
        int64_t &d = dims[uint8_t(term[j])];
        if (d >= 0 && d != s[j])
          return r.error() << "einsum letter '" << term[j]
                           << "' stands for sizes " << d << " and " << s[j];
        d = s[j];
      }
    }
    n.outShape.clear();
    for (char c : spec->output)
      n.outShape.push_back(dims[uint8_t(c)]);
    n.outDType = r.arg(0).outDType;
    break;
  }
  case Op::Matmul: {
    if (failed(r.sameDTypes()))
      return failure();
    const auto &a = r.arg(0).outShape, &b = r.arg(1).outShape;
    if (a.size() != b.size() || (a.size() != 2 && a.size() != 3))
      return r.error() << "'matmul' takes two operands of rank 2 or two of "
                            "rank 3, got "
                         << shapeText(a) << " and " << shapeText(b);
    size_t rank = a.size();
    if (a[rank - 1] != b[rank - 2] || (rank == 3 && a[0] != b[0]))
      return r.error() << "'matmul' shapes " << shapeText(a) << " and "
                       << shapeText(b) << " do not match";
    n.outShape = a;
    n.outShape[rank - 1] = b[rank - 1];
    n.outDType = r.arg(0).outDType;
    break;
  }
  default:
    break;
  }
  return success();
}

} // namespace rankc::dag
