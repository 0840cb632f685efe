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
                       .Case("accumulate", 32)
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
    case 32:
      noteVersion(3, "'accumulate'", pos);
      dp.accumulatePos = pos;
      if (!getInt(fv, dp.accumulate) || dp.accumulate < 1 ||
          dp.accumulate > (int64_t(1) << 40))
        return fail(pos, "'accumulate' must be an integer >= 1 (micro-steps "
                         "per update)");
      break;
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

bool Reader::readOptionValue(od::value v, OptionField &f) {
  od::json_type t;
  RANKC_TRY(v.type().get(t), f.pos);
  if (t == od::json_type::number) {
    od::number_type n;
    if (!v.get_number_type().get(n) && n == od::number_type::signed_integer) {
      f.isInt = f.isNumber = !v.get_int64().get(f.integer);
      f.number = double(f.integer);
    } else {
      f.isNumber = getNumber(v, f.number);
    }
  } else if (t == od::json_type::boolean) {
    f.isBool = !v.get_bool().get(f.flag);
  } else if (t == od::json_type::array) {
    od::array arr;
    f.isList = !v.get_array().get(arr);
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
  return true;
}

bool Reader::readOptimizer(od::value v, Optimizer &opt) {
  opt.pos = posOf(v);
  od::object obj;
  if (v.get_object().get(obj))
    return fail(opt.pos, "'optimizer' must be an object");
  // The fields that are valid depend on "kind", which may come last: read
  // everything first, then check against the kind.
  using Field = OptionField;
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
    if (f.key == "lr_schedule") {
      noteVersion(3, "'lr_schedule'", pos);
      if (!readLrSchedule(fv, opt))
        return false;
      continue;
    }
    if (f.key == "clip_grad_norm") {
      noteVersion(3, "'clip_grad_norm'", pos);
      if (!readClip(fv, opt))
        return false;
      continue;
    }
    if (f.key == "lr") {
      od::json_type t;
      RANKC_TRY(fv.type().get(t), pos);
      if (t == od::json_type::object) {
        noteVersion(3, "an 'lr' input", pos);
        opt.lrPos = pos;
        od::object lo;
        std::string_view lk;
        od::value lv;
        bool ok = !fv.get_object().get(lo);
        size_t keys = 0;
        for (auto lf : lo) {
          ++keys;
          ok = ok && !lf.unescaped_key().get(lk) && lk == "input" &&
               !lf.value().get(lv) && getString(lv, opt.lrInput) &&
               !opt.lrInput.empty();
        }
        if (!ok || keys != 1)
          return fail(pos, "optimizer 'lr' must be a number > 0 or "
                           "{\"input\": \"node-id\"}");
        fields.push_back(std::move(f)); // seen: 'lr' is given
        continue;
      }
    }
    if (f.key == "kind") {
      if (sawKind)
        return fail(pos, "duplicate key 'kind' in 'optimizer'");
      sawKind = true;
      if (!getString(fv, kind) ||
          (kind != "sgd" && kind != "adam" && kind != "adamw"))
        return fail(pos, "optimizer 'kind' must be \"sgd\", \"adam\" or \"adamw\"");
      continue;
    }
    if (!readOptionValue(fv, f))
      return false;
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
    if (f.key == "lr" && !opt.lrInput.empty()) {
      sawLr = true;
    } else if (f.key == "lr") {
      sawLr = true;
      ok = number(f, opt.lr, "a number > 0 or {\"input\": \"node-id\"}",
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
  if (!opt.lrInput.empty() && !opt.lrSchedule.empty())
    return fail(opt.lrSchedule.front().pos,
                "'lr_schedule' cannot be used with an 'lr' input (the input "
                "is the learning rate of each step)");
  if (opt.nesterov && (opt.momentum <= 0 || opt.dampening != 0))
    return fail(opt.pos, "Nesterov momentum needs 'momentum' > 0 and "
                         "'dampening' 0 (as torch.optim.SGD)");
  return true;
}

namespace {
const char *const kPhaseKinds =
    "\"constant\", \"linear\", \"cosine\", \"step\" or \"exponential\"";
}

bool Reader::readLrSchedule(od::value v, Optimizer &opt) {
  Pos pos = posOf(v);
  od::array arr;
  if (v.get_array().get(arr))
    return fail(pos, "'lr_schedule' must be a list of phases");
  for (auto elem : arr) {
    od::value pv;
    RANKC_TRY(elem.get(pv), pos);
    LrPhase ph;
    ph.pos = posOf(pv);
    od::object obj;
    if (pv.get_object().get(obj))
      return fail(ph.pos, "an 'lr_schedule' phase must be an object with a "
                          "'kind'");
    // Fields may come before "kind": read them all, then check.
    using Field = OptionField;
    std::vector<Field> fields;
    std::string kind;
    bool sawKind = false;
    for (auto field : obj) {
      std::string_view key;
      od::value fv;
      RANKC_TRY(field.unescaped_key().get(key), ph.pos);
      RANKC_TRY(field.value().get(fv), ph.pos);
      Field f;
      f.key.assign(key);
      f.pos = posOf(fv);
      for (const Field &g : fields)
        if (g.key == f.key)
          return fail(f.pos, "duplicate key '" + Twine(f.key) +
                                 "' in an 'lr_schedule' phase");
      if (f.key == "kind") {
        if (sawKind)
          return fail(f.pos, "duplicate key 'kind' in an 'lr_schedule' phase");
        sawKind = true;
        if (!getString(fv, kind))
          kind = "?";
        continue;
      }
      if (!readOptionValue(fv, f))
        return false;
      fields.push_back(std::move(f));
    }
    static const llvm::StringMap<LrPhase::Kind> kinds = {
        {"constant", LrPhase::Constant}, {"linear", LrPhase::Linear},
        {"cosine", LrPhase::Cosine},     {"step", LrPhase::Step},
        {"exponential", LrPhase::Exponential}};
    auto k = kinds.find(kind);
    if (!sawKind || k == kinds.end())
      return fail(ph.pos, "an 'lr_schedule' phase's 'kind' must be " +
                              Twine(kPhaseKinds));
    ph.kind = k->second;
    bool sawGamma = false;
    for (const Field &f : fields) {
      auto number = [&](double &out, bool positive) {
        if (!f.isNumber || !(positive ? f.number > 0 : f.number >= 0) ||
            !(f.number < 1e300))
          return fail(f.pos, "lr_schedule '" + Twine(f.key) + "' must be " +
                                 (positive ? "a number > 0" : "a number >= 0"));
        out = f.number;
        return true;
      };
      auto count = [&](int64_t &out) {
        if (!f.isInt || f.integer < 1)
          return fail(f.pos, "lr_schedule '" + Twine(f.key) +
                                 "' must be an integer >= 1");
        out = f.integer;
        return true;
      };
      bool ok;
      if (f.key == "steps")
        ok = count(ph.steps);
      else if (f.key == "factor" && ph.kind == LrPhase::Constant)
        ok = number(ph.factor, false);
      else if (f.key == "start_factor" && ph.kind == LrPhase::Linear)
        ok = number(ph.startFactor, false);
      else if (f.key == "end_factor" && ph.kind == LrPhase::Linear)
        ok = number(ph.endFactor, false);
      else if (f.key == "min_factor" && ph.kind == LrPhase::Cosine)
        ok = number(ph.minFactor, false);
      else if (f.key == "step_size" && ph.kind == LrPhase::Step)
        ok = count(ph.stepSize);
      else if (f.key == "gamma" && (ph.kind == LrPhase::Step ||
                                    ph.kind == LrPhase::Exponential))
        ok = (sawGamma = true, number(ph.gamma, false));
      else
        return fail(f.pos, "unknown key '" + Twine(f.key) + "' for an '" +
                               kind + "' lr_schedule phase");
      if (!ok)
        return false;
    }
    if ((ph.kind == LrPhase::Linear || ph.kind == LrPhase::Cosine) &&
        !ph.steps)
      return fail(ph.pos, "a '" + Twine(kind) +
                              "' lr_schedule phase needs 'steps' (its length "
                              "in optimizer steps)");
    if (ph.kind == LrPhase::Step && !ph.stepSize)
      return fail(ph.pos, "a 'step' lr_schedule phase needs 'step_size'");
    if (ph.kind == LrPhase::Exponential && !sawGamma)
      return fail(ph.pos, "an 'exponential' lr_schedule phase needs 'gamma'");
    if (!opt.lrSchedule.empty() && !opt.lrSchedule.back().steps)
      return fail(opt.lrSchedule.back().pos,
                  "every lr_schedule phase but the last needs 'steps' (how "
                  "many optimizer steps it lasts)");
    opt.lrSchedule.push_back(ph);
  }
  if (opt.lrSchedule.empty())
    return fail(pos, "'lr_schedule' must list at least one phase");
  return true;
}

bool Reader::readClip(od::value v, Optimizer &opt) {
  ClipGradNorm clip;
  clip.pos = posOf(v);
  od::object obj;
  if (v.get_object().get(obj))
    return fail(clip.pos, "'clip_grad_norm' must be an object "
                          "{\"max_norm\": M, \"norm_type\": 2 or \"inf\"}");
  bool sawMax = false;
  for (auto field : obj) {
    std::string_view key;
    od::value fv;
    RANKC_TRY(field.unescaped_key().get(key), clip.pos);
    RANKC_TRY(field.value().get(fv), clip.pos);
    Pos pos = posOf(fv);
    if (key == "max_norm") {
      if (sawMax)
        return fail(pos, "duplicate key 'max_norm' in 'clip_grad_norm'");
      sawMax = true;
      if (!getNumber(fv, clip.maxNorm) || !(clip.maxNorm > 0) ||
          !(clip.maxNorm < 1e300))
        return fail(pos, "clip_grad_norm 'max_norm' must be a number > 0");
    } else if (key == "norm_type") {
      od::json_type t;
      RANKC_TRY(fv.type().get(t), pos);
      std::string s;
      double d = 0;
      if (t == od::json_type::string && getString(fv, s) && s == "inf")
        clip.inf = true;
      else if (!(t == od::json_type::number && getNumber(fv, d) && d == 2))
        return fail(pos, "clip_grad_norm 'norm_type' must be 2 or \"inf\"");
    } else if (key == "output") {
      clip.outputPos = pos;
      if (!getString(fv, clip.output) || clip.output.empty())
        return fail(pos, "clip_grad_norm 'output' must be an output name");
    } else {
      return fail(pos, "unknown key '" + Twine(key) + "' in 'clip_grad_norm'");
    }
  }
  if (!sawMax)
    return fail(clip.pos, "'clip_grad_norm' has no 'max_norm'");
  opt.clip = clip;
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
