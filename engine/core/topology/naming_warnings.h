#pragma once
// Warnings about accelerator names that mislead (domain brief §2.1). Pure: no I/O.
//
// In v4, v5p and tpu7x names the number counts TensorCores, two per chip: tpu7x-32 is 16 chips.
// Someone who means 32 chips wants tpu7x-64. When the number typed in `family-N` equals the chip
// count of a different slice size of the same family, Podium warns and names both slices with
// their chips, devices and hosts.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace podium::core {

struct NamingWarning {
  std::string code;  // "accelerator_name_counts_cores"
  std::string message;
  std::string hint;
};

// Warnings for the accelerator text as the user typed it ("tpu7x-32"). Empty when the text does
// not parse (that is an error, reported by parse_accelerator), when it is written as a topology
// ("tpu7x-2x2x4": no number to misread), or when N already counts chips (v5e, v6e, GPU, cpu).
std::vector<NamingWarning> accelerator_naming_warnings(std::string_view accelerator_text);

nlohmann::json to_json(const NamingWarning& w);

}  // namespace podium::core
