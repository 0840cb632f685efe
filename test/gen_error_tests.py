"""Writes test/Frontend/errors-*.test from the table below: one case per
user-facing error of the frontend, each checking its exact text and exit 1.
Run it after editing the table: python3 test/gen_error_tests.py"""
import json, os, re
HERE = os.path.dirname(os.path.abspath(__file__))
# Each case: (file stem, document text, expected error text after "error: ")
P = lambda nodes, outputs=None, ws=1, extra=None: json.dumps(dict(
    **({} if extra is None else extra), world_size=ws,
    programs=[dict(ranks=[0], nodes=nodes, outputs=outputs or {})]))
inp = lambda id="x", shape=[2], dtype="f32": dict(id=id, op="input", shape=shape, dtype=dtype)
N = "program [0], node 'a': "

groups = {}
def case(group, stem, text, expect):
    groups.setdefault(group, []).append((stem, text, expect))

# ---- JSON syntax and document structure
g = "json"
case(g, "truncated", '{"world_size": 1, "programs": [', "malformed JSON: ")
case(g, "trailing", P([inp()]) + ' {}', "malformed JSON")
case(g, "not-object", '[1, 2]', "the document must be a JSON object")
case(g, "top-unknown-key", '{"world_size": 1, "program": []}', "unknown key 'program' in the document")
case(g, "top-duplicate-key", '{"world_size": 1, "world_size": 2, "programs": []}', "duplicate key 'world_size'")
case(g, "bad-format", '{"format": "pytato", "world_size": 1, "programs": []}', "'format' must be \"rankc-dag\"")
case(g, "bad-version", '{"version": 3, "world_size": 1, "programs": []}', "unsupported 'version' (this compiler reads versions 1 and 2)")
case(g, "world-zero", '{"world_size": 0, "programs": []}', "'world_size' must be an integer in [1, 2^24]")
case(g, "world-string", '{"world_size": "2", "programs": []}', "'world_size' must be an integer in [1, 2^24]")
case(g, "no-world", '{"programs": [{"ranks": [0], "nodes": []}]}', "the document has no 'world_size'")
case(g, "no-programs", '{"world_size": 1}', "the document has no 'programs'")
case(g, "program-unknown-key", '{"world_size": 1, "programs": [{"ranks": [0], "nodes": [], "output": {}}]}', "unknown key 'output' in a program")
case(g, "program-bad-ranks", '{"world_size": 1, "programs": [{"ranks": "some", "nodes": []}]}', "'ranks' must be \"all\" or a non-empty list of ranks")
case(g, "program-no-ranks", '{"world_size": 1, "programs": [{"nodes": []}]}', "program has no 'ranks'")
case(g, "nodes-not-list", '{"world_size": 1, "programs": [{"ranks": [0], "nodes": {}}]}', "program [0]: 'nodes' must be a list")

