//===- Plan.cpp - plan.json of a partitioned module -----------------------===//

#include "rankc/Target/Plan.h"
#include "rankc/Analysis/CrossRankAnalysis.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Support/DagLocations.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

#include <functional>

using namespace mlir;

namespace rankc {

/// DAG nodes computed by a part: distinct node ids among its top-level ops
/// (one DAG node may become several ops), plus ops that name none.
static unsigned countNodes(func::CallOp call, SymbolTable &symbols) {
  auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
  if (!callee)
    return 0;
  llvm::StringSet<> ids;
  unsigned unnamed = 0;
  for (Operation &op : callee.getBody().front().without_terminator()) {
    std::string id = dag::dagNodeId(op.getLoc());
    if (id.empty())
      ++unnamed;
    else
      ids.insert(id);
  }
  return ids.size() + unnamed;
}

std::vector<PlanPart> readSchedule(func::FuncOp program, SymbolTable &symbols) {
  // The part that computes each updated parameter: the call whose result
  // the program returns as that parameter's update.
  llvm::DenseMap<Operation *, std::vector<std::string>> updatesOf;
  Operation *ret = program.getBody().front().getTerminator();
  for (unsigned i = 0; i < program.getNumResults(); ++i)
    if (auto p = program.getResultAttrOfType<StringAttr>(
            i, comm::CommDialect::kUpdateOf))
      if (Operation *def = ret->getOperand(i).getDefiningOp())
        updatesOf[def].push_back(p.str());
  std::vector<PlanPart> parts;
  PlanPart current;
  auto started = [&] { return current.call || !current.sends.empty(); };
  auto flush = [&] {
    if (current.call || !current.waits.empty() || !current.sends.empty())
      parts.push_back(std::move(current));
    current = PlanPart();
  };
  for (Operation &op : program.getBody().front().without_terminator()) {
    if (isa<comm::RecvOp, comm::AllReduceOp>(op)) {
      if (started())
        flush();
      current.waits.push_back(&op);
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      if (started())
        flush();
      current.call = call;
      current.ops = countNodes(call, symbols);
      current.updates = updatesOf.lookup(call);
    } else if (isa<comm::SendOp>(op)) {
      current.sends.push_back(&op);
    }
  }
  flush();
  return parts;
}

std::vector<BucketInfo> readBuckets(ModuleOp module) {
  std::vector<BucketInfo> buckets;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (!fn->hasAttr(comm::CommDialect::kRanks))
      continue;
    for (Operation &op : fn.getBody().front()) {
      auto bucket = op.getAttrOfType<comm::BucketAttr>(comm::CommDialect::kBucket);
      if (!bucket)
        continue;
      BucketInfo info;
      for (Attribute p : bucket.getParams())
        info.params.push_back(cast<StringAttr>(p).str());
      info.dtype = bucket.getDtype().str();
      info.bytes = bucket.getBytes();
      if (bucket.getReduceSeconds()) {
        info.ready = bucket.getReadySeconds().getValueAsDouble();
        info.start = bucket.getStartSeconds().getValueAsDouble();
        info.reduce = bucket.getReduceSeconds().getValueAsDouble();
        if (bucket.getExposedSeconds())
          info.exposed = bucket.getExposedSeconds().getValueAsDouble();
      }
      buckets.push_back(std::move(info));
    }
    if (!buckets.empty())
      break;
  }
  return buckets;
}

static llvm::json::Value tagJson(Attribute tag) {
  if (auto i = dyn_cast<IntegerAttr>(tag))
    return i.getInt();
  return cast<StringAttr>(tag).str();
}

/// A program's parts in schedule order: what each waits for, computes
/// (DAG nodes), sends and updates.
static llvm::json::Array partsJson(func::FuncOp fn, SymbolTable &symbols) {
  llvm::json::Array parts;
  for (const PlanPart &part : readSchedule(fn, symbols)) {
    llvm::json::Array recvs, sends, allreduces;
    for (Operation *w : part.waits)
      (isa<comm::RecvOp>(w) ? recvs : allreduces)
          .push_back(tagJson(w->getAttr("tag")));
    for (Operation *s : part.sends)
      sends.push_back(tagJson(s->getAttr("tag")));
    llvm::json::Object obj{{"recvs", std::move(recvs)},
                           {"sends", std::move(sends)},
                           {"ops", int64_t(part.ops)}};
    if (!allreduces.empty())
      obj["allreduces"] = std::move(allreduces);
    if (!part.updates.empty()) {
      llvm::json::Array updates;
      for (const std::string &p : part.updates)
        updates.push_back(p);
      obj["updates"] = std::move(updates);
    }
    parts.push_back(std::move(obj));
  }
  return parts;
}

