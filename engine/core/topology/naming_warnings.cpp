#include "engine/core/topology/naming_warnings.h"

#include <cctype>
#include <charconv>

#include "engine/core/topology/accelerator.h"

namespace podium::core {

std::vector<NamingWarning> accelerator_naming_warnings(std::string_view accelerator_text) {
  const Parsed<AcceleratorType> parsed = parse_accelerator(accelerator_text);
  if (!parsed.value) return {};
  const AcceleratorType& typed = *parsed.value;
  const AcceleratorFamily* family = find_family(typed.family);
  if (!family || !family->name_counts_cores) return {};

  // The number the user typed: the text after the last '-', when it is a plain count.
  std::string_view text = accelerator_text;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  const size_t dash = text.rfind('-');
  if (dash == std::string_view::npos) return {};
  const std::string_view digits = text.substr(dash + 1);
  int typed_number = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), typed_number);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return {};  // a topology

  const auto other = slice_with_chips(typed.family, typed_number);
  if (!other || other->type == typed.type) return {};

  NamingWarning w;
  w.code = "accelerator_name_counts_cores";
  w.message = summary(typed) + ". The number in a " + typed.family +
              " name counts TensorCores, 2 per chip, so " + typed.type + " is " +
              std::to_string(typed.chips_per_slice) + " chips, not " +
              std::to_string(typed_number) + ". A slice of " + std::to_string(typed_number) +
              " chips is " + summary(*other) + ".";
  w.hint = "If you meant " + std::to_string(typed_number) + " chips, use " + other->type + " (or " +
           typed.family + "-" + other->topology + "). To keep " +
           std::to_string(typed.chips_per_slice) + " chips without this warning, write " +
           typed.family + "-" + typed.topology + ".";
  return {w};
}

nlohmann::json to_json(const NamingWarning& w) {
  return {{"code", w.code}, {"message", w.message}, {"hint", w.hint}};
}

}  // namespace podium::core
