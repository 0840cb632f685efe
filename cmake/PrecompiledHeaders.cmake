# One precompiled header (cmake/rankc-pch.h) for every compiler target.
#
# g++ spends most of each source's time parsing MLIR's headers (23 of the
# 26 s of lib/Codegen/CUDA/GpuCollapseDims.cpp at -O3), and a cold build is
# what CI pays three times (the normal, the ASan and the fuzz build): the
# header is compiled once, by the first target, and the rest reuse it
# (REUSE_FROM: the same compiler and flags, which every compiler target has
# here; sources with flags of their own, like the JSON reader's -march,
# skip the header: rankc_skip_precompiled_header).
#
# The ASan shim (cmake/asan-with-uninstrumented-llvm.h) must come before
# any LLVM header; a second -include before the precompiled one would stop
# g++ from using it, so in sanitized builds the shim is the header's first
# line instead of a flag for these targets.
option(RANKC_PCH "Precompile the common MLIR headers (faster builds)" ON)

# The trees whose code is instrumented while LLVM's libraries are not.
if(RANKC_SANITIZE OR RANKC_FUZZ)
  set(RANKC_ASAN_TREE ON)
else()
  set(RANKC_ASAN_TREE OFF)
endif()

set(RANKC_PCH_HEADERS ${PROJECT_SOURCE_DIR}/cmake/rankc-pch.h)
if(RANKC_PCH AND RANKC_ASAN_TREE)
  list(PREPEND RANKC_PCH_HEADERS ${PROJECT_SOURCE_DIR}/cmake/asan-with-uninstrumented-llvm.h)
endif()

# rankc_precompile_headers(FIRST [OTHER...]): FIRST compiles the header,
# the others reuse it. Without RANKC_PCH, sanitized builds force-include
# the shim as before.
function(rankc_precompile_headers first)
  set(targets ${first} ${ARGN})
  if(NOT RANKC_PCH)
    if(RANKC_ASAN_TREE)
      foreach(t ${targets})
        target_compile_options(${t} PRIVATE ${RANKC_ASAN_SHIM})
      endforeach()
    endif()
    return()
  endif()
  target_precompile_headers(${first} PRIVATE ${RANKC_PCH_HEADERS})
  foreach(t ${ARGN})
    target_precompile_headers(${t} REUSE_FROM ${first})
  endforeach()
endfunction()

# rankc_skip_precompiled_header(SOURCES...): sources compiled with flags of
# their own (-march) read the headers themselves instead of warning that
# the precompiled one does not fit; in sanitized builds they then need the
# shim as a flag. Call from the sources' directory.
function(rankc_skip_precompiled_header)
  set_property(SOURCE ${ARGN} PROPERTY SKIP_PRECOMPILE_HEADERS ON)
  if(RANKC_PCH AND RANKC_ASAN_TREE)
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_OPTIONS ${RANKC_ASAN_SHIM})
  endif()
endfunction()

# rankc_compiler_targets(OUT DIR...): every library and executable defined
# in DIR and the folders below it. Deriving the list (instead of naming the
# targets) means a target added later cannot miss the header, and with it
# the ASan shim in the sanitized trees.
function(rankc_compiler_targets out)
  set(found)
  set(dirs ${ARGN})
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t ${targets})
      get_target_property(type ${t} TYPE)
      if(type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
        list(APPEND found ${t})
      endif()
    endforeach()
    # Depth first, in the order the folders are added: the first target
    # found (which compiles the header) is then a library every other
    # target links, never an executable that links the others (a cycle).
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(PREPEND dirs ${subdirs})
  endwhile()
  set(${out} ${found} PARENT_SCOPE)
endfunction()
