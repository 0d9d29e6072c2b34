# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Facts about the installed libibverbs that a standalone provider build needs:
#
#   softrdma_find_libibverbs()      IBVERBS_LIBRARY, IBVERBS_REAL_LIBRARY,
#                                   IBVERBS_INCLUDE_DIR, IBVERBS_RELEASE
#   softrdma_detect_pabi()          SOFTRDMA_PABI (cache; set it to override)
#   softrdma_verbs_install_dirs()   SOFTRDMA_VERBS_PROVIDER_DIR,
#                                   SOFTRDMA_VERBS_CONFIG_DIR (cache)
#   softrdma_generate_kernel_abi(OUT_DIR HEADER...)
#                                   tagless _STRUCT_ macros, as rdma-core does
#   softrdma_check_verbs_layout(COMPAT_DIR INCLUDE_DIRS...)
#                                   run cmake/probe-verbs-ops.c once
#
# Nothing here is needed when the provider is built inside an rdma-core tree.

include_guard(GLOBAL)

set(SOFTRDMA_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}" CACHE INTERNAL
  "Directory of the softrdma CMake helpers")

function(softrdma_find_libibverbs)
  find_library(IBVERBS_LIBRARY NAMES ibverbs
    DOC "libibverbs to link the provider against (the .so development link)")
  find_path(IBVERBS_INCLUDE_DIR infiniband/verbs.h
    DOC "Directory holding infiniband/verbs.h")
  if(NOT IBVERBS_LIBRARY OR NOT IBVERBS_INCLUDE_DIR)
    message(FATAL_ERROR
      "libibverbs development files not found (need libibverbs.so and "
      "infiniband/verbs.h; on Debian: apt-get install libibverbs-dev). "
      "Set IBVERBS_LIBRARY / IBVERBS_INCLUDE_DIR to point elsewhere.")
  endif()
  find_path(RDMA_UAPI_INCLUDE_DIR rdma/ib_user_verbs.h
    DOC "Directory holding the kernel uAPI header rdma/ib_user_verbs.h")
  if(NOT RDMA_UAPI_INCLUDE_DIR)
    message(FATAL_ERROR
      "rdma/ib_user_verbs.h not found (Debian: linux-libc-dev). "
      "Set RDMA_UAPI_INCLUDE_DIR.")
  endif()

  # The file the dynamic linker will really map, e.g. libibverbs.so.1.14.44.0
  get_filename_component(real "${IBVERBS_LIBRARY}" REALPATH)
  set(IBVERBS_REAL_LIBRARY "${real}" PARENT_SCOPE)
  # rdma-core names it libibverbs.so.1.<api>.<release>; keep the release.
  get_filename_component(name "${real}" NAME)
  set(release "")
  if(name MATCHES "^libibverbs\\.so\\.1\\.[0-9]+\\.([0-9]+(\\.[0-9]+)?)$")
    set(release "${CMAKE_MATCH_1}")
  endif()
  set(IBVERBS_RELEASE "${release}" PARENT_SCOPE)
endfunction()