namespace {
constexpr llvm::StringLiteral kPlannedMemory = "rankc.planned_memory";

int64_t integer(DictionaryAttr d, StringRef key) {
  auto a = d ? d.getAs<IntegerAttr>(key) : IntegerAttr();
  return a ? a.getInt() : 0;
}

/// Bytes of the runtime's input buffers: one per argument of the program
/// (inputs, parameters, state, optimizer state), for the whole run.
int64_t inputBytes(func::FuncOp fn) {
  int64_t sum = 0;
  for (Type t : fn.getArgumentTypes())
    if (auto shaped = dyn_cast<ShapedType>(t); shaped && shaped.hasStaticShape())
      sum += shaped.getNumElements() *
             ((shaped.getElementTypeBitWidth() + 7) / 8);
  return sum;
}

/// plan.json's `memory` of a built program: its inputs, the block of its
/// step's planned buffers (rankc-plan-buffers: reused within the step, one
/// block for every step and entry, the largest asked for), what a step
/// still allocates from the step arena (what outlives the step: outputs,
/// carried values; two steps' arenas are live, the last step's holding the
/// values carried into this one), and so the planned peak of the buffers.
llvm::json::Object memoryJson(func::FuncOp fn, DictionaryAttr planned) {
  auto step = planned.getAs<DictionaryAttr>("step");
  auto micro = planned.getAs<DictionaryAttr>("micro_step");
  int64_t host = integer(step, "rankc.step_host_bytes"),
          device = integer(step, "rankc.step_device_bytes");
  // (rankc-step-memory: device allocations or a planned block on the device)
  bool onDevice = step && step.get("rankc.step_buffers_on_device");
  int64_t stepBytes = onDevice ? device : host;
  int64_t microBytes =
      micro ? integer(micro, onDevice ? "rankc.step_device_bytes"
                                      : "rankc.step_host_bytes")
            : stepBytes;
  int64_t scratch = std::max(integer(step, "rankc.step_scratch_bytes"),
                             integer(micro, "rankc.step_scratch_bytes"));
  int64_t inputs = inputBytes(fn);
  llvm::json::Object m{
      {"buffers", onDevice ? "device" : "host"},
      {"inputs_bytes", inputs},
      {"scratch_bytes", scratch},
      {"step_bytes", stepBytes},
      {"planned_peak_bytes", inputs + scratch + stepBytes + microBytes}};
  if (micro)
    m["micro_step_bytes"] = microBytes;
  if (onDevice)
    m["step_host_bytes"] = host;
  if ((step && step.get("rankc.step_bytes_dynamic")) ||
      (micro && micro.get("rankc.step_bytes_dynamic")))
    m["lower_bound"] = true; // an allocation of a dynamic size or in a loop
  return m;
}
} // namespace

void setPlannedMemory(func::FuncOp program, DictionaryAttr step,
                      DictionaryAttr microStep) {
  if (!step)
    return;
  SmallVector<NamedAttribute, 2> entries = {
      NamedAttribute(StringAttr::get(program.getContext(), "step"), step)};
  if (microStep)
    entries.push_back(NamedAttribute(
        StringAttr::get(program.getContext(), "micro_step"), microStep));
  program->setAttr(kPlannedMemory,
                   DictionaryAttr::get(program.getContext(), entries));
}

