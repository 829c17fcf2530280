#pragma once
// HTTP status reason phrases: the server's problem+json titles and the CLI's error lines name a
// status the same way, so both read this one table.

#include <string_view>

namespace podium::core {

// The standard reason phrase of an HTTP status ("Not Found"); empty for codes without one here.
std::string_view reason_phrase(int status);

}  // namespace podium::core