# ---- nodes as JSON
g = "node-json"
case(g, "node-not-object", P([1]), "program [0]: a node must be an object")
case(g, "node-no-id", P([dict(op="input", shape=[1], dtype="f32")]), "program [0]: node has no 'id'")
case(g, "node-no-op", P([dict(id="a", shape=[1], dtype="f32")]), N + "node has no 'op'")
case(g, "unknown-op", P([dict(id="a", op="softmax", args=[])]), N + "unknown op 'softmax'")
case(g, "unknown-key", P([dict(id="a", op="input", shape=[1], dtype="f32", dtpye="f32")]), N + "unknown key 'dtpye'")
case(g, "bad-id", P([dict(id="1a", op="input", shape=[1], dtype="f32")]), "program [0], node '1a': invalid node id '1a' (expected [A-Za-z_][A-Za-z0-9_.:-]*)")
case(g, "node-duplicate-key", '{"world_size": 1, "programs": [{"ranks": [0], "nodes": [{"id": "a", "op": "input", "shape": [1], "shape": [2], "dtype": "f32"}]}]}', N + "duplicate key 'shape'")
case(g, "shape-string", P([dict(id="a", op="input", shape="2x3", dtype="f32")]), N + "'shape' must be a list of integers")
case(g, "shape-float", P([dict(id="a", op="input", shape=[2.0], dtype="f32")]), N + "'shape' must be a list of integers")
case(g, "shape-huge-int", '{"world_size": 1, "programs": [{"ranks": [0], "nodes": [{"id": "a", "op": "input", "shape": [18446744073709551615], "dtype": "f32"}]}]}', N + "'shape' must be a list of integers")
case(g, "unknown-dtype", P([dict(id="a", op="input", shape=[1], dtype="float32")]), N + "unknown dtype 'float32' (expected bool, i8, i32, i64, f16, bf16, f32 or f64)")
case(g, "unknown-reduce", P([inp(), dict(id="a", op="allreduce", args=["x"], reduce="avg", tag=1)]), N + "unknown reduction 'avg' (expected sum, prod, max, min or mean)")
case(g, "peer-object", P([inp(), dict(id="a", op="send", args=["x"], dest={"rank": 1}, tag=1)]), N + "'dest' must be a rank or {\"offset\": k} with only the key \"offset\"")
case(g, "tag-bool", P([inp(), dict(id="a", op="send", args=["x"], dest=0, tag=True)]), N + "'tag' must be an integer or a string")
case(g, "constant-string", P([dict(id="a", op="constant", value="one", dtype="f32")]), N + "'value' must be a number, a boolean or a nested list of them")
case(g, "constant-ragged", P([dict(id="a", op="constant", value=[[1, 2], [3]], dtype="f32")]), N + "'value' must be a rectangular nested list (lists of one depth differ in length)")
case(g, "constant-mixed", P([dict(id="a", op="constant", value=[1, [2]], dtype="f32")]), N + "'value' must be a rectangular nested list (numbers and lists mixed at one depth)")
case(g, "keepdims-int", P([inp(), dict(id="a", op="sum", args=["x"], keepdims=1)]), N + "'keepdims' must be a boolean")
case(g, "args-not-strings", P([inp(), dict(id="a", op="neg", args=[0])]), N + "'args' must be a list of node ids")

# ---- outputs and data_parallel as JSON
g = "outputs-json"
case(g, "outputs-not-object", P([inp()], outputs=None).replace('"outputs": {}', '"outputs": ["x"]'), "program [0]: 'outputs' must be an object")
case(g, "output-bad-value", P([inp()], outputs={"y": 3}), "program [0]: output 'y' must be a node id or {\"node\": ..., \"grad_of\": ...}")
case(g, "output-unknown-key", P([inp()], outputs={"y": {"node": "x", "grad": "x"}}), "program [0]: output 'y': unknown key 'grad'")
case(g, "output-no-node", P([inp()], outputs={"y": {"grad_of": "x"}}), "program [0]: output 'y' has no 'node'")
case(g, "dp-unknown-key", P([inp()], extra={"data_parallel": {"bucket_cap": 1}}), "unknown key 'bucket_cap' in 'data_parallel'")
case(g, "dp-bad-order", P([inp()], extra={"data_parallel": {"order": "fifo"}}), "'order' must be \"ready\" or \"ddp-initial\"")
case(g, "dp-negative-cap", P([inp()], extra={"data_parallel": {"bucket_cap_mb": -1}}), "'bucket_cap_mb' must be a positive number of MiB")
case(g, "dp-ignore-not-list", P([inp()], extra={"data_parallel": {"ignore": "w"}}), "'ignore' must be a list of parameter ids")
case(g, "dp-ignore-unknown", P([inp()], extra={"data_parallel": {"ignore": ["w"]}}), "'data_parallel' ignores 'w', which is not a param of any program")

