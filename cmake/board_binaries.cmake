# How the board's programs link (the runtime-only cross build: kiln-worker, kiln-kernel-runner,
# model_app, kernel_app, the tests' model_batch_runner).
#
# Fully static by default when cross-compiling: the program is then the whole install, and one
# copy puts it on a board whatever C library the board has (Raspberry Pi OS bullseye's glibc
# 2.31 cannot run a program linked against bookworm's 2.36). The kernels and models these
# programs dlopen link against nothing (docs/deploy.md), so glibc's static dlopen loads them
# without a dynamic loader on the board. OFF keeps libc, libm and the loader dynamic and carries
# only libstdc++ and libgcc inside.
option(KILN_BOARD_STATIC "Link the board programs fully static (cross builds)" ${CMAKE_CROSSCOMPILING})

function(kiln_board_program target)
  if(KILN_BOARD_STATIC)
    # -s: the symbol table is a quarter of the worker, and running needs none of it.
    target_link_options(${target} PRIVATE -static -s)
  elseif(CMAKE_CROSSCOMPILING)
    # Under qemu -L / the cross toolchain's libstdc++ is not in the sysroot: carry it inside.
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  endif()
endfunction()