LogicalResult writePlan(ModuleOp module, llvm::raw_ostream &os) {
  int64_t ws =
      module->getAttrOfType<IntegerAttr>(comm::CommDialect::kWorldSize).getInt();
  llvm::json::Array programs;
  SymbolTable symbols(module);
  for (auto fn : module.getOps<func::FuncOp>()) {
    Attribute ranksAttr = fn->getAttr(comm::CommDialect::kRanks);
    if (!ranksAttr)
      continue;
    llvm::json::Array ranks;
    if (auto list = dyn_cast<DenseI64ArrayAttr>(ranksAttr))
      for (int64_t r : list.asArrayRef())
        ranks.push_back(r);
    else
      for (int64_t r = 0; r < ws; ++r)
        ranks.push_back(r);
    llvm::json::Object program{{"ranks", std::move(ranks)},
                               {"executable", fn.getName().str()},
                               {"parts", partsJson(fn, symbols)}};
    // With gradient accumulation, the micro-step's schedule too.
    for (auto micro : module.getOps<func::FuncOp>())
      if (auto of = micro->getAttrOfType<StringAttr>(
              comm::CommDialect::kMicroStepOf);
          of && of.getValue() == fn.getName())
        program["micro_step_parts"] = partsJson(micro, symbols);
    if (auto planned = fn->getAttrOfType<DictionaryAttr>(kPlannedMemory))
      program["memory"] = memoryJson(fn, planned);
    programs.push_back(std::move(program));
  }
  // The DAG tags in MPI tag order: tag i of this list travels as MPI tag i.
  CrossRankAnalysis analysis(module);
  if (failed(analysis.graph))
    return failure();
  llvm::json::Array mpiTags;
  for (size_t i = 0; i < analysis.graph->numTags(); ++i) {
    const TagValue &t = analysis.graph->tagOfMpiTag(i);
    if (auto *n = std::get_if<int64_t>(&t))
      mpiTags.push_back(*n);
    else
      mpiTags.push_back(std::get<std::string>(t));
  }
  // Buckets in the order their reductions start: the order of the
  // bucket allreduces in the (first data-parallel) program's schedule, the
  // same on every rank.
  llvm::json::Array buckets;
  for (const BucketInfo &b : readBuckets(module)) {
    llvm::json::Object bucket{
        {"params", b.params}, {"dtype", b.dtype}, {"bytes", b.bytes}};
    if (b.reduce) {
      llvm::json::Object predicted{{"ready_seconds", *b.ready},
                                   {"start_seconds", *b.start},
                                   {"reduce_seconds", *b.reduce}};
      if (b.exposed)
        predicted["exposed_seconds"] = *b.exposed;
      bucket["predicted"] = std::move(predicted);
    }
    buckets.push_back(std::move(bucket));
  }
  llvm::json::Object plan{{"world_size", ws},
                          {"programs", std::move(programs)},
                          {"buckets", std::move(buckets)},
                          {"mpi_tags", std::move(mpiTags)}};
  // --bucket-cap-mb auto: what was chosen, and why (every candidate's
  // predicted end of the step's communication).
  if (auto choice = module->getAttrOfType<DictionaryAttr>(
          comm::CommDialect::kBucketChoice)) {
    llvm::json::Object report;
    for (NamedAttribute a : choice) {
      if (auto s = dyn_cast<StringAttr>(a.getValue()))
        report[a.getName().str()] = s.str();
      else if (auto f = dyn_cast<FloatAttr>(a.getValue()))
        report[a.getName().str()] = f.getValueAsDouble();
      else if (auto i = dyn_cast<IntegerAttr>(a.getValue()))
        report[a.getName().str()] = i.getInt();
      else if (auto d = dyn_cast<DictionaryAttr>(a.getValue())) {
        llvm::json::Object inner;
        for (NamedAttribute c : d)
          if (auto f = dyn_cast<FloatAttr>(c.getValue()))
            inner[c.getName().str()] = f.getValueAsDouble();
        report[a.getName().str()] = std::move(inner);
      }
    }
    plan["bucket_choice"] = std::move(report);
  }
  // The optimizer with its defaults filled in: what the programs compute.
  auto dp = module->getAttrOfType<comm::DataParallelAttr>(
      comm::CommDialect::kDataParallel);
  if (dp && dp.getAccumulateOr1() > 1)
    plan["accumulate"] = dp.getAccumulateOr1();
  // What checkpoints carry to say which DAG they are of.
  if (auto fp = module->getAttrOfType<StringAttr>("rankc.fingerprint"))
    plan["fingerprint"] = fp.str();
  if (dp)
    if (comm::OptimizerAttr opt = dp.getOptimizer()) {
      llvm::json::Object fields;
      fields["kind"] = comm::stringifyOptimizerKind(opt.getKind()).str();
      auto number = [&](llvm::StringRef key, FloatAttr f) {
        if (f)
          fields[key] = f.getValueAsDouble();
      };
      number("lr", opt.getLr());
      number("weight_decay", opt.getWeightDecay());
      number("momentum", opt.getMomentum());
      number("dampening", opt.getDampening());
      number("eps", opt.getEps());
      if (opt.getNesterov())
        fields["nesterov"] = opt.getNesterov().getValue();
      if (opt.getBetas()) {
        llvm::json::Array betas;
        for (Attribute b : opt.getBetas())
          betas.push_back(cast<FloatAttr>(b).getValueAsDouble());
        fields["betas"] = std::move(betas);
      }
      if (opt.getLrInput())
        fields["lr"] = llvm::json::Object{{"input", opt.getLrInput().str()}};
      if (ArrayAttr schedule = opt.getLrSchedule()) {
        llvm::json::Array phases;
        for (auto phase : schedule.getAsRange<comm::LrPhaseAttr>()) {
          llvm::json::Object p{{"kind", phase.getKind().str()}};
          auto put = [&](llvm::StringRef key, Attribute a) {
            if (auto f = dyn_cast_or_null<FloatAttr>(a))
              p[key] = f.getValueAsDouble();
            else if (auto i = dyn_cast_or_null<IntegerAttr>(a))
              p[key] = i.getInt();
          };
          put("steps", phase.getSteps());
          put("factor", phase.getFactor());
          put("start_factor", phase.getStartFactor());
          put("end_factor", phase.getEndFactor());
          put("min_factor", phase.getMinFactor());
          put("step_size", phase.getStepSize());
          put("gamma", phase.getGamma());
          phases.push_back(std::move(p));
        }
        fields["lr_schedule"] = std::move(phases);
      }
      if (opt.getClipMaxNorm()) {
        llvm::json::Object clip{
            {"max_norm", opt.getClipMaxNorm().getValueAsDouble()}};
        if (opt.getClipNormType().getValue() == "inf")
          clip["norm_type"] = "inf";
        else
          clip["norm_type"] = 2;
        if (opt.getClipOutput())
          clip["output"] = opt.getClipOutput().str();
        fields["clip_grad_norm"] = std::move(clip);
      }
      plan["optimizer"] = std::move(fields);
    }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(plan))) << "\n";
  return success();
}

} // namespace rankc