# ---- programs and graph structure
g = "graph"
two = lambda a, b: json.dumps(dict(world_size=2, programs=[dict(ranks=a, nodes=[]), dict(ranks=b, nodes=[])]))
case(g, "rank-outside", two([0], [2]), "program [2]: rank 2 is outside [0, 2)")
case(g, "rank-twice", two([0, 1], [1]), "program [1]: rank 1 is also in program [0, 1]")
case(g, "rank-missing", json.dumps(dict(world_size=3, programs=[dict(ranks=[0, 2], nodes=[])])), "rank 1 (of world_size 3) is in no program")
case(g, "all-and-more", two("all", [1]), "program all: a program on \"all\" ranks must be the only program")
case(g, "duplicate-id", P([inp("a"), inp("a")]), N + "duplicate node id 'a'")
case(g, "arg-unknown", P([dict(id="a", op="neg", args=["ghost"])]), N + "argument 'ghost' names no node")
case(g, "arg-is-send", P([inp(), dict(id="s", op="send", args=["x"], dest=0, tag=1), dict(id="a", op="neg", args=["s"])]), N + "argument 's' is a send, which has no value")
case(g, "arity", P([inp(), dict(id="a", op="add", args=["x"])]), N + "'add' takes 2 arguments, got 1")
case(g, "leaf-with-args", P([inp(), dict(id="a", op="input", args=["x"], shape=[1], dtype="f32")]), N + "'input' takes 0 arguments, got 1")
case(g, "cycle", P([dict(id="a", op="neg", args=["c"]), dict(id="b", op="exp", args=["a"]), dict(id="c", op="log", args=["b"])]), N + "the graph has a cycle: 'a' -> 'c' -> 'b' -> 'a' (each node uses the next as an argument)")
case(g, "self-loop", P([dict(id="a", op="neg", args=["a"])]), N + "the graph has a cycle: 'a' -> 'a'")
case(g, "key-for-other-op", P([inp(), dict(id="a", op="neg", args=["x"], axis=0)]), N + "unknown key 'axis' for op 'neg'")
case(g, "missing-key", P([dict(id="a", op="input", shape=[2])]), N + "op 'input' needs 'dtype'")
case(g, "output-names-nothing", P([inp()], outputs={"y": "ghost"}), "program [0]: output 'y' names no node ('ghost')")
case(g, "output-is-send", P([inp(), dict(id="a", op="send", args=["x"], dest=0, tag=1)], outputs={"y": "a"}), N + "output 'y' names a send, which has no value")
case(g, "output-unsafe-name", P([inp()], outputs={"../etc": "x"}), "program [0]: output name '../etc' is not a safe file name (expected [A-Za-z0-9_.-]+, not '.' or '..')")
case(g, "output-dot-dot", P([inp()], outputs={"..": "x"}), "program [0]: output name '..' is not a safe file name")
case(g, "output-twice", '{"world_size": 1, "programs": [{"ranks": [0], "nodes": [{"id": "x", "op": "input", "shape": [1], "dtype": "f32"}], "outputs": {"y": "x", "y": "x"}}]}', "program [0]: output name 'y' is used twice")
case(g, "grad-of-input", P([inp()], outputs={"g": {"node": "x", "grad_of": "x"}}), "program [0]: output 'g': grad_of 'x' is not a param")
case(g, "grad-type", P([dict(id="w", op="param", shape=[2], dtype="f32"), dict(id="a", op="input", shape=[3], dtype="f32")], outputs={"g": {"node": "a", "grad_of": "w"}}), N + "output 'g' is f32[3] but its param 'w' is f32[2]")

