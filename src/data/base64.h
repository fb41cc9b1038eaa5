// Standard base64 (RFC 4648, with padding, no line breaks), as Python's base64.b64encode.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pg::data {

std::string base64_encode(std::string_view bytes);
// Decodes strictly: standard alphabet and padding, no whitespace. nullopt when the text is not
// valid base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace pg::data
