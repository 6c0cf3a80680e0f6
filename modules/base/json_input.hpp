// Parsing JSON text that arrives as a std::string_view.
//
// Included (after <simdjson.h>) by the implementation units that read JSON: tool
// output, fixture manifests, registry documents, model configs. Not part of any
// module interface, so simdjson stays out of the BMIs.
#pragma once

#include <simdjson.h>

#include <string_view>

namespace hwaccel::json_input {

/// Parses `text` into `parser`'s document. simdjson copies the bytes into its
/// padded buffer with memcpy, which must never see a null pointer, and the
/// empty string_view of an absent file or a silent tool has one; empty text is
/// handed over as a zero-length view of a real string instead, so that it
/// fails with simdjson's EMPTY error like any other non-document.
[[nodiscard]] inline simdjson::simdjson_result<simdjson::dom::element>
parse(simdjson::dom::parser& parser, std::string_view text) {
  static constexpr char no_bytes[] = "";
  return parser.parse(text.empty() ? no_bytes : text.data(), text.size());
}

}  // namespace hwaccel::json_input