# ---- shapes, dtypes and attributes
g = "types"
case(g, "negative-dim", P([dict(id="a", op="input", shape=[2, -1], dtype="f32")]), N + "'shape' [2, -1] has a negative dimension")
case(g, "overflow", P([dict(id="a", op="input", shape=[2**40, 2**40], dtype="f32")]), N + "'shape' [1099511627776, 1099511627776] is too large (its size overflows 64 bits)")
case(g, "constant-shape", P([dict(id="a", op="constant", value=[1, 2], shape=[3], dtype="f32")]), N + "'value' has shape [2] but 'shape' is [3]")
case(g, "constant-bool", P([dict(id="a", op="constant", value=1, dtype="bool")]), N + "a bool constant takes true and false only")
case(g, "constant-int-float", P([dict(id="a", op="constant", value=1.5, dtype="i32")]), N + "a i32 constant takes integers, got 1.5")
case(g, "constant-range", P([dict(id="a", op="constant", value=300, dtype="i8")]), N + "value 300 does not fit in i8")
case(g, "float-only", P([inp(dtype="i32"), dict(id="a", op="exp", args=["x"])]), N + "'exp' takes floats, got i32")
case(g, "not-on-float", P([inp(), dict(id="a", op="not", args=["x"])]), N + "'not' takes bool, got f32")
case(g, "neg-bool", P([inp(dtype="bool"), dict(id="a", op="neg", args=["x"])]), N + "'neg' does not take bool")
case(g, "sub-bool", P([inp(dtype="bool"), dict(id="a", op="sub", args=["x", "x"])]), N + "'sub' does not take bool (NumPy neither); use 'ne' for exclusive or")
case(g, "div-int", P([inp(dtype="i64"), dict(id="a", op="div", args=["x", "x"])]), N + "'div' takes floats, got i64")
case(g, "mixed-dtypes", P([inp(), inp("y", dtype="f64"), dict(id="a", op="add", args=["x", "y"])]), N + "operands have different dtypes (f32 and f64); insert a 'cast'")
case(g, "no-broadcast", P([inp(shape=[2, 3]), inp("y", shape=[3, 2]), dict(id="a", op="mul", args=["x", "y"])]), N + "shapes [2, 3] and [3, 2] do not broadcast")
case(g, "and-float", P([inp(), dict(id="a", op="and", args=["x", "x"])]), N + "'and' takes bool, got f32")
case(g, "where-cond", P([inp(), dict(id="a", op="where", args=["x", "x", "x"])]), N + "the condition of 'where' must be bool, got f32")
case(g, "where-values", P([inp("c", dtype="bool"), inp(), inp("y", dtype="i32"), dict(id="a", op="where", args=["c", "x", "y"])]), N + "the values of 'where' have different dtypes (f32 and i32)")
case(g, "einsum-implicit", P([inp(), dict(id="a", op="einsum", spec="i,i", args=["x", "x"])]), N + "invalid einsum spec 'i,i': needs an explicit output ('...->...')")
case(g, "einsum-terms", P([inp(), dict(id="a", op="einsum", spec="i,i->i", args=["x"])]), N + "einsum spec 'i,i->i' has 2 operand terms but 1 arguments")
case(g, "einsum-rank", P([inp(), dict(id="a", op="einsum", spec="ij->i", args=["x"])]), N + "einsum term 'ij' has 2 letters but operand 0 has rank 1")
case(g, "einsum-sizes", P([inp(shape=[2, 3]), dict(id="a", op="einsum", spec="ii->i", args=["x"])]), N + "einsum letter 'i' stands for sizes 2 and 3")
case(g, "matmul-rank", P([inp(shape=[2]), dict(id="a", op="matmul", args=["x", "x"])]), N + "'matmul' takes two operands of rank 2 or two of rank 3, got [2] and [2]")
case(g, "matmul-shapes", P([inp(shape=[2, 3]), dict(id="a", op="matmul", args=["x", "x"])]), N + "'matmul' shapes [2, 3] and [2, 3] do not match")
case(g, "axis-range", P([inp(shape=[2, 3]), dict(id="a", op="sum", args=["x"], axes=[2])]), N + "'axes' 2 is out of range for rank 2")
case(g, "axis-twice", P([inp(shape=[2, 3]), dict(id="a", op="sum", args=["x"], axes=[1, -1])]), N + "axis 1 is listed twice")
case(g, "max-empty", P([inp(shape=[0, 3]), dict(id="a", op="max", args=["x"], axes=[0])]), N + "'max' over an axis of size 0 has no value")
case(g, "mean-int", P([inp(dtype="i32"), dict(id="a", op="mean", args=["x"])]), N + "'mean' takes floats, got i32")
case(g, "reshape-size", P([inp(shape=[2, 3]), dict(id="a", op="reshape", args=["x"], shape=[4, 2])]), N + "cannot reshape [2, 3] (6 elements) into [4, 2]")
case(g, "reshape-two-unknown", P([inp(shape=[2, 3]), dict(id="a", op="reshape", args=["x"], shape=[-1, -1])]), N + "reshape target [-1, -1] may have one -1 and no other negative size")
case(g, "reshape-indivisible", P([inp(shape=[2, 3]), dict(id="a", op="reshape", args=["x"], shape=[4, -1])]), N + "cannot reshape [2, 3] into [4, -1]")
case(g, "transpose-perm", P([inp(shape=[2, 3]), dict(id="a", op="transpose", args=["x"], perm=[0, 0])]), N + "'perm' lists axis 0 twice")
case(g, "transpose-length", P([inp(shape=[2, 3]), dict(id="a", op="transpose", args=["x"], perm=[0])]), N + "'perm' [0] is not a permutation of 2 axes")
case(g, "broadcast-to", P([inp(shape=[2, 3]), dict(id="a", op="broadcast_to", args=["x"], shape=[3, 3])]), N + "cannot broadcast [2, 3] to [3, 3]")
case(g, "slice-bounds", P([inp(shape=[4]), dict(id="a", op="slice", args=["x"], begin=[3], end=[5], step=[1])]), N + "slice of axis 0 (size 4) needs 0 <= begin <= end <= size and step >= 1, got begin 3, end 5, step 1")
case(g, "slice-step", P([inp(shape=[4]), dict(id="a", op="slice", args=["x"], begin=[0], end=[4], step=[0])]), N + "slice of axis 0 (size 4) needs 0 <= begin <= end <= size and step >= 1, got begin 0, end 4, step 0")
case(g, "slice-entries", P([inp(shape=[4, 4]), dict(id="a", op="slice", args=["x"], begin=[0], end=[4])]), N + "'begin', 'end' and 'step' need one entry per axis (2)")
case(g, "concat-shapes", P([inp(shape=[2, 3]), inp("y", shape=[3, 3]), dict(id="a", op="concat", args=["x", "y"], axis=1)]), N + "'concat' shapes [2, 3] and [3, 3] differ off axis 1")
case(g, "concat-scalar", P([inp(shape=[]), dict(id="a", op="concat", args=["x"], axis=0)]), N + "'concat' takes arrays of rank >= 1")
case(g, "stated-shape", P([inp(shape=[2, 3]), dict(id="a", op="sum", args=["x"], axes=[0], shape=[2])]), N + "'shape' [2] disagrees with the inferred shape [3]")
case(g, "stated-dtype", P([inp(), dict(id="a", op="lt", args=["x", "x"], dtype="f32")]), N + "'dtype' f32 disagrees with the inferred dtype bool")

