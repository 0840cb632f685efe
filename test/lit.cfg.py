# lit configuration of rankc's tests.
import os
import lit.formats

config.name = "rankc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "unit", "lit.cfg.py", "rc.sh", "gen_error_tests.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.rankc_obj_root, "test")

# Our tools first, then LLVM's (FileCheck, not, split-file, count).
path = os.pathsep.join(config.rankc_tools_dirs + [config.llvm_tools_dir,
                                                  config.environment.get("PATH", os.environ["PATH"])])
config.environment["PATH"] = path
config.substitutions.append(("%examples", os.path.join(config.rankc_src_root, "examples")))
config.substitutions.append(("%python", "python3"))
config.substitutions.append(("%rc", "bash " + os.path.join(config.rankc_src_root, "test", "rc.sh")))
