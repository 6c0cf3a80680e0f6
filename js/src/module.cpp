// The WebAssembly module's own part: what wasi-libc leaves to its program.
// Everything it exports is the C API (include/hwaccel/hwaccel.h; the list is
// js/meson.build's c_api_exports), called by js/hwaccel.js.
#include <cstdint>
#include <cstdlib>

extern "C" {

// The stack protector's canary and failure hook, which the wasm32 compiler
// runtime expects its program to define. A WASI reactor cannot read
// randomness before it starts, so the guard is a constant: the check still
// catches an overflow that writes past a frame, though not a deliberate one.
std::uintptr_t __stack_chk_guard = 0x2c9a41f3u;
[[noreturn]] void __stack_chk_fail(void) { std::abort(); }

// Registers the destructor of a thread_local object, which libc++abi for
// wasm32 (built without threads) leaves out. The module's one thread lives
// as long as its instance, and a reactor never exits: the objects are freed
// with the instance's memory, so there is nothing to run.
int __cxa_thread_atexit(void (*)(void*), void*, void*) { return 0; }
}