# ---- communication
g = "comm"
case(g, "peer-range", P([inp(), dict(id="a", op="send", args=["x"], dest=4, tag=1)], ws=1), N + "peer rank 4 is outside [0, 1)")
case(g, "recv-peer-negative", P([dict(id="a", op="recv", src=-1, tag=1, shape=[1], dtype="f32")]), N + "peer rank -1 is outside [0, 1)")
case(g, "tag-range", P([inp(), dict(id="a", op="send", args=["x"], dest=0, tag=2**31)]), N + "tag 2147483648 is not a non-negative integer below 2^31")
case(g, "tag-negative", P([inp(), dict(id="a", op="send", args=["x"], dest=0, tag=-3)]), N + "tag -3 is not a non-negative integer below 2^31")
case(g, "tag-empty", P([inp(), dict(id="a", op="send", args=["x"], dest=0, tag="")]), N + "a string tag must not be empty")
case(g, "recv-no-shape", P([dict(id="a", op="recv", src=0, tag=1, dtype="f32")]), N + "op 'recv' needs 'shape'")
case(g, "send-no-dest", P([inp(), dict(id="a", op="send", args=["x"], tag=1)]), N + "op 'send' needs 'dest'")
case(g, "allreduce-mean-int", P([inp(dtype="i32"), dict(id="a", op="allreduce", args=["x"], reduce="mean", tag=1)]), N + "'allreduce' takes floats, got i32")
case(g, "allreduce-sum-bool", P([inp(dtype="bool"), dict(id="a", op="allreduce", args=["x"], reduce="sum", tag=1)]), N + "allreduce 'sum' of bool is not defined; use 'max' (or) or 'min' (and)")

