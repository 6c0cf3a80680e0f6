// hwaccel.base: what every other module is written with: errors as values,
// string_view text primitives, the canonical JSON writer, whole-file reads
// and the settings reader.
export module hwaccel.base;
export import :error;
export import :text;
export import :json;
export import :file;
export import :settings;
