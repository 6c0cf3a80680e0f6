// hwaccel.hardware: what a device is, errors, and the shared text/JSON primitives.
export module hwaccel.hardware;
export import :device;
export import :error;
export import :text;
export import :json;
