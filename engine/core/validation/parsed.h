#pragma once
// The one result shape of Podium's parsers of untrusted input (run specs, executors, launch
// policies, model configs, accelerator names): the value, or every field error found, not only
// the first, so that a caller can answer with all of them at once (and, for a name that must be
// one of a set, the names it may be). No exceptions for bad input,
// no out-parameters; g++ 12 in C++20 has no std::expected.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/validation/field_error.h"

namespace podium::core {

template <class T>
struct Parsed {
  std::optional<T> value;          // set exactly when errors is empty
  std::vector<FieldError> errors;  // in the order found
  // When the input had to name one of a set (an accelerator type): what it may name instead.
  std::vector<std::string> valid_choices;

  bool ok() const { return value.has_value(); }

  // The errors on one line, "field: message; ..." (a field of "" is the whole input: its message
  // alone), for exceptions, logs and details that quote a parser's complaint.
  std::string summary() const {
    std::string out;
    for (const FieldError& e : errors) {
      if (!out.empty()) out += "; ";
      out += e.field.empty() ? e.message : e.field + ": " + e.message;
    }
    return out;
  }

  // What a parser returns once it has read everything: the value when nothing was wrong.
  static Parsed from(T read, std::vector<FieldError> found) {
    Parsed out;
    if (found.empty()) {
      out.value = std::move(read);
    } else {
      out.errors = std::move(found);
    }
    return out;
  }
  // A parser that stopped at its first problem.
  static Parsed failure(std::string field, std::string message,
                        std::vector<std::string> choices = {}) {
    Parsed out;
    out.errors.push_back({std::move(field), std::move(message)});
    out.valid_choices = std::move(choices);
    return out;
  }
};

}  // namespace podium::core
