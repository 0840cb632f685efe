# The build-system contract of shared/spec/cli.md ("The build-system
# contract (CMake)"): compile DAGs as part of a CMake build.
#
#   rankc_add_program(NAME DAG FILE [TARGET cpu|cuda] [OUTPUT_DIR DIR] [FLAGS ...])
#   rankc_add_library(NAME DAG FILE [TARGET cpu|cuda] [OUTPUT_DIR DIR] [FLAGS ...])
#   rankc_add_test(NAME PROGRAM <program target> [ARGS ...])
#
# Dependencies are exact: the outputs are what `rankc compile
# --print-outputs` declares at configure time, the command depends on the
# DAG, the rankc executable and the runtime archive, and rankc's --depfile
# names every file the compile read. A build after a build does nothing; a
# changed DAG rebuilds only its own program (and CMake re-runs configure,
# since the DAG decides which files there are).

# A DAG compiled by rankc into OUT_DIR; sets `out_dir`, `outputs` and
# `world_size` in the caller.
function(_rankc_compile name emit)
  cmake_parse_arguments(ARG "" "DAG;TARGET;OUTPUT_DIR" "FLAGS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "rankc: ${name}: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_DAG)
    message(FATAL_ERROR "rankc: ${name}: DAG FILE is required")
  endif()
  if(NOT ARG_TARGET)
    set(ARG_TARGET cpu)
  endif()
  if(NOT ARG_TARGET MATCHES "^(cpu|cuda)$")
    message(FATAL_ERROR "rankc: ${name}: TARGET must be cpu or cuda, got '${ARG_TARGET}'")
  endif()
  get_filename_component(dag "${ARG_DAG}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(ARG_OUTPUT_DIR)
    get_filename_component(out "${ARG_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  else()
    set(out "${CMAKE_CURRENT_BINARY_DIR}/${name}")
  endif()
  get_target_property(rankc_exe rankc::rankc LOCATION)
  set(runtime rankc::runtime)
  if(ARG_TARGET STREQUAL "cuda")
    if(NOT TARGET rankc::runtime_cuda)
      message(FATAL_ERROR "rankc: ${name}: this rankc was built without CUDA")
    endif()
    set(runtime rankc::runtime_cuda)
  endif()
  set(command "${rankc_exe}" compile "${dag}" -o "${out}" --emit ${emit}
      --target ${ARG_TARGET} ${ARG_FLAGS})

  # Configure time: the DAG decides the world size and the file names.
  execute_process(COMMAND "${rankc_exe}" check "${dag}"
                  OUTPUT_VARIABLE summary ERROR_VARIABLE error RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "rankc: ${name}: ${error}")
  endif()
  string(REGEX MATCH "world_size ([0-9]+)" _ "${summary}")
  set(world_size ${CMAKE_MATCH_1})
  execute_process(COMMAND ${command} --print-outputs
                  OUTPUT_VARIABLE outputs ERROR_VARIABLE error RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "rankc: ${name}: ${error}")
  endif()
  string(STRIP "${outputs}" outputs)
  string(REPLACE "\n" ";" outputs "${outputs}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${dag}")

  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${command} --depfile "${out}.d"
    DEPENDS "${dag}" rankc::rankc "$<TARGET_FILE:${runtime}>"
    DEPFILE "${out}.d"
    COMMENT "rankc: compiling ${ARG_DAG} (--emit ${emit}, ${ARG_TARGET})"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${outputs})
  set_target_properties(${name} PROPERTIES
    RANKC_OUTPUT_DIR "${out}" RANKC_WORLD_SIZE "${world_size}")
  set(out_dir "${out}" PARENT_SCOPE)
  set(outputs "${outputs}" PARENT_SCOPE)
  set(world_size "${world_size}" PARENT_SCOPE)
endfunction()

function(rankc_add_program name)
  _rankc_compile(${name} exe ${ARGN})
  set_target_properties(${name} PROPERTIES RANKC_LAUNCH "${out_dir}/launch")
endfunction()

# For each program P of the DAG, the library target NAME::P: linking it
# brings OUT/include (rankc_P.h) and OUT/lib/librankc_P.so, built first.
function(rankc_add_library name)
  _rankc_compile(${name} lib ${ARGN})
  file(MAKE_DIRECTORY "${out_dir}/include")
  set(programs)
  foreach(file IN LISTS outputs)
    if(file MATCHES "/lib/librankc_([A-Za-z0-9_]+)\\.so$")
      set(p ${CMAKE_MATCH_1})
      list(APPEND programs ${p})
      add_library(${name}::${p} SHARED IMPORTED GLOBAL)
      set_target_properties(${name}::${p} PROPERTIES
        IMPORTED_LOCATION "${file}"
        IMPORTED_SONAME "librankc_${p}.so"
        INTERFACE_INCLUDE_DIRECTORIES "${out_dir}/include")
      add_dependencies(${name}::${p} ${name})
    endif()
  endforeach()
  set_target_properties(${name} PROPERTIES RANKC_PROGRAMS "${programs}")
endfunction()

# A CTest test that runs a rankc_add_program's launch script under mpiexec:
# MPIEXEC_EXECUTABLE (FindMPI's; else the first of mpiexec.mpich,
# mpiexec.hydra, mpiexec on PATH) and MPIEXEC_PREFLAGS (given to mpiexec
# before the programs); PROCESSORS is the DAG's world size.
function(rankc_add_test name)
  cmake_parse_arguments(ARG "" "PROGRAM" "ARGS" ${ARGN})
  if(NOT ARG_PROGRAM OR NOT TARGET ${ARG_PROGRAM})
    message(FATAL_ERROR "rankc_add_test(${name}): PROGRAM must name a rankc_add_program target")
  endif()
  get_target_property(launch ${ARG_PROGRAM} RANKC_LAUNCH)
  get_target_property(world_size ${ARG_PROGRAM} RANKC_WORLD_SIZE)
  if(NOT launch)
    message(FATAL_ERROR "rankc_add_test(${name}): '${ARG_PROGRAM}' is not a rankc_add_program target")
  endif()
  if(NOT MPIEXEC_EXECUTABLE)
    find_program(MPIEXEC_EXECUTABLE NAMES mpiexec.mpich mpiexec.hydra mpiexec)
  endif()
  set(args ${ARG_ARGS} ${ARG_UNPARSED_ARGUMENTS})
  if(MPIEXEC_PREFLAGS)
    if(NOT "--" IN_LIST args)
      list(APPEND args --)
    endif()
    list(APPEND args ${MPIEXEC_PREFLAGS})
  endif()
  add_test(NAME ${name} COMMAND "${launch}" ${args})
  set_tests_properties(${name} PROPERTIES PROCESSORS ${world_size}
    ENVIRONMENT "RANKC_MPIEXEC=${MPIEXEC_EXECUTABLE}")
endfunction()
