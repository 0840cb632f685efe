//===- DagReaderOptions.cpp - `data_parallel` and its optimizer ===//

#include "DagReading.h"

#include <cmath>

using namespace mlir;

namespace rankc::dag {

bool Reader::readDataParallel(od::value v, DataParallel &dp) {
  dp.pos = posOf(v);
  od::object obj;
  if (v.get_object().get(obj))
    return fail(dp.pos, "'data_parallel' must be an object");
  unsigned seen = 0;
  for (auto field : obj) {
    std::string_view key;
    od::value fv;
    RANKC_TRY(field.unescaped_key().get(key), dp.pos);
    RANKC_TRY(field.value().get(fv), dp.pos);
    Pos pos = posOf(fv);
    unsigned bit = llvm::StringSwitch<unsigned>(llvm::StringRef(key.data(), key.size()))
                       .Case("bucket_cap_mb", 1)
                       .Case("first_bucket_cap_mb", 2)
                       .Case("order", 4)
                       .Case("ignore", 8)
                       .Case("optimizer", 16)
                       .Default(0);
    if (!bit)
      return fail(pos, "unknown key '" + Twine(key) + "' in 'data_parallel'");
    if (seen & bit)
      return fail(pos, "duplicate key '" + Twine(key) + "' in 'data_parallel'");
    seen |= bit;
    std::string s;
    switch (bit) {
    case 1:
    case 2: {
      double &cap = bit == 1 ? dp.bucketCapMb : dp.firstBucketCapMb;
      if (!getNumber(fv, cap) || !(cap > 0) || cap > 1e12)
        return fail(pos, "'" + Twine(key) + "' must be a positive number of MiB");
      break;
    }
    case 4:
      if (!getString(fv, s) || (s != "ready" && s != "ddp-initial"))
        return fail(pos, "'order' must be \"ready\" or \"ddp-initial\"");
      dp.ddpInitialOrder = s == "ddp-initial";
      break;
    case 8: {
      od::array arr;
      if (fv.get_array().get(arr))
        return fail(pos, "'ignore' must be a list of parameter ids");
      for (auto elem : arr) {
        od::value e;
        if (elem.get(e) || !getString(e, s))
          return fail(pos, "'ignore' must be a list of parameter ids");
        dp.ignore.push_back(s);
      }
      break;
    }
    case 16:
      noteV2("'optimizer'", pos);
      dp.optimizer.emplace();
      if (!readOptimizer(fv, *dp.optimizer))
        return false;
      break;
    }
  }
  return true;
}

bool Reader::readOptimizer(od::value v, Optimizer &opt) {
  opt.pos = posOf(v);
  od::object obj;
  if (v.get_object().get(obj))
    return fail(opt.pos, "'optimizer' must be an object");
  // The fields that are valid depend on "kind", which may come last: read
  // everything first, then check against the kind.
  struct Field {
    std::string key;
    Pos pos;
    double number = 0;
    bool flag = false;
    std::vector<double> list;
    bool isNumber = false, isBool = false, isList = false;
  };
  std::vector<Field> fields;
  std::string kind;
  bool sawKind = false;
  for (auto field : obj) {
    std::string_view key;
    od::value fv;
    RANKC_TRY(field.unescaped_key().get(key), opt.pos);
    RANKC_TRY(field.value().get(fv), opt.pos);
    Pos pos = posOf(fv);
    Field f;
    f.key.assign(key);
    f.pos = pos;
    for (const Field &g : fields)
      if (g.key == f.key)
        return fail(pos, "duplicate key '" + Twine(f.key) + "' in 'optimizer'");
    if (f.key == "kind") {
      if (sawKind)
        return fail(pos, "duplicate key 'kind' in 'optimizer'");
      sawKind = true;
      if (!getString(fv, kind) ||
          (kind != "sgd" && kind != "adam" && kind != "adamw"))
        return fail(pos, "optimizer 'kind' must be \"sgd\", \"adam\" or \"adamw\"");
      continue;
    }
    od::json_type t;
    RANKC_TRY(fv.type().get(t), pos);
    if (t == od::json_type::number) {
      f.isNumber = getNumber(fv, f.number);
    } else if (t == od::json_type::boolean) {
      f.isBool = !fv.get_bool().get(f.flag);
    } else if (t == od::json_type::array) {
      od::array arr;
      f.isList = !fv.get_array().get(arr);
      if (f.isList)
        for (auto elem : arr) {
          od::value e;
          double x;
          if (elem.get(e) || !getNumber(e, x)) {
            f.isList = false;
            break;
          }
          f.list.push_back(x);
        }
    }
    fields.push_back(std::move(f));
  }
  if (!sawKind)
    return fail(opt.pos, "'optimizer' has no 'kind' (\"sgd\", \"adam\" or \"adamw\")");
  opt.kind = kind == "sgd" ? Optimizer::Sgd
             : kind == "adam" ? Optimizer::Adam : Optimizer::AdamW;
  if (opt.kind == Optimizer::AdamW)
    opt.weightDecay = 0.01; // torch.optim.AdamW's default
  bool sawLr = false;
  auto number = [&](const Field &f, double &out, const char *rule,
                    auto valid) {
    if (!f.isNumber || !valid(f.number))
      return fail(f.pos, "optimizer '" + Twine(f.key) + "' must be " + rule);
    out = f.number;
    return true;
  };
  auto nonNegative = [](double x) { return x >= 0 && x < 1e300; };
  for (const Field &f : fields) {
    bool sgd = opt.kind == Optimizer::Sgd, ok = true;
    if (f.key == "lr") {
      sawLr = true;
      ok = number(f, opt.lr, "a number > 0",
                  [](double x) { return x > 0 && x < 1e300; });
    } else if (f.key == "weight_decay") {
      ok = number(f, opt.weightDecay, "a number >= 0", nonNegative);
    } else if (sgd && f.key == "momentum") {
      ok = number(f, opt.momentum, "a number >= 0", nonNegative);
    } else if (sgd && f.key == "dampening") {
      ok = number(f, opt.dampening, "a number",
                  [](double x) { return std::abs(x) < 1e300; });
    } else if (sgd && f.key == "nesterov") {
      if (!f.isBool)
        return fail(f.pos, "optimizer 'nesterov' must be a boolean");
      opt.nesterov = f.flag;
    } else if (!sgd && f.key == "eps") {
      ok = number(f, opt.eps, "a number >= 0", nonNegative);
    } else if (!sgd && f.key == "betas") {
      if (!f.isList || f.list.size() != 2 ||
          !llvm::all_of(f.list, [](double b) { return b >= 0 && b < 1; }))
        return fail(f.pos, "optimizer 'betas' must be a list of two numbers "
                           "in [0, 1)");
      opt.beta1 = f.list[0];
      opt.beta2 = f.list[1];
    } else if (f.key == "maximize" || f.key == "amsgrad") {
      return fail(f.pos, "optimizer '" + Twine(f.key) + "' is not supported");
    } else {
      return fail(f.pos, "unknown key '" + Twine(f.key) + "' for the " +
                             optimizerName(opt.kind) + " optimizer");
    }
    if (!ok)
      return false;
  }
  if (!sawLr)
    return fail(opt.pos, "'optimizer' has no 'lr'");
  if (opt.nesterov && (opt.momentum <= 0 || opt.dampening != 0))
    return fail(opt.pos, "Nesterov momentum needs 'momentum' > 0 and "
                         "'dampening' 0 (as torch.optim.SGD)");
  return true;
}

bool Reader::readState(od::value v, Program &prog) {
  prog.statePos = posOf(v);
  noteV2("'state'", prog.statePos);
  od::object obj;
  if (v.get_object().get(obj))
    return fail(prog.statePos,
                "'state' must be an object {\"input-id\": \"output-name\"}",
                &prog);
  for (auto field : obj) {
    std::string_view key;
    od::value fv;
    RANKC_TRY(field.unescaped_key().get(key), prog.statePos);
    RANKC_TRY(field.value().get(fv), prog.statePos);
    StatePair pair;
    pair.inputId.assign(key);
    pair.pos = posOf(fv);
    if (!getString(fv, pair.outputName))
      return fail(pair.pos, "state of '" + pair.inputId +
                                "' must name an output (a string)",
                  &prog, pair.inputId);
    for (const StatePair &other : prog.state)
      if (other.inputId == pair.inputId)
        return fail(pair.pos, "'state' names input '" + pair.inputId +
                                  "' twice", &prog, pair.inputId);
    prog.state.push_back(std::move(pair));
  }
  return true;
}

} // namespace rankc::dag
