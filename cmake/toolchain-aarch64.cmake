# Cross-building skinner for aarch64 (64-bit Arm Linux) on an x86-64 Debian host with Debian's
# cross toolchain (gcc-aarch64-linux-gnu) and the arm64 multiarch packages of the dependencies
# under /usr/lib/aarch64-linux-gnu (scripts/setup.sh --cross aarch64 installs both; `make cross
# ARCH=aarch64` uses this file; docs/install.md, "aarch64"). Tests and the programs CMake runs at
# build time go through qemu-aarch64-static (qemu-user-static), with the arm64 loader and libc
# of /usr/aarch64-linux-gnu and the multiarch libraries of the host's /lib and /usr/lib.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(SKINNER_CROSS_TRIPLE aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${SKINNER_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${SKINNER_CROSS_TRIPLE}-g++)

# Headers and libraries: the cross toolchain's /usr/aarch64-linux-gnu, then the host's own tree
# (Debian multiarch: include/ is shared by both arches, the arm64 libraries are in
# /usr/lib/aarch64-linux-gnu, which CMAKE_LIBRARY_ARCHITECTURE makes find_library search; the
# x86_64 ones in /usr/lib/x86_64-linux-gnu are never searched). Programs (pkg-config, python3)
# are the host's.
set(CMAKE_FIND_ROOT_PATH /usr/${SKINNER_CROSS_TRIPLE} /)
set(CMAKE_LIBRARY_ARCHITECTURE ${SKINNER_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads the arm64 .pc files only: never the host's x86_64 ones
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${SKINNER_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# OPENBLAS_NUM_THREADS=1: Debian 12's arm64 OpenBLAS (0.3.21, pthreads) spins forever at start
# under qemu-aarch64-static when it would start its thread pool (a 2x2 cblas_sgemm in a program
# of its own hangs; with one thread it returns at once). skinner sets OpenBLAS to one thread
# itself once running (src/vec/vec.c, src/train/actor.c), but the library's constructor runs
# before that.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -E OPENBLAS_NUM_THREADS=1
    -L /usr/${SKINNER_CROSS_TRIPLE})
