# How rankc's programs link LLVM and MLIR: sets RANKC_MLIR_LIBS.
#
#   RANKC_LLVM_LINKAGE=static (the default where lld is found): LLVM's and
#     MLIR's static archives, only what is reached kept (--gc-sections).
#     A tool starts in about 6 ms instead of 25: with the shared libraries
#     the loader resolves some 47,000 symbols of libMLIR and libLLVM (250
#     MB) on every run before main, and `rankc compile` of a small document
#     is a few tens of milliseconds of work (issue 15: time per node flat
#     from 10^3 nodes). An installed rankc then needs no LLVM at run time.
#   RANKC_LLVM_LINKAGE=shared: libMLIR.so and libLLVM.so (faster to link
#     with ld.bfd, slower to start).
#
# Debian's MLIR targets name the shared libLLVM in their link interface
# (LLVM_LINK_LLVM_DYLIB), so the static link cannot go through them: it
# names the archives, as one group, since they reference one another in
# every direction. lld links it in about 2 s on two cores (gold 8 s).

find_program(RANKC_LLD ld.lld)
if(RANKC_LLD)
  set(_rankc_default_linkage static)
else()
  set(_rankc_default_linkage shared)
endif()
set(RANKC_LLVM_LINKAGE ${_rankc_default_linkage} CACHE STRING
    "How rankc's tools link LLVM and MLIR: static (archives, lld) or shared")
set_property(CACHE RANKC_LLVM_LINKAGE PROPERTY STRINGS static shared)

if(RANKC_LLVM_LINKAGE STREQUAL "shared")
  set(RANKC_MLIR_LIBS MLIR LLVM)
elseif(RANKC_LLVM_LINKAGE STREQUAL "static")
  file(GLOB _rankc_archives "${LLVM_LIBRARY_DIR}/libMLIR*.a"
                            "${LLVM_LIBRARY_DIR}/libLLVM*.a")
  if(NOT _rankc_archives)
    message(FATAL_ERROR "RANKC_LLVM_LINKAGE=static: no libMLIR*.a or "
            "libLLVM*.a in ${LLVM_LIBRARY_DIR}")
  endif()
  find_package(ZLIB REQUIRED)
  find_library(RANKC_ZSTD NAMES zstd REQUIRED)
  find_library(RANKC_FFI NAMES ffi REQUIRED)
  find_package(Threads REQUIRED)
  add_library(RankcStaticLLVM INTERFACE)
  target_link_libraries(RankcStaticLLVM INTERFACE
    "$<LINK_GROUP:RESCAN,${_rankc_archives}>"
    ZLIB::ZLIB ${RANKC_ZSTD} ${RANKC_FFI} Threads::Threads ${CMAKE_DL_LIBS} rt m)
  target_link_options(RankcStaticLLVM INTERFACE -Wl,--gc-sections)
  if(RANKC_LLD)
    target_link_options(RankcStaticLLVM INTERFACE -fuse-ld=lld)
  endif()
  set(RANKC_MLIR_LIBS RankcStaticLLVM)
else()
  message(FATAL_ERROR "RANKC_LLVM_LINKAGE must be static or shared, not "
          "'${RANKC_LLVM_LINKAGE}'")
endif()
message(STATUS "rankc links LLVM and MLIR ${RANKC_LLVM_LINKAGE}")
