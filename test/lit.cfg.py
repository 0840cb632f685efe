# lit configuration of rankc's tests.
import os
import lit.formats

config.name = "rankc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "unit", "lit.cfg.py", "rc.sh", "gen_error_tests.py", "e2e.py", "reference.py", "random_dags.py", "compare_buckets.py", "mlp_step.py", "check_trace.py", "emit_ptx_all.sh"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.rankc_obj_root, "test")

# Our tools first, then LLVM's (FileCheck, not, split-file, count).
path = os.pathsep.join(config.rankc_tools_dirs + [config.llvm_tools_dir,
                                                  config.environment.get("PATH", os.environ["PATH"])])
config.environment["PATH"] = path
config.substitutions.append(("%examples", os.path.join(config.rankc_src_root, "examples")))
config.substitutions.append(("%rankc_build", config.rankc_obj_root))
config.substitutions.append(("%rankc_src", config.rankc_src_root))
config.substitutions.append(("%python", "python3"))
config.substitutions.append(("%rc", "bash " + os.path.join(config.rankc_src_root, "test", "rc.sh")))

# End-to-end tests need MPICH's mpiexec and a Python with NumPy (the
# reference evaluator); without them they are reported as unsupported.
import shutil
import subprocess


def find_python(module, feature):
    """The first Python that imports `module`: feature and %<feature>_python."""
    for candidate in ["/usr/bin/python3", "python3"]:
        try:
            if subprocess.call([candidate, "-c", "import " + module],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
                config.available_features.add(feature)
                config.substitutions.append(("%" + feature + "_python", candidate))
                return
        except OSError:
            pass


find_python("numpy", "numpy")
find_python("torch.distributed", "torch")
# A build with AddressSanitizer/UBSan (scripts/test.sh --sanitize).
if config.rankc_sanitize in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("sanitized")
# rankc's tools linked against LLVM's and MLIR's archives (RANKC_LLVM_LINKAGE).
if config.rankc_llvm_linkage == "static":
    config.available_features.add("static-llvm")
# The linkers rankc links programs with when it finds them (lib/Target/Link.cpp).
for tool in ["ld.gold", "ld.lld"]:
    if shutil.which(tool):
        config.available_features.add(tool)
for tool in ["cmake", "ninja", "make"]:
    if shutil.which(tool):
        config.available_features.add(tool)
# MLIR's JIT runner and its utilities (execution tests of single passes).
_llvm_lib = os.path.join(config.llvm_tools_dir, "..", "lib")
_runner_libs = [os.path.join(_llvm_lib, f"lib{n}.so") for n in ("mlir_runner_utils", "mlir_c_runner_utils")]
if os.path.exists(os.path.join(config.llvm_tools_dir, "mlir-runner")) and \
        all(os.path.exists(l) for l in _runner_libs):
    config.available_features.add("mlir-runner")
    config.substitutions.append(("%mlir_runner_utils", _runner_libs[0]))
    config.substitutions.append(("%mlir_c_runner_utils", _runner_libs[1]))
if shutil.which("mpiexec.mpich"):
    config.available_features.add("mpich")
# Generated programs run as root on CI machines: MPICH allows it.
config.environment["RANKC_TIMEOUT"] = "120"

# The CUDA backend compiles wherever the toolkit is (ptxas, libdevice); its
# programs run only where the driver is (a GPU machine).
if any(os.path.exists(os.path.join(d, "bin", "ptxas")) for d in
       [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"] if d):
    config.available_features.add("cuda-toolkit")
try:
    import ctypes
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass

# The random-program differential tests (test/Random/differential.py):
# every seed also compiled for CUDA where the toolkit is; under the
# sanitizers (several times slower) the first 25 seeds of each range.
config.substitutions.append(
    ("%random_flags", " ".join(
        (["--cuda"] if "cuda-toolkit" in config.available_features else []) +
        (["--limit", "25"] if "sanitized" in config.available_features else []))))