# Dynamic symbol table of the real library, via readelf or objdump.
function(_softrdma_dynsyms lib out_var)
  if(NOT CMAKE_READELF)
    find_program(CMAKE_READELF readelf)
  endif()
  if(NOT CMAKE_OBJDUMP)
    find_program(CMAKE_OBJDUMP objdump)
  endif()
  if(CMAKE_READELF)
    set(cmd "${CMAKE_READELF}" --dyn-syms -W "${lib}")
  elseif(CMAKE_OBJDUMP)
    set(cmd "${CMAKE_OBJDUMP}" -T "${lib}")
  else()
    message(FATAL_ERROR "Need readelf or objdump to read ${lib}")
  endif()
  execute_process(COMMAND ${cmd} OUTPUT_VARIABLE syms
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${cmd} failed: ${err}")
  endif()
  set(${out_var} "${syms}" PARENT_SCOPE)
endfunction()

# The private ABI is the N of the IBVERBS_PRIVATE_<N> symbol version.  It is
# cross-checked against verbs_register_driver_<N>, which rdma-core wires into
# the registration symbol's name, and against the provider file name pattern
# compiled into the library.
function(softrdma_detect_pabi)
  if(SOFTRDMA_PABI)
    message(STATUS "libibverbs private ABI: ${SOFTRDMA_PABI} (set by user)")
    return()
  endif()
  _softrdma_dynsyms("${IBVERBS_REAL_LIBRARY}" syms)
  string(REGEX MATCHALL "IBVERBS_PRIVATE_[0-9]+" versions "${syms}")
  list(REMOVE_DUPLICATES versions)
  list(LENGTH versions count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR
      "Expected exactly one IBVERBS_PRIVATE_<N> symbol version in "
      "${IBVERBS_REAL_LIBRARY}, found '${versions}'. Set SOFTRDMA_PABI "
      "to choose one.")
  endif()
  string(REGEX REPLACE "IBVERBS_PRIVATE_" "" pabi "${versions}")
  if(NOT syms MATCHES "verbs_register_driver_${pabi}[@ \n]")
    message(FATAL_ERROR
      "${IBVERBS_REAL_LIBRARY} has IBVERBS_PRIVATE_${pabi} but no "
      "verbs_register_driver_${pabi}; not an rdma-core libibverbs?")
  endif()
  file(STRINGS "${IBVERBS_REAL_LIBRARY}" pattern
    REGEX "lib%s-rdmav[0-9]+\\.so$" LIMIT_COUNT 1)
  if(pattern AND NOT pattern MATCHES "-rdmav${pabi}\\.so$")
    message(FATAL_ERROR
      "${IBVERBS_REAL_LIBRARY} loads '${pattern}' but exports "
      "IBVERBS_PRIVATE_${pabi}; refusing to guess the private ABI.")
  endif()
  set(SOFTRDMA_PABI "${pabi}" CACHE STRING
    "libibverbs private ABI (IBVERBS_PRIVATE_<N>) the provider is built for")
  message(STATUS "libibverbs private ABI: ${pabi} "
    "(${IBVERBS_REAL_LIBRARY}, rdma-core ${IBVERBS_RELEASE})")
endfunction()

# Where libibverbs looks for providers and .driver files.  Both paths are
# compiled into the library as strings; fall back to rdma-core's defaults.
function(softrdma_verbs_install_dirs)
  file(STRINGS "${IBVERBS_REAL_LIBRARY}" pattern
    REGEX "^/.*/lib%s-rdmav[0-9]+\\.so$" LIMIT_COUNT 1)
  if(pattern)
    get_filename_component(provider_dir "${pattern}" DIRECTORY)
  else()
    get_filename_component(libdir "${IBVERBS_REAL_LIBRARY}" DIRECTORY)
    set(provider_dir "${libdir}/libibverbs")
  endif()
  file(STRINGS "${IBVERBS_REAL_LIBRARY}" config_dir
    REGEX "^/.*/libibverbs\\.d$" LIMIT_COUNT 1)
  if(NOT config_dir)
    set(config_dir "/etc/libibverbs.d")
  endif()
  set(SOFTRDMA_VERBS_PROVIDER_DIR "${provider_dir}" CACHE PATH
    "Directory the provider library is installed into")
  set(SOFTRDMA_VERBS_CONFIG_DIR "${config_dir}" CACHE PATH
    "libibverbs configuration directory that receives softrdma.driver")
endfunction()

# Generate OUT_DIR/kernel-abi/<name>.h for each uAPI header, at configure
# time; cmake re-runs when a header changes.
function(softrdma_generate_kernel_abi out_dir)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  set(script "${SOFTRDMA_CMAKE_DIR}/make-kernel-abi.py")
  file(MAKE_DIRECTORY "${out_dir}/kernel-abi")
  foreach(hdr IN LISTS ARGN)
    get_filename_component(name "${hdr}" NAME)
    execute_process(
      COMMAND "${Python3_EXECUTABLE}" "${script}" "${hdr}"
              "${out_dir}/kernel-abi/${name}"
      RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "make-kernel-abi.py ${hdr}: ${err}")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${hdr}")
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${script}")
endfunction()

# Build and run the ops-layout probe against the installed library.  A
# mismatch is fatal: the provider would load and then call wrong functions.
function(softrdma_check_verbs_layout)
  if(NOT SOFTRDMA_CHECK_VERBS_LAYOUT)
    message(WARNING "SOFTRDMA_CHECK_VERBS_LAYOUT=OFF: verbs_context_ops "
      "layout not checked against ${IBVERBS_REAL_LIBRARY}")
    return()
  endif()
  if(CMAKE_CROSSCOMPILING AND NOT CMAKE_CROSSCOMPILING_EMULATOR)
    message(WARNING "Cross-compiling: run the softrdma_compat_layout test "
      "on the target to check the verbs_context_ops layout")
    return()
  endif()
  try_run(run_rc compile_ok
    "${CMAKE_CURRENT_BINARY_DIR}/probe-verbs-ops"
    "${SOFTRDMA_CMAKE_DIR}/probe-verbs-ops.c"
    CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${ARGN}"
    LINK_LIBRARIES "${IBVERBS_LIBRARY}"
    C_STANDARD 11
    C_EXTENSIONS ON
    COMPILE_OUTPUT_VARIABLE compile_out
    RUN_OUTPUT_VARIABLE run_out)
  if(NOT compile_ok)
    message(FATAL_ERROR
      "cmake/probe-verbs-ops.c does not build with the PABI "
      "${SOFTRDMA_PABI} headers:\n${compile_out}")
  endif()
  string(STRIP "${run_out}" run_out)
  if(NOT run_rc EQUAL 0)
    message(FATAL_ERROR
      "The installed libibverbs (${IBVERBS_REAL_LIBRARY}, rdma-core "
      "${IBVERBS_RELEASE}) uses a different struct verbs_context_ops than "
      "provider/compat/pabi${SOFTRDMA_PABI}/infiniband/driver.h:\n"
      "  ${run_out}\n"
      "Add the layout of this release (see provider/compat/README), or "
      "build inside an rdma-core tree with -DRDMA_CORE_SOURCE_DIR=.")
  endif()
  message(STATUS "${run_out}")
endfunction()
