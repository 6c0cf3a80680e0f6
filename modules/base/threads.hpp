// Threads where the target has them. Debian's WebAssembly C++ runtime is
// built without threads (libc++'s _LIBCPP_HAS_NO_THREADS): there, code that
// would run tools side by side runs them one after another, and a Mutex
// guards nothing because nothing runs beside it. Include in a global module
// fragment.
#pragma once

#include <mutex>  // std::lock_guard, std::call_once (in both runtimes)

#if defined(_LIBCPP_HAS_NO_THREADS)
#define HWACCEL_HAS_THREADS 0
namespace hwaccel {
struct Mutex {
  void lock() noexcept {}
  void unlock() noexcept {}
  bool try_lock() noexcept { return true; }
};
}  // namespace hwaccel
#else
#define HWACCEL_HAS_THREADS 1
#include <thread>
namespace hwaccel {
using Mutex = std::mutex;
}  // namespace hwaccel
#endif
