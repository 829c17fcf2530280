#include "engine/cli/views.h"

#include "engine/cli/ratio_text.h"

namespace podium::cli {
namespace {

// A value that may be a name string or an object carrying one (run.cluster, cluster.accelerator).
std::string name_of(const Json* v, std::initializer_list<std::string_view> keys) {
  if (v == nullptr || v->is_null()) return "-";
  if (v->is_object()) return format_value(find_any(*v, keys));
  return format_value(*v);
}

const Json* number_at(const Json& item, std::initializer_list<std::string_view> paths) {
  const Json* v = find_any(item, paths);
  return v != nullptr && v->is_number() ? v : nullptr;
}

std::string count_cell(const Json& item, std::initializer_list<std::string_view> paths) {
  const Json* v = number_at(item, paths);
  return v == nullptr ? format_value(find_any(item, paths)) : format_count(v->get<double>());
}

std::string bytes_cell(const Json& item, std::initializer_list<std::string_view> paths) {
  const Json* v = number_at(item, paths);
  return v == nullptr ? format_value(find_any(item, paths)) : format_bytes(v->get<double>());
}

std::string percent_cell(const Json* v) {
  // goodput may come as an object with its badput breakdown: show the headline value.
  if (v != nullptr && v->is_object()) v = find_any(*v, {"value", "goodput", "fraction"});
  if (v == nullptr || !v->is_number()) return format_value(v);
  return format_percent(v->get<double>());  // the API reports MFU and goodput as fractions
}

Column any_column(std::string header, std::initializer_list<std::string_view> paths,
                  bool right = false) {
  std::vector<std::string> owned(paths.begin(), paths.end());
  return Column{std::move(header),
                [owned](const Json& item) {
                  for (const auto& p : owned) {
                    const Json* v = find_path(item, p);
                    if (v != nullptr && !v->is_null()) return format_value(*v);
                  }
                  return std::string("-");
                },
                right};
}

Column time_column(std::string header, std::initializer_list<std::string_view> paths) {
  std::vector<std::string> owned(paths.begin(), paths.end());
  return Column{std::move(header), [owned](const Json& item) {
                  for (const auto& p : owned) {
                    const Json* v = find_path(item, p);
                    if (v != nullptr && !v->is_null()) return format_time(v);
                  }
                  return std::string("-");
                }};
}

}  // namespace

std::string run_state_text(const Json& run) {
  std::string state = format_value(find_path(run, "state"));
  const Json* failure = find_path(run, "failure_class");
  if (failure != nullptr && failure->is_string() && !failure->get<std::string>().empty()) {
    state += " (" + failure->get<std::string>() + ")";
  }
  return state;
}

std::vector<Column> cluster_columns() {
  return {
      field_column("NAME", "name"),
      {"ACCELERATOR", [](const Json& c) { return name_of(find_path(c, "accelerator"), {"type"}); }},
      {"TOPOLOGY",
       [](const Json& c) {
         return format_value(find_any(c, {"accelerator.topology", "topology"}));
       }},
      field_column("SLICES", "num_slices", true),
      field_column("CAPACITY", "capacity"),
      field_column("ZONE", "zone"),
      {"HOSTS",
       [](const Json& c) {
         const Json* reg = find_path(c, "hosts.registered");
         const Json* exp = find_path(c, "hosts.expected");
         if (reg == nullptr && exp == nullptr) return std::string("-");
         return format_value(reg) + "/" + format_value(exp);
       },
       true},
      field_column("HEALTHY", "hosts.healthy", true),
      time_column("CREATED", {"created_at"}),
  };
}

// One slice type per row: chips, JAX devices and hosts side by side (the names count chips or
// TensorCores depending on the family; this table says which is which).
std::vector<Column> accelerator_columns() {
  return {
      field_column("TYPE", "type"),
      field_column("FAMILY", "family"),
      {"TOPOLOGY", [](const Json& a) { return format_value(find_path(a, "topology")); }},
      field_column("CHIPS", "chips_per_slice", true),
      field_column("DEVICES", "devices_per_slice", true),
      field_column("HOSTS", "hosts_per_slice", true),
      field_column("TFLOP/S/DEVICE", "peak_tflops_per_device", true),
      field_column("HBM GIB/DEVICE", "hbm_gib_per_device", true),
  };
}

std::vector<Column> dataset_columns() {
  return {
      field_column("NAME", "name"),
      field_column("FORMAT", "format"),
      {"RECORDS", [](const Json& d) { return count_cell(d, {"records"}); }, true},
      {"BYTES", [](const Json& d) { return bytes_cell(d, {"bytes"}); }, true},
      {"TOKENS", [](const Json& d) { return count_cell(d, {"tokens"}); }, true},
      time_column("CREATED", {"created_at"}),
      field_column("URI", "uri"),
  };
}

std::vector<Column> run_columns() {
  return {
      field_column("ID", "id"),
      field_column("NAME", "name"),
      {"STATE", [](const Json& r) { return run_state_text(r); }},
      {"CLUSTER",
       [](const Json& r) {
         return name_of(find_path(r, "cluster"), {"name", "id"});
       }},
      {"MODEL", [](const Json& r) { return name_of(find_path(r, "model"), {"name"}); }},
      any_column("STEP", {"last_step"}, true),
      any_column("RESTARTS", {"restarts"}, true),
      time_column("CREATED", {"created_at"}),
  };
}

std::vector<Column> attempt_columns() {
  return {
      any_column("ATTEMPT", {"number", "attempt", "index", "id"}),
      any_column("STATE", {"state"}),
      time_column("STARTED", {"started_at", "start", "start_time"}),
      time_column("ENDED", {"ended_at", "end", "end_time", "finished_at"}),
      any_column("EXIT", {"exit_codes", "exit_code"}),
      any_column("FAILURE", {"failure_class"}),
      {"STEPS",
       [](const Json& a) {
         const Json* first = find_path(a, "first_step");
         const Json* last = find_path(a, "last_step");
         if ((first == nullptr || first->is_null()) && (last == nullptr || last->is_null()))
           return std::string("-");
         return format_value(first) + ".." + format_value(last);
       }},
      {"HOSTS",
       [](const Json& a) {
         const Json* hosts = find_any(a, {"hosts", "ranks"});
         if (hosts == nullptr || !hosts->is_array()) return format_value(hosts);
         return std::to_string(hosts->size());
       },
       true},
  };
}

std::vector<Column> run_event_columns() {
  return {
      time_column("AT", {"at", "created_at"}),
      any_column("FROM", {"from_state"}),
      any_column("TO", {"to_state"}),
      any_column("CAUSE", {"cause"}),
  };
}

std::vector<Column> checkpoint_columns() {
  return {
      any_column("STEP", {"step"}, true),
      {"SIZE",
       [](const Json& c) {
         return bytes_cell(c, {"bytes", "size_bytes"});
       },
       true},
      time_column("CREATED", {"created_at"}),
      any_column("URI", {"uri", "path"}),
  };
}

std::vector<Column> worker_columns() {
  return {
      any_column("ID", {"id", "worker_id"}),
      any_column("SLICE", {"slice"}, true),
      any_column("HOST", {"host"}, true),
      any_column("HOSTNAME", {"hostname"}),
      any_column("ADDRESS", {"address"}),
      any_column("DEVICES", {"devices"}, true),
      {"STATE",
       [](const Json& w) {
         if (const Json* s = find_any(w, {"state", "status"})) return format_value(*s);
         const Json* healthy = find_path(w, "healthy");
         if (healthy != nullptr && healthy->is_boolean())
           return std::string(healthy->get<bool>() ? "healthy" : "unhealthy");
         return std::string("-");
       }},
      time_column("LAST HEARTBEAT", {"last_heartbeat_at", "last_heartbeat", "last_seen_at"}),
      any_column("VERSION", {"version"}),
  };
}

std::vector<Column> model_columns() {
  return {
      field_column("NAME", "name"),
      any_column("WORKLOAD", {"workload"}),
      any_column("DECODER", {"architecture.decoder_block", "decoder_block"}),
      any_column("LAYERS", {"architecture.base_num_decoder_layers", "layers.total"}, true),
      {"PARAMS",
       [](const Json& m) {
         return count_cell(m, {"parameters.total", "params", "parameters"});
       },
       true},
      {"ACTIVE",
       [](const Json& m) {
         return count_cell(m,
                           {"parameters.active_per_token", "active_params", "active_parameters"});
       },
       true},
      {"MOE",
       [](const Json& m) {
         const Json* moe = find_path(m, "moe");
         if (moe == nullptr || !moe->is_boolean()) return format_value(moe);
         return std::string(moe->get<bool>() ? "yes" : "no");
       }},
  };
}

namespace {

size_t array_size(const Json& plan, const char* key) {
  const auto it = plan.find(key);
  return it != plan.end() && it->is_array() ? it->size() : 0;
}

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string num(const Json& obj, std::initializer_list<std::string_view> paths) {
  return format_value(find_any(obj, paths));
}

// An item of errors/warnings/alternatives: "code: message" or the plain string.
void render_issue(const Json& item, const std::string& pad, std::string& out) {
  if (!item.is_object()) {
    out += pad + format_value(item) + "\n";
    return;
  }
  const Json* code = find_any(item, {"code", "field"});
  const Json* message = find_path(item, "message");
  std::string line = pad;
  if (code != nullptr) line += format_value(*code);
  if (message != nullptr && !message->is_null())
    line += (code != nullptr ? ": " : "") + format_value(*message);
  if (code == nullptr && message == nullptr) line += item.dump();
  const Json* check = find_path(item, "check");
  const Json* skipped = find_path(item, "skipped");
  if (check != nullptr && check->is_string())
    line +=
        " [check " + check->get<std::string>() +
        (skipped != nullptr && skipped->is_boolean() && skipped->get<bool>() ? ", skipped]" : "]");
  out += line + "\n";
  if (const Json* hint = find_path(item, "hint");
      hint != nullptr && !hint->is_null() && *hint != "") {
    out += pad + "  hint: " + format_value(*hint) + "\n";
  }
}

// key=value pairs of an object on one line, nested objects with dotted keys.
void flatten(const Json& obj, const std::string& prefix, std::string& out) {
  for (const auto& [k, v] : obj.items()) {
    if (v.is_object()) {
      flatten(v, prefix + k + ".", out);
      continue;
    }
    if (!out.empty()) out += " ";
    out += prefix + k + "=" + (v.is_array() ? v.dump() : format_value(v));
  }
}

}  // namespace

std::string plan_verdict(const Json& plan) {
  const Json* ok = find_path(plan, "ok");
  const size_t errors = array_size(plan, "errors");
  const size_t warnings = array_size(plan, "warnings");
  const bool is_ok = ok != nullptr && ok->is_boolean() && ok->get<bool>();
  if (is_ok) return "ok, " + plural(warnings, "warning");
  return plural(errors, "error") + ", " + plural(warnings, "warning");
}

std::string render_plan(const Json& plan) {
  std::string out;
  const Json* ok = find_path(plan, "ok");
  const bool is_ok = ok != nullptr && ok->is_boolean() && ok->get<bool>();
  const size_t n_errors = array_size(plan, "errors");
  out += is_ok ? "Plan: OK" : "Plan: ERRORS";
  if (!is_ok && n_errors > 0) out += " (" + std::to_string(n_errors) + ")";
  out += "\n";

  if (n_errors > 0) {
    out += "\nErrors:\n";
    for (const auto& e : plan["errors"]) render_issue(e, "  ", out);
  }
  if (array_size(plan, "warnings") > 0) {
    out += "\nWarnings:\n";
    for (const auto& w : plan["warnings"]) render_issue(w, "  ", out);
  }

  if (const Json* model = find_path(plan, "model");
      model != nullptr && model->is_object() && !model->empty()) {
    out += "\nModel:\n  " + format_value(find_path(*model, "name"));
    const Json* total = find_any(*model, {"total_params", "parameters.total"});
    const Json* active =
        find_any(*model, {"active_params_per_token", "parameters.active_per_token"});
    if (total != nullptr && total->is_number())
      out += ", " + format_count(total->get<double>()) + " parameters";
    if (active != nullptr && active->is_number() && (total == nullptr || *active != *total)) {
      out += " (" + format_count(active->get<double>()) + " active per token)";
    }
    out += "\n";
  }

  if (const Json* t = find_path(plan, "topology"); t != nullptr && t->is_object() && !t->empty()) {
    std::string line = "  ";
    const Json* type = find_any(*t, {"type", "accelerator", "name"});
    const Json* shape = find_any(*t, {"topology", "shape"});
    if (type != nullptr) line += format_value(*type);
    if (shape != nullptr) line += (type != nullptr ? " " : "") + format_value(*shape);
    if (const Json* slices = find_any(*t, {"slices", "num_slices"})) {
      line += " x " + format_value(*slices) + " slice(s)";
    }
    out += "\nTopology:\n";
    if (line != "  ") out += line + "\n";
    out += "  chips " + num(*t, {"total_chips", "chips", "chips_per_slice"}) + ", devices " +
           num(*t, {"total_devices", "devices", "devices_per_slice"}) + ", hosts " +
           num(*t, {"total_hosts", "hosts", "hosts_per_slice"}) + "\n";
  }

  if (const Json* m = find_path(plan, "mesh"); m != nullptr && m->is_object() && !m->empty()) {
    out += "\nMesh:\n";
    for (const char* key : {"axes", "ici", "dcn"}) {
      if (const Json* v = find_path(*m, key); v != nullptr && !v->is_null()) {
        out += "  " + std::string(key) + ": " +
               (v->is_array() ? "[" + format_value(*v) + "]" : format_value(*v)) + "\n";
      }
    }
    if (const Json* p = find_path(*m, "parallelism");
        p != nullptr && p->is_object() && !p->empty()) {
      std::string flat;
      flatten(*p, "", flat);
      out += "  parallelism: " + flat + "\n";
    }
  }

  if (const Json* m = find_path(plan, "memory"); m != nullptr && m->is_object() && !m->empty()) {
    out += "\nMemory per device:\n";
    std::string line =
        "  " + num(*m, {"per_device_gib"}) + " GiB of " + num(*m, {"capacity_gib"}) + " GiB";
    if (const Json* fits = find_path(*m, "fits"); fits != nullptr && fits->is_boolean()) {
      line += fits->get<bool>() ? " (fits)" : " (DOES NOT FIT)";
    }
    if (const Json* basis = find_path(*m, "basis"); basis != nullptr && basis->is_string()) {
      line += ", from " + basis->get<std::string>();
    }
    out += line + "\n";
    if (const Json* b = find_path(*m, "breakdown"); b != nullptr && b->is_object() && !b->empty()) {
      std::string parts;
      for (const auto& [k, v] : b->items()) {
        if (v.is_number() && v.get<double>() == 0)
          continue;  // parts that do not apply (moe_routing, ...)
        if (!parts.empty()) parts += ", ";
        parts += k + " " + format_value(v);
      }
      out += "  breakdown (GiB): " + parts + "\n";
    }
  }

  if (const Json* d = find_path(plan, "data"); d != nullptr && d->is_object() && !d->empty()) {
    out += "\nData:\n";
    const Json* per_step = find_path(*d, "tokens_per_step");
    const Json* available = find_path(*d, "tokens_available");
    const auto count = [](const Json* v) {
      return v != nullptr && v->is_number() ? format_count(v->get<double>()) : format_value(v);
    };
    out += "  tokens per step " + count(per_step);
    if (const Json* needed = find_path(*d, "tokens_needed");
        needed != nullptr && !needed->is_null()) {
      out += ", needed " + count(needed);
    }
    out += ", available " + count(available) + "\n";
    const Json* exhausted = find_path(*d, "exhausted_at_step");
    if (exhausted != nullptr && !exhausted->is_null()) {
      out += "  data runs out at step " + format_value(*exhausted) + "\n";
    } else if (available != nullptr && !available->is_null()) {
      out += "  data lasts for the whole run\n";
    }
  }

  if (const Json* e = find_path(plan, "estimate"); e != nullptr && e->is_object() && !e->empty()) {
    out += "\nEstimate:\n";
    out += "  step time " + num(*e, {"step_seconds"}) + " s, " +
           num(*e, {"tflops_per_device_per_step"}) + " TFLOP per device per step\n";
    const Json* tps = find_path(*e, "tokens_per_second_per_device");
    out += "  tokens/s per device " +
           (tps != nullptr && tps->is_number() ? format_number(tps->get<double>())
                                               : format_value(tps)) +
           ", MFU " + percent_cell(find_path(*e, "mfu"));
    if (const Json* basis = find_path(*e, "efficiency_basis");
        basis != nullptr && basis->is_string()) {
      out += " (assumed efficiency " + percent_cell(find_path(*e, "efficiency")) + ", from " +
             basis->get<std::string>() + ")";
    }
    out += "\n";
  }

  if (array_size(plan, "alternatives") > 0) {
    out += "\nAlternatives:\n";
    for (const auto& a : plan["alternatives"]) {
      const Json* description = a.is_object() ? find_path(a, "description") : nullptr;
      if (description != nullptr && description->is_string()) {
        const Json* kind = find_path(a, "kind");
        out += "  - " +
               (kind != nullptr && kind->is_string() ? "[" + kind->get<std::string>() + "] "
                                                     : std::string()) +
               description->get<std::string>() + "\n";
      } else if (a.is_object()) {
        std::string flat;
        flatten(a, "", flat);
        out += "  - " + flat + "\n";
      } else {
        out += "  - " + format_value(a) + "\n";
      }
    }
  }
  return out;
}

std::string render_metrics(const Json& metrics, const std::vector<std::string>& fields) {
  const Json* steps = find_path(metrics, "steps");
  const Json* series = find_path(metrics, "series");
  std::vector<std::string> names;
  for (const auto& f : fields) {
    if (series != nullptr && series->is_object() && series->contains(f)) names.push_back(f);
  }
  if (series != nullptr && series->is_object()) {
    for (const auto& [k, v] : series->items()) {
      if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
    }
  }
  Json rows = Json::array();
  const size_t n = steps != nullptr && steps->is_array() ? steps->size() : 0;
  for (size_t i = 0; i < n; ++i) {
    Json row = Json::object();
    row["step"] = (*steps)[i];
    for (const auto& name : names) {
      const Json& s = (*series)[name];
      row[name] = s.is_array() && i < s.size() ? s[i] : Json(nullptr);
    }
    rows.push_back(std::move(row));
  }
  std::vector<Column> columns{field_column("STEP", "step", true)};
  for (const auto& name : names) {
    std::string header;
    for (char c : name)
      header.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    columns.push_back(
        Column{header, [name](const Json& row) { return format_value(row[name]); }, true});
  }
  return render_table(columns, rows);
}

namespace {

// The ratio of a row's field to the baseline, wherever the server put it.
const Json* ratio_of(const Json& row, const std::string& field) {
  for (const std::string& path : {"ratios." + field, "ratio." + field, "vs_baseline." + field,
                                  "relative." + field, field + "_ratio"}) {
    const Json* v = find_path(row, path);
    if (v != nullptr && v->is_number()) return v;
  }
  return nullptr;
}

Column compare_column(std::string header, std::string field, bool percent,
                      RatioReading reading = RatioReading::plain) {
  return Column{std::move(header),
                [field, percent, reading](const Json& row) {
                  const Json* v = find_path(row, field);
                  std::string text = percent ? percent_cell(v) : format_value(v);
                  if (const Json* r = ratio_of(row, field);
                      r != nullptr && v != nullptr && !v->is_null()) {
                    text += " (" + format_ratio(r->get<double>(), reading) + ")";
                  }
                  return text;
                },
                true};
}

std::string row_id(const Json& row) {
  const Json* id = find_any(row, {"run_id", "id", "run.id", "run"});
  return id != nullptr && id->is_string() ? id->get<std::string>() : std::string();
}

}  // namespace

std::string plan_check_text(const Json& check) {
  if (!check.is_object()) return "";
  const Json* measured = find_path(check, "tflops_per_device");
  const Json* expected = find_path(check, "expected_tflops_per_device");
  const Json* ratio = find_path(check, "ratio");
  if (measured == nullptr || expected == nullptr || ratio == nullptr || !ratio->is_number())
    return "";
  const Json* verdict = find_path(check, "verdict");
  const std::string word = verdict != nullptr && verdict->is_string()
                               ? verdict->get<std::string>()
                               : std::string("underperforming");
  return (word == "as_planned" ? std::string("as planned") : word) + ": " +
         format_value(*measured) + " TFLOP/s/device measured, " + format_value(*expected) +
         " expected by the plan (" + format_ratio(ratio->get<double>(), RatioReading::plain) + ")";
}

std::string plan_check_cell(const Json* check) {
  if (check == nullptr || !check->is_object()) return "-";
  const Json* ratio = find_path(*check, "ratio");
  if (ratio == nullptr || !ratio->is_number()) return "-";
  const Json* verdict = find_path(*check, "verdict");
  std::string text = format_ratio(ratio->get<double>(), RatioReading::plain);
  if (verdict != nullptr && *verdict == "underperforming") text += " UNDERPERFORMING";
  return text;
}

std::string render_compare(const Json& compare) {
  const Json* rows = find_path(compare, "rows");
  const Json* baseline = find_path(compare, "baseline");
  const std::string base =
      baseline != nullptr && baseline->is_string() ? baseline->get<std::string>() : "";
  std::vector<Column> columns{
      {"RUN",
       [base](const Json& row) {
         const Json* name = find_any(row, {"name", "run_name", "run.name"});
         std::string text = name != nullptr ? format_value(*name) : row_id(row);
         if (text.empty()) text = "-";
         if (!base.empty() && row_id(row) == base) text += " *";
         return text;
       }},
      any_column("ACCELERATOR", {"accelerator"}),
      any_column("TOPOLOGY", {"topology"}),
      any_column("CHIPS", {"chips"}, true),
      any_column("BATCH", {"per_device_batch_size"}, true),
      any_column("SEQ", {"max_target_length"}, true),
      compare_column("STEP S", "step_seconds", false, RatioReading::speed),
      compare_column("TFLOP/S/DEV", "tflops_per_device", false),
      compare_column("TOK/S/DEV", "tokens_per_second_per_device", false),
      compare_column("MFU", "mfu", true),
      compare_column("HBM GIB", "hbm_gib_used", false),
      compare_column("GOODPUT", "goodput", true),
      compare_column("$/B TOK", "cost_per_billion_tokens", false),
      {"VS PLAN", [](const Json& row) { return plan_check_cell(find_path(row, "plan_check")); },
       true},
  };
  std::string out = render_table(columns, rows != nullptr ? *rows : Json::array());
  if (!base.empty())
    out += "* baseline; (N×) is the ratio to the baseline, a step time's as a speed (N× faster)\n";
  // Each underperforming run with both figures, below the table.
  if (rows != nullptr && rows->is_array())
    for (const Json& row : *rows) {
      const Json* check = find_path(row, "plan_check");
      const Json* verdict = check != nullptr ? find_path(*check, "verdict") : nullptr;
      if (verdict == nullptr || *verdict != "underperforming") continue;
      const Json* name = find_any(row, {"name", "run_id"});
      out += (name != nullptr ? format_value(*name) : row_id(row)) + " is " +
             plan_check_text(*check) + "\n";
    }
  return out;
}

}  // namespace podium::cli
