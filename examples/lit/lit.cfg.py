# A downstream project's lit configuration for tests that FileCheck what
# rankc writes: rankc from an installed prefix ($RANKC_PREFIX), FileCheck
# from LLVM. Run: RANKC_PREFIX=PREFIX lit -v examples/lit
# (temporary files under $LIT_OUT, default /tmp/rankc-downstream-lit).
import os

import lit.formats

config.name = "rankc-downstream"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.environ.get("LIT_OUT", "/tmp/rankc-downstream-lit")
config.environment["PATH"] = os.pathsep.join([
    os.path.join(os.environ["RANKC_PREFIX"], "bin"),
    "/usr/lib/llvm-22/bin",
    os.environ["PATH"],
])
