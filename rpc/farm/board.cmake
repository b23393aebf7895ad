# The board build of the farm worker (KILN_RUNTIME_ONLY, usually cross-compiled for AArch64):
# finds the target's gRPC and protobuf through pkg-config (for AArch64 the toolchain file names
# aarch64-linux-gnu-pkg-config, which reads Debian's multiarch arm64 -dev packages) and the
# HOST's protoc and grpc_cpp_plugin for code generation (KILN_HOST_PROTOC and
# KILN_HOST_GRPC_CPP_PLUGIN, passed in by the top level; else found on PATH).
#
# Links gRPC, protobuf, absl, re2, c-ares, ssl, crypto, z, libstdc++ and libgcc from static
# archives, and with KILN_BOARD_STATIC (cmake/board_binaries.cmake) the C library too, so the
# binary runs from a folder with nothing else in it (plain `qemu-aarch64` here).
#
# Sets KILN_FARM_BOARD (ON when everything is there), KILN_FARM_PROTOC, KILN_FARM_GRPC_PLUGIN
# and the interface target kiln_farm_grpc. Anything missing: a message, and the runtime and
# runner build without the worker.
set(KILN_FARM_BOARD OFF)
set(KILN_HOST_PROTOC "" CACHE FILEPATH "the build machine's protoc (board build of the farm worker)")
set(KILN_HOST_GRPC_CPP_PLUGIN "" CACHE FILEPATH "the build machine's grpc_cpp_plugin")
if(NOT KILN_HOST_PROTOC)
  find_program(KILN_HOST_PROTOC_FOUND protoc)
  set(KILN_HOST_PROTOC ${KILN_HOST_PROTOC_FOUND})
endif()
if(NOT KILN_HOST_GRPC_CPP_PLUGIN)
  find_program(KILN_HOST_GRPC_CPP_PLUGIN_FOUND grpc_cpp_plugin)
  set(KILN_HOST_GRPC_CPP_PLUGIN ${KILN_HOST_GRPC_CPP_PLUGIN_FOUND})
endif()

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(KILN_BOARD_GRPC QUIET grpc++ protobuf)
endif()
find_path(KILN_BOARD_CLI11_INCLUDE CLI/CLI.hpp)

set(_kiln_board_missing "")
if(NOT KILN_HOST_PROTOC OR NOT KILN_HOST_GRPC_CPP_PLUGIN)
  list(APPEND _kiln_board_missing "the host's protoc and grpc_cpp_plugin")
endif()
if(NOT KILN_BOARD_GRPC_FOUND)
  if(CMAKE_CROSSCOMPILING)
    list(APPEND _kiln_board_missing "the target's gRPC and protobuf seen through \
${PKG_CONFIG_EXECUTABLE} (for AArch64: libgrpc++-dev:arm64 libprotobuf-dev:arm64, which \
scripts/install-deps.sh installs)")
  else()
    list(APPEND _kiln_board_missing "gRPC and protobuf (pkg-config grpc++ protobuf)")
  endif()
endif()
if(NOT KILN_BOARD_CLI11_INCLUDE)
  list(APPEND _kiln_board_missing "CLI11's headers")
endif()
if(_kiln_board_missing)
  list(JOIN _kiln_board_missing "; " _kiln_board_missing)
  message(STATUS "kiln-worker for ${CMAKE_SYSTEM_PROCESSOR} is not built (missing: "
                 "${_kiln_board_missing}); the runtime and kernel runner are")
  return()
endif()

set(KILN_FARM_BOARD ON)
set(KILN_FARM_PROTOC ${KILN_HOST_PROTOC})
set(KILN_FARM_GRPC_PLUGIN ${KILN_HOST_GRPC_CPP_PLUGIN})
add_library(kiln_farm_grpc INTERFACE)
target_include_directories(kiln_farm_grpc INTERFACE ${KILN_BOARD_CLI11_INCLUDE}
                                                    ${KILN_BOARD_GRPC_INCLUDE_DIRS})
target_compile_options(kiln_farm_grpc INTERFACE ${KILN_BOARD_GRPC_CFLAGS_OTHER})
if(KILN_BOARD_STATIC)
  # Everything static, the C library too (kiln-worker links with kiln_board_program).
  target_link_libraries(kiln_farm_grpc INTERFACE ${KILN_BOARD_GRPC_STATIC_LDFLAGS})
else()
  # -Bstatic ... -Bdynamic: the archives of everything pkg-config lists; the compiler driver's
  # own -lc (and -lm from libstdc++'s needs) come after and stay dynamic.
  target_link_libraries(kiln_farm_grpc INTERFACE
    -Wl,-Bstatic ${KILN_BOARD_GRPC_STATIC_LDFLAGS} -Wl,-Bdynamic)
  target_link_options(kiln_farm_grpc INTERFACE -static-libstdc++ -static-libgcc)
endif()
message(STATUS "kiln-worker for ${CMAKE_SYSTEM_PROCESSOR}: gRPC ${KILN_BOARD_GRPC_grpc++_VERSION}, "
               "protoc ${KILN_HOST_PROTOC}")
