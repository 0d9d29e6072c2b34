# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# -DRDMA_CORE_SOURCE_DIR=<tree>: build the provider as part of an rdma-core
# source tree, with that tree's own driver.h, kern-abi.h and rdma_provider(),
# the way a distribution that carries softrdma would build it.
#
# Configure time: cmake/add-to-rdma-core.sh links provider/ into
#   <tree>/providers/softrdma and the uAPI header into
#   <tree>/kernel-headers/rdma/, and registers both in the tree's CMake files.
# Build time (SOFTRDMA_RDMA_CORE_BUILD=ON): the tree is configured in place
#   (IN_PLACE=1) under <build>/rdma-core and only libibverbs and the provider
#   are built.  The result runs uninstalled against that tree's libibverbs:
#     LD_LIBRARY_PATH=<build>/rdma-core/lib <build>/rdma-core/bin/ibv_devices
#   It is not installed by this project: a provider only works with the
#   libibverbs of the same rdma-core release, so it ships with that release.
#
# No PABI-specific declarations from provider/compat/ are used in this mode.

include_guard(GLOBAL)
include(ExternalProject)

function(softrdma_build_in_rdma_core_tree tree_arg)
  get_filename_component(tree "${tree_arg}" ABSOLUTE)
  if(NOT EXISTS "${tree}/buildlib/rdma_functions.cmake" OR
     NOT EXISTS "${tree}/libibverbs/driver.h")
    message(FATAL_ERROR "RDMA_CORE_SOURCE_DIR=${tree} is not an rdma-core source tree")
  endif()

  file(STRINGS "${tree}/CMakeLists.txt" pabi_line
    REGEX "^set\\(IBVERBS_PABI_VERSION \"[0-9]+\"\\)")
  file(STRINGS "${tree}/CMakeLists.txt" version_line
    REGEX "^set\\(PACKAGE_VERSION \"[0-9.]+\"\\)")
  string(REGEX MATCH "[0-9]+" pabi "${pabi_line}")
  string(REGEX MATCH "[0-9.]+" release "${version_line}")
  if(NOT pabi)
    message(FATAL_ERROR "No IBVERBS_PABI_VERSION in ${tree}/CMakeLists.txt")
  endif()
  message(STATUS "rdma-core tree ${tree}: release ${release}, private ABI ${pabi}")

  execute_process(
    COMMAND sh "${PROJECT_SOURCE_DIR}/cmake/add-to-rdma-core.sh"
            "${tree}" "${PROJECT_SOURCE_DIR}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake/add-to-rdma-core.sh failed: ${err}")
  endif()
  message(STATUS "${out}")

  option(SOFTRDMA_RDMA_CORE_BUILD
    "Build the rdma-core tree's libibverbs and the provider from this build" ON)
  if(NOT SOFTRDMA_RDMA_CORE_BUILD)
    message(STATUS "Build rdma-core as usual (e.g. ${tree}/build.sh); it now "
      "produces libsoftrdma-rdmav${pabi}.so")
    return()
  endif()

  set(target "softrdma-rdmav${pabi}")
  set(bin "${PROJECT_BINARY_DIR}/rdma-core")
  # Trimmed to what the provider needs; override with SOFTRDMA_RDMA_CORE_ARGS.
  set(SOFTRDMA_RDMA_CORE_ARGS
    -DIN_PLACE=1 -DNO_MAN_PAGES=1 -DNO_PYVERBS=1 -DENABLE_VALGRIND=0
    CACHE STRING "Extra cmake arguments for configuring the rdma-core tree")
  ExternalProject_Add(rdma-core
    SOURCE_DIR "${tree}"
    BINARY_DIR "${bin}"
    CMAKE_ARGS ${SOFTRDMA_RDMA_CORE_ARGS}
               "-DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}"
    BUILD_COMMAND "${CMAKE_COMMAND}" --build "${bin}"
                  --target ibverbs ibv_devices ${target}
    INSTALL_COMMAND ""
    BUILD_ALWAYS ON
    USES_TERMINAL_BUILD ON)
  set(SOFTRDMA_RDMA_CORE_LIB_DIR "${bin}/lib" PARENT_SCOPE)
  message(STATUS "provider: ${bin}/lib/lib${target}.so (built by the rdma-core tree)")
endfunction()
