// DXGI's enumeration of a Windows machine's graphics adapters, for the
// Windows System (windows.cpp), which answers it at dxgi_adapters_path.
module;
#include <dxgi1_4.h>
#include <windows.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>
module hwaccel.detect;

namespace hwaccel {

namespace {

struct ReleaseCom {
  void operator()(IUnknown* object) const noexcept {
    if (object) object->Release();
  }
};
template <class T>
using ComRef = std::unique_ptr<T, ReleaseCom>;

std::string utf8(const wchar_t* text) {
  const int n = ::WideCharToMultiByte(CP_UTF8, 0, text, -1, nullptr, 0, nullptr, nullptr);
  if (n <= 1) return {};
  std::string out(static_cast<std::size_t>(n), '\0');
  ::WideCharToMultiByte(CP_UTF8, 0, text, -1, out.data(), n, nullptr, nullptr);
  out.pop_back();  // the terminating NUL
  return out;
}

std::string hresult_text(HRESULT hr) { return "0x" + text::hex_digits(static_cast<std::uint32_t>(hr), 8); }

// The user-mode driver's version, as its four 16-bit parts ("31.0.15.3623").
std::string driver_version_text(LARGE_INTEGER v) {
  const auto high = static_cast<std::uint32_t>(v.HighPart);
  const auto low = static_cast<std::uint32_t>(v.LowPart);
  return text::cat(high >> 16, ".", high & 0xffff, ".", low >> 16, ".", low & 0xffff);
}

DxgiAdapter describe(IDXGIAdapter1& adapter, std::uint32_t index) {
  DxgiAdapter a;
  a.index = index;
  DXGI_ADAPTER_DESC1 desc{};
  if (SUCCEEDED(adapter.GetDesc1(&desc))) {
    a.description = utf8(desc.Description);
    a.vendor_id = desc.VendorId;
    a.device_id = desc.DeviceId;
    a.subsystem_id = desc.SubSysId;
    a.revision = desc.Revision;
    a.dedicated_video_memory = desc.DedicatedVideoMemory;
    a.dedicated_system_memory = desc.DedicatedSystemMemory;
    a.shared_system_memory = desc.SharedSystemMemory;
    a.luid = static_cast<std::uint64_t>(static_cast<std::uint32_t>(desc.AdapterLuid.HighPart)) << 32 | desc.AdapterLuid.LowPart;
    a.software = (desc.Flags & DXGI_ADAPTER_FLAG_SOFTWARE) != 0;
    a.remote = (desc.Flags & DXGI_ADAPTER_FLAG_REMOTE) != 0;
  }
  LARGE_INTEGER umd{};
  if (SUCCEEDED(adapter.CheckInterfaceSupport(__uuidof(IDXGIDevice), &umd))) a.driver_version = driver_version_text(umd);
  IDXGIAdapter3* raw3 = nullptr;
  if (SUCCEEDED(adapter.QueryInterface(__uuidof(IDXGIAdapter3), reinterpret_cast<void**>(&raw3))) && raw3) {
    const ComRef<IDXGIAdapter3> adapter3(raw3);
    DXGI_QUERY_VIDEO_MEMORY_INFO info{};
    if (SUCCEEDED(adapter3->QueryVideoMemoryInfo(0, DXGI_MEMORY_SEGMENT_GROUP_LOCAL, &info))) {
      a.local_budget = info.Budget;
      a.local_usage = info.CurrentUsage;
    }
    if (SUCCEEDED(adapter3->QueryVideoMemoryInfo(0, DXGI_MEMORY_SEGMENT_GROUP_NON_LOCAL, &info))) {
      a.non_local_budget = info.Budget;
      a.non_local_usage = info.CurrentUsage;
    }
  }
  return a;
}

}  // namespace

Result<std::vector<DxgiAdapter>> enumerate_dxgi_adapters() {
  IDXGIFactory1* raw = nullptr;
  const HRESULT hr = ::CreateDXGIFactory1(__uuidof(IDXGIFactory1), reinterpret_cast<void**>(&raw));
  if (FAILED(hr) || !raw)
    return fail(ErrorKind::unsupported,
                text::cat("CreateDXGIFactory1 failed (", hresult_text(hr), ")",
                          hr == DXGI_ERROR_UNSUPPORTED ? ": DXGI_ERROR_UNSUPPORTED, no display driver in this session" : ""));
  const ComRef<IDXGIFactory1> factory(raw);
  std::vector<DxgiAdapter> adapters;
  for (UINT i = 0;; ++i) {
    IDXGIAdapter1* adapter = nullptr;
    const HRESULT got = factory->EnumAdapters1(i, &adapter);
    if (got == DXGI_ERROR_NOT_FOUND) break;
    if (FAILED(got) || !adapter)
      return fail(ErrorKind::io_error, text::cat("IDXGIFactory1::EnumAdapters1(", i, ") failed (", hresult_text(got), ")"));
    const ComRef<IDXGIAdapter1> held(adapter);
    adapters.push_back(describe(*adapter, i));
  }
  return adapters;
}

}  // namespace hwaccel