# ---- version 2: state, the optimizer, and the ops this compiler refuses
g = "v2"
V2 = lambda nodes, outputs=None, state=None, dp=None, version=2: json.dumps(dict(
    version=version, world_size=1, **({} if dp is None else {"data_parallel": dp}),
    programs=[dict(ranks=[0], nodes=nodes, outputs=outputs or {},
                   **({} if state is None else {"state": state}))]))
par = lambda id="w", shape=[2]: dict(id=id, op="param", shape=shape, dtype="f32")
grad = {"g": {"node": "x", "grad_of": "w"}}
SGD = lambda **kw: {"optimizer": dict(kind="sgd", lr=0.1, **kw)}
case(g, "state-in-v1", V2([inp()], {"y": "x"}, {"x": "y"}, version=1), "program [0]: 'state' needs \"version\": 2 (this document is version 1)")
case(g, "optimizer-in-v1", V2([inp()], dp=SGD(), version=1), "'optimizer' needs \"version\": 2 (this document is version 1)")
case(g, "v2-op-in-v1", V2([inp(), dict(id="a", op="take", args=["x", "x"], axis=0)], version=1), N + "op 'take' needs \"version\": 2 (this document is version 1)")
for op in ("conv", "pool"):
    case(g, "v2-op-" + op, V2([inp(), dict(id="a", op=op, args=["x"])]), N + f"op '{op}' (version 2) is not supported by this compiler yet")
