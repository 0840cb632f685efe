//===- CoreApi.cpp - the session's C entry points -------------------------===//
//
// Two C ABIs over the process's session (Session.h), each call a line or
// two: rankc_core.h for whoever runs the program (the executables' main(),
// the library of `--emit lib`, embedders), and rankc_runtime.h's
// rankc_rt_* calls for the generated code.
//
//===----------------------------------------------------------------------===//

#include "core/Buffers.h"
#include "core/Core.h"
#include "core/Session.h"
#include "rankc_core.h"
#include "rankc_runtime.h"

using namespace rankc::rt;

namespace {
const TensorInfo &visibleInput(int i) {
  const Session &s = session();
  if (i < 0 || size_t(i) >= s.visibleInputs().size())
    raise("input index %d out of range (%zu inputs)", i,
          s.visibleInputs().size());
  return s.program.inputs[s.visibleInputs()[i]];
}
const TensorInfo &visibleOutput(int i) {
  const Session &s = session();
  if (i < 0 || size_t(i) >= s.visibleOutputs().size())
    raise("output index %d out of range (%zu outputs)", i,
          s.visibleOutputs().size());
  return s.program.outputs[s.visibleOutputs()[i]];
}
} // namespace

extern "C" {

/// {allocated, aligned, offset, sizes[1], strides[1]}: a memref<?xi8>, the
/// result of a function declared with llvm.emit_c_interface.
struct rankc_byte_memref {
  void *allocated, *aligned;
  int64_t offset, size, stride;
};

void _mlir_ciface_rankc_rt_input(rankc_byte_memref *result, int32_t index) {
  const Session &s = session();
  void *p = s.inputBuffer(index);
  *result = {p, p, 0, int64_t(s.program.inputs.at(index).bytes()), 1};
}

void rankc_rt_output(int32_t index, int64_t data) {
  session().setOutput(index, reinterpret_cast<void *>(data));
}

void rankc_rt_index_error(int32_t check, int64_t index, int64_t bound) {
  const std::vector<IndexCheck> &checks = session().program.checks;
  bool known = check >= 0 && size_t(check) < checks.size();
  const char *node = known ? checks[check].node.c_str() : "?";
  if (known && checks[check].rem)
    fail("node '%s': integer remainder by zero (rem with a divisor of 0)",
         node);
  fail("node '%s': index %lld is out of range [0, %lld)", node,
       (long long)index, (long long)bound);
}

void _mlir_ciface_rankc_rt_scratch(rankc_byte_memref *result, int64_t bytes) {
  void *p = session().scratch(size_t(bytes));
  *result = {p, p, 0, bytes, 1};
}

void _mlir_ciface_rankc_rt_index_record(rankc_byte_memref *result) {
  void *p = session().indexRecordBuffer();
  *result = {p, p, 0, 3 * sizeof(int64_t), 1};
}

void rankc_rt_part_begin(int32_t part) { session().partBegin(part); }
void rankc_rt_part_end(int32_t part) { session().partEnd(part); }

void rankc_core_init(int *argc, char ***argv, double timeout) {
  session().start(argc, argv, timeout);
}
int rankc_core_rank(void) { return session().rank; }
int rankc_core_world_size(void) { return session().worldSize; }
int rankc_core_num_inputs(void) { return session().visibleInputs().size(); }
int rankc_core_num_outputs(void) { return session().visibleOutputs().size(); }
const char *rankc_core_input_name(int i) { return visibleInput(i).id.c_str(); }
const char *rankc_core_output_name(int i, int j) {
  const TensorInfo &t = visibleOutput(i);
  return j >= 0 && size_t(j) < t.names.size() ? t.names[j].c_str() : nullptr;
}
int rankc_core_input_dtype(int i) { return visibleInput(i).dtype; }
int rankc_core_output_dtype(int i) { return visibleOutput(i).dtype; }
int rankc_core_input_rank(int i) { return visibleInput(i).shape.size(); }
int rankc_core_output_rank(int i) { return visibleOutput(i).shape.size(); }
const int64_t *rankc_core_input_shape(int i) {
  return visibleInput(i).shape.data();
}
const int64_t *rankc_core_output_shape(int i) {
  return visibleOutput(i).shape.data();
}
int rankc_core_input_is_state(int i) { return visibleInput(i).stateOf >= 0; }
int64_t rankc_core_steps_done(void) { return session().stepsDone(); }
int64_t rankc_core_accumulate(void) { return session().program.accumulate; }

void rankc_core_set_input(int i, const void *host) {
  visibleInput(i);
  session().setInput(session().visibleInputs()[i], host);
}

void rankc_core_step(void) { session().step(); }

void rankc_core_get_output(int i, void *host) {
  visibleOutput(i);
  session().getOutput(session().visibleOutputs()[i], host);
}

void rankc_core_finalize(void) { session().finish(); }

} // extern "C"
