// hwaccel.hardware: what a device is, quantization levels and the published
// device-spec table (over hwaccel.base, which it re-exports).
export module hwaccel.hardware;
export import hwaccel.base;
export import :device;
export import :quant;
export import :spec;
