# Finds the project's dependencies (all from Debian packages; scripts/setup
# installs them) and makes imported targets for them:
#   pipec::antlr4  - the ANTLR4 C++ runtime, static, headers as SYSTEM
#   pipec::llvm    - LLVM 14 Support, static
#   pipec::zlib    - zlib, static (gzip-compressed traces)
#   pipec::sqlite3 - SQLite, static (Nsight Systems exports)
#   doctest::doctest, and the lit/FileCheck programs for the test suite.

find_program(ANTLR4_EXECUTABLE NAMES antlr4 REQUIRED
  DOC "The ANTLR4 tool (Debian package antlr4)")

find_path(ANTLR4_INCLUDE_DIR antlr4-runtime.h
  PATHS /usr/include/antlr4-runtime /usr/local/include/antlr4-runtime REQUIRED)
find_library(ANTLR4_STATIC_LIBRARY NAMES libantlr4-runtime.a REQUIRED)
add_library(pipec::antlr4 STATIC IMPORTED)
set_target_properties(pipec::antlr4 PROPERTIES
  IMPORTED_LOCATION ${ANTLR4_STATIC_LIBRARY}
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${ANTLR4_INCLUDE_DIR}
  INTERFACE_INCLUDE_DIRECTORIES ${ANTLR4_INCLUDE_DIR})

# LLVM: not find_package(LLVM), whose exported targets drag in shared
# libraries (libz3) and need files Debian splits into other packages. Support
# and Demangle are all we link, statically.
find_program(LLVM_CONFIG NAMES llvm-config-14 llvm-config REQUIRED)
execute_process(COMMAND ${LLVM_CONFIG} --includedir
  OUTPUT_VARIABLE LLVM_INCLUDE_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${LLVM_CONFIG} --libdir
  OUTPUT_VARIABLE LLVM_LIB_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${LLVM_CONFIG} --bindir
  OUTPUT_VARIABLE LLVM_TOOLS_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
add_library(pipec::llvm INTERFACE IMPORTED)
set_target_properties(pipec::llvm PROPERTIES
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${LLVM_INCLUDE_DIR}
  INTERFACE_INCLUDE_DIRECTORIES ${LLVM_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES
    "${LLVM_LIB_DIR}/libLLVMSupport.a;${LLVM_LIB_DIR}/libLLVMDemangle.a;-Wl,--as-needed;z;tinfo;pthread;dl;rt;-Wl,--no-as-needed")

# zlib, for gzip-compressed profiler traces: static, so that a pipec built
# here needs nothing more on a GPU machine.
find_path(ZLIB_INCLUDE_DIR zlib.h REQUIRED)
find_library(ZLIB_STATIC_LIBRARY NAMES libz.a REQUIRED)
add_library(pipec::zlib STATIC IMPORTED)
set_target_properties(pipec::zlib PROPERTIES
  IMPORTED_LOCATION ${ZLIB_STATIC_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${ZLIB_INCLUDE_DIR})

# SQLite, for Nsight Systems' SQLite exports: static for the same reason
# (a GPU machine need not have libsqlite3).
find_path(SQLITE3_INCLUDE_DIR sqlite3.h REQUIRED)
find_library(SQLITE3_STATIC_LIBRARY NAMES libsqlite3.a REQUIRED)
add_library(pipec::sqlite3 STATIC IMPORTED)
set_target_properties(pipec::sqlite3 PROPERTIES
  IMPORTED_LOCATION ${SQLITE3_STATIC_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${SQLITE3_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES "m;pthread;dl")

find_package(doctest QUIET)
if(NOT doctest_FOUND)
  find_path(DOCTEST_INCLUDE_DIR doctest/doctest.h REQUIRED)
  add_library(doctest::doctest INTERFACE IMPORTED)
  set_target_properties(doctest::doctest PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES ${DOCTEST_INCLUDE_DIR})
endif()

find_program(FILECHECK_EXECUTABLE FileCheck HINTS ${LLVM_TOOLS_DIR})
find_program(LIT_EXECUTABLE NAMES lit lit.py llvm-lit
  HINTS ${LLVM_LIB_DIR}/../build/utils/lit ${LLVM_TOOLS_DIR})
