// hwaccel.hardware: what a device is, errors, the shared text/JSON primitives,
// quantization levels and the published device-spec table.
export module hwaccel.hardware;
export import :device;
export import :error;
export import :text;
export import :json;
export import :quant;
export import :spec;
