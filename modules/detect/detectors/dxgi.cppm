// DXGI backend: the graphics adapters Windows enumerates (IDXGIFactory1::
// EnumAdapters1), read from the document the Windows System answers at
// dxgi_adapters_path (system/windows_facts.cppm). On Linux nothing is there.
module;
#include <cstdint>
export module hwaccel.detectors:dxgi;
import hwaccel.detect;

export namespace hwaccel::parsers {

/// Below this much dedicated video memory an Intel or AMD adapter is taken
/// for an integrated GPU whose "VRAM" is a firmware carve-out of system RAM
/// (DXGI has no integrated flag; discrete boards start at 2 GiB).
inline constexpr std::uint64_t dxgi_integrated_below_bytes = std::uint64_t{1} << 30;

/// Whether an adapter is a GPU worth reporting: not WARP or the Basic
/// Render Driver (software), not a remote desktop's adapter.
bool dxgi_adapter_is_accelerator(const DxgiAdapter& adapter) noexcept;

/// The device an adapter is, numbered `index` among the backend's devices.
DeviceProfile dxgi_device(const DxgiAdapter& adapter, std::uint32_t index);

}  // namespace hwaccel::parsers

export namespace hwaccel {
extern const Detector dxgi_detector;
}