# take and scatter_add (version 2's indexing)
ix = lambda id="i", shape=[3], dtype="i64": inp(id, shape, dtype)
take = lambda args=["x", "i"], **kw: dict(id="a", op="take", args=args, **({"axis": 0} | kw))
case(g, "take-no-axis", V2([inp(), ix(), dict(id="a", op="take", args=["x", "i"])]), N + "op 'take' needs 'axis'")
case(g, "take-arity", V2([inp(), take(args=["x"])]), N + "'take' takes 2 arguments, got 1")
case(g, "take-float-indices", V2([inp(), inp("i"), take()]), N + "'take' indices must be integers (i8, i32 or i64), got f32")
case(g, "take-bool-indices", V2([inp(), ix(dtype="bool"), take()]), N + "'take' indices must be integers (i8, i32 or i64), got bool")
case(g, "take-scalar", V2([inp(shape=[]), ix(), take()]), N + "'take' of a scalar: x needs rank >= 1")
case(g, "take-axis-range", V2([inp(), ix(), take(axis=1)]), N + "'axis' 1 is out of range for rank 1")
case(g, "take-shape-given", V2([inp(shape=[4, 2]), ix(), take(shape=[3, 4])]), N + "'shape' [3, 4] disagrees with the inferred shape [3, 2]")
sc = lambda args=["x", "i", "u"], **kw: dict(id="a", op="scatter_add", args=args, **({"axis": 0} | kw))
case(g, "scatter-arity", V2([inp(), ix(), sc(args=["x", "i"])]), N + "'scatter_add' takes 3 arguments, got 2")
case(g, "scatter-updates-shape", V2([inp(shape=[5, 2]), ix(), inp("u", shape=[3, 3]), sc()]), N + "'scatter_add' updates have shape [3, 3], expected [3, 2] (base.shape[:axis] + indices.shape + base.shape[axis+1:])")
case(g, "scatter-updates-dtype", V2([inp(), ix(), inp("u", shape=[3], dtype="f64"), sc()]), N + "'scatter_add' updates are f64, base is f32")
case(g, "scatter-bool", V2([inp(dtype="bool"), ix(), inp("u", shape=[3], dtype="bool"), sc()]), N + "'scatter_add' does not take bool")
case(g, "scatter-float-indices", V2([inp(), inp("i", shape=[3], dtype="f64"), inp("u", shape=[3]), sc()]), N + "'scatter_add' indices must be integers (i8, i32 or i64), got f64")
case(g, "v2-op-version-last", '{"world_size": 1, "programs": [{"ranks": [0], "nodes": [{"id": "a", "op": "conv", "args": []}]}], "version": 1}', N + "op 'conv' needs \"version\": 2 (this document is version 1)")
case(g, "state-not-object", V2([inp()], {"y": "x"}, ["x"]), "program [0]: 'state' must be an object {\"input-id\": \"output-name\"}")
case(g, "state-value-not-string", V2([inp()], {"y": "x"}, {"x": 1}), "program [0], node 'x': state of 'x' must name an output (a string)")
case(g, "state-twice", '{"version": 2, "world_size": 1, "programs": [{"ranks": [0], "nodes": [{"id": "x", "op": "input", "shape": [2], "dtype": "f32"}], "outputs": {"y": "x"}, "state": {"x": "y", "x": "y"}}]}', "program [0], node 'x': 'state' names input 'x' twice")
case(g, "state-duplicate-key", '{"version": 2, "world_size": 1, "programs": [{"ranks": [0], "nodes": [], "state": {}, "state": {}}]}', "program [0]: duplicate key 'state'")
case(g, "state-unknown-input", V2([inp()], {"y": "x"}, {"z": "y"}), "program [0]: 'state' names 'z', which is not an input or param of this program")
case(g, "state-not-input", V2([inp(), dict(id="n", op="neg", args=["x"])], {"y": "n"}, {"n": "y"}), "program [0]: 'state' names 'n', which is not an input or param of this program")
case(g, "state-unknown-output", V2([inp()], {"y": "x"}, {"x": "z"}), "program [0]: state of 'x' names output 'z', which this program does not have")
case(g, "state-type", V2([inp(), inp("v", shape=[3])], {"y": "v"}, {"x": "y"}), "program [0]: state of 'x' is f32[2] but output 'y' is f32[3]")
case(g, "state-dtype", V2([inp(), inp("v", dtype="f64")], {"y": "v"}, {"x": "y"}), "program [0]: state of 'x' is f32[2] but output 'y' is f64[2]")
case(g, "state-updated-param", V2([par(), inp()], {**grad, "y": "w"}, {"w": "y"}, dp=SGD()), "program [0]: param 'w' is updated by the optimizer, so it cannot also be in 'state'")
case(g, "optimizer-name-clash", V2([par(), inp()], {**grad, "w": "x"}, dp=SGD()), "program [0]: output 'w' has the name of the updated param 'w', which the optimizer writes")
case(g, "optimizer-bad-name", V2([par("w:0"), inp()], {"g": {"node": "x", "grad_of": "w:0"}}, dp=SGD()), "program [0], node 'w:0': param 'w:0' is updated by the optimizer, but its id is not a valid output name (expected [A-Za-z0-9_.-]+)")
case(g, "optimizer-not-object", V2([inp()], dp={"optimizer": "sgd"}), "'optimizer' must be an object")
case(g, "optimizer-no-kind", V2([inp()], dp={"optimizer": {"lr": 0.1}}), "'optimizer' has no 'kind' (\"sgd\", \"adam\" or \"adamw\")")
case(g, "optimizer-bad-kind", V2([inp()], dp={"optimizer": {"kind": "lamb", "lr": 0.1}}), "optimizer 'kind' must be \"sgd\", \"adam\" or \"adamw\"")
case(g, "optimizer-no-lr", V2([inp()], dp={"optimizer": {"kind": "adam"}}), "'optimizer' has no 'lr'")
case(g, "optimizer-lr-zero", V2([inp()], dp=SGD(**{}) | {"optimizer": {"kind": "sgd", "lr": 0}}), "optimizer 'lr' must be a number > 0")
case(g, "optimizer-lr-string", V2([inp()], dp={"optimizer": {"kind": "sgd", "lr": "0.1"}}), "optimizer 'lr' must be a number > 0")
case(g, "optimizer-momentum-negative", V2([inp()], dp=SGD(momentum=-0.9)), "optimizer 'momentum' must be a number >= 0")
case(g, "optimizer-weight-decay-negative", V2([inp()], dp={"optimizer": {"kind": "adamw", "lr": 0.1, "weight_decay": -1}}), "optimizer 'weight_decay' must be a number >= 0")
case(g, "optimizer-nesterov-int", V2([inp()], dp=SGD(momentum=0.9, nesterov=1)), "optimizer 'nesterov' must be a boolean")
case(g, "optimizer-nesterov-no-momentum", V2([inp()], dp=SGD(nesterov=True)), "Nesterov momentum needs 'momentum' > 0 and 'dampening' 0 (as torch.optim.SGD)")
case(g, "optimizer-nesterov-dampening", V2([inp()], dp=SGD(momentum=0.9, dampening=0.1, nesterov=True)), "Nesterov momentum needs 'momentum' > 0 and 'dampening' 0 (as torch.optim.SGD)")
case(g, "optimizer-betas", V2([inp()], dp={"optimizer": {"kind": "adam", "lr": 0.1, "betas": [0.9]}}), "optimizer 'betas' must be a list of two numbers in [0, 1)")
case(g, "optimizer-betas-range", V2([inp()], dp={"optimizer": {"kind": "adam", "lr": 0.1, "betas": [0.9, 1.0]}}), "optimizer 'betas' must be a list of two numbers in [0, 1)")
case(g, "optimizer-eps-negative", V2([inp()], dp={"optimizer": {"kind": "adam", "lr": 0.1, "eps": -1e-8}}), "optimizer 'eps' must be a number >= 0")
case(g, "optimizer-sgd-betas", V2([inp()], dp=SGD(betas=[0.9, 0.99])), "unknown key 'betas' for the sgd optimizer")
case(g, "optimizer-adam-momentum", V2([inp()], dp={"optimizer": {"kind": "adam", "lr": 0.1, "momentum": 0.9}}), "unknown key 'momentum' for the adam optimizer")
case(g, "optimizer-amsgrad", V2([inp()], dp={"optimizer": {"kind": "adam", "lr": 0.1, "amsgrad": True}}), "optimizer 'amsgrad' is not supported")
case(g, "optimizer-maximize", V2([inp()], dp=SGD(maximize=True)), "optimizer 'maximize' is not supported")
case(g, "optimizer-duplicate-key", '{"version": 2, "world_size": 1, "data_parallel": {"optimizer": {"kind": "sgd", "lr": 0.1, "lr": 0.2}}, "programs": [{"ranks": [0], "nodes": []}]}', "duplicate key 'lr' in 'optimizer'")

def fc_escape(s):
    out = re.escape(s)
    return s.replace("[[", "{{\\[\\[}}").replace("]]", "{{\\]\\]}}")

for group, cases in groups.items():
    lines = [f"# Every {group} error: exit 1 and an `error:` line naming the file,",
             "# the program's ranks and the node (generated from one table; see the README).",
             "# RUN: split-file %s %t"]
    for stem, text, expect in cases:
        pre = stem.upper()
        lines.append(f"# RUN: %rc rankc check %t/{stem}.json 2>&1 | FileCheck %s --check-prefix={pre}")
        lines.append(f"# {pre}: error: {{{{.*}}}}{stem}.json:{{{{[0-9]+:[0-9]+}}}}: {fc_escape(expect)}")
        lines.append(f"# {pre}-NEXT: exit: 1")
    lines.append("")
    for stem, text, expect in cases:
        lines.append(f"#--- {stem}.json")
        lines.append(text)
    open(os.path.join(HERE, "Frontend", f"errors-{group}.test"), "w").write("\n".join(lines) + "\n")
print({g: len(c) for g, c in groups.items()}, sum(len(c) for c in groups.values()))
