// podium clusters ..., podium datasets ..., podium models ...

#include <string>
#include <vector>

#include "engine/cli/commands.h"
#include "engine/cli/exit_codes.h"
#include "engine/cli/output.h"
#include "engine/cli/views.h"

namespace podium::cli {
namespace {

const OptionSpec& kLimit = kLimitOption;
const OptionSpec& kAll = kAllOption;

// --name value for required options; prints the usage error when missing.
std::optional<std::string> required(Context& ctx, const std::string& name, int& exit) {
  auto v = ctx.args.value(name);
  if (!v || v->empty()) {
    exit = usage_error(ctx, "missing --" + name);
    return std::nullopt;
  }
  return v;
}

// ----- clusters -----

int clusters_list(Context& ctx) {
  return print_list(ctx, "/api/v1/clusters", cluster_columns(), "clusters");
}

int clusters_get(Context& ctx) {
  const Call c = call(ctx, "GET", "/api/v1/clusters/" + segment(ctx.args.positionals[0]));
  if (!c.ok()) return c.exit;
  return print_object(ctx, c);
}

// --executor JSON, or a bare kind (--executor slurm is {"kind":"slurm"}), into body["executor"].
// False (exit set) when it is neither.
bool read_executor_option(Context& ctx, Json& body, int& exit) {
  const auto v = ctx.args.value("executor");
  if (!v) return true;
  Json e = Json::parse(*v, nullptr, false);
  if (e.is_discarded()) e = Json{{"kind", *v}};
  if (!e.is_object()) {
    exit = usage_error(ctx,
                       "--executor must be a JSON object such as "
                       "'{\"kind\":\"slurm\",\"partition\":\"a3mega\"}' or a kind");
    return false;
  }
  body["executor"] = std::move(e);
  return true;
}

int clusters_create(Context& ctx) {
  int exit = kExitOk;
  const auto name = required(ctx, "name", exit);
  if (!name) return exit;
  const auto accelerator = required(ctx, "accelerator", exit);
  if (!accelerator) return exit;
  const auto slices = int_option(ctx, "num-slices", 1, exit);
  if (exit != kExitOk) return exit;

  Json body = Json::object();
  body["name"] = *name;
  body["accelerator"] = *accelerator;
  if (slices) body["num_slices"] = *slices;
  if (auto v = ctx.args.value("capacity")) body["capacity"] = *v;
  if (auto v = ctx.args.value("zone")) body["zone"] = *v;
  for (const char* gcp : {"project", "reservation", "network"})
    if (auto v = ctx.args.value(gcp)) body[gcp] = *v;
  if (auto v = ctx.args.value("price-per-chip-hour")) {
    const auto price = parse_double(*v);
    if (!price || *price < 0)
      return usage_error(ctx, "--price-per-chip-hour must be a number >= 0, not '" + *v + "'");
    body["price_per_chip_hour"] = *price;
  }
  if (!read_executor_option(ctx, body, exit)) return exit;
  const auto labels = ctx.args.values("label");
  if (!labels.empty()) {
    Json l = Json::object();
    for (const auto& kv : labels) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        return usage_error(ctx, "--label must be KEY=VALUE, not '" + kv + "'");
      l[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    body["labels"] = std::move(l);
  }

  const Call c = call(ctx, "POST", "/api/v1/clusters", body.dump());
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  ctx.out << "created cluster " << *name << "\n";
  return print_object(ctx, c);
}

int clusters_delete(Context& ctx) {
  const std::string& name = ctx.args.positionals[0];
  const Call c = call(ctx, "DELETE", "/api/v1/clusters/" + segment(name));
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
  } else {
    ctx.out << "deleted cluster " << name << "\n";
  }
  return kExitOk;
}

int clusters_worker_token(Context& ctx) {
  const std::string& name = ctx.args.positionals[0];
  const Call c = call(ctx, "POST", "/api/v1/clusters/" + segment(name) + "/worker-tokens", "{}");
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  const Json* token = find_path(c.json, "token");
  if (token == nullptr || !token->is_string())
    return report_unreadable(ctx, "no token in the answer");
  // Only the token goes to stdout so that TOKEN=$(podium clusters worker-token NAME) works.
  ctx.out << token->get<std::string>() << "\n";
  ctx.err << "worker token " << format_value(find_path(c.json, "id")) << " for cluster " << name
          << ": it is shown only this once; pass it to podium-worker --token\n";
  return kExitOk;
}

int clusters_workers(Context& ctx) {
  return print_list(ctx, "/api/v1/clusters/" + segment(ctx.args.positionals[0]) + "/workers",
                    worker_columns(), "workers");
}

int clusters_update(Context& ctx) {
  int exit = kExitOk;
  const auto slices = int_option(ctx, "num-slices", 1, exit);
  if (exit != kExitOk) return exit;
  Json body = Json::object();
  if (slices) body["num_slices"] = *slices;
  for (const char* field : {"capacity", "zone", "project", "reservation", "network"})
    if (auto v = ctx.args.value(field)) body[field] = *v;
  if (!read_executor_option(ctx, body, exit)) return exit;
  if (body.empty())
    return usage_error(ctx,
                       "nothing to change: give --project, --reservation, --network, --zone, "
                       "--capacity, --num-slices or --executor");
  const Call c =
      call(ctx, "PATCH", "/api/v1/clusters/" + segment(ctx.args.positionals[0]), body.dump());
  if (!c.ok()) return c.exit;
  return print_object(ctx, c);
}

int clusters_provisioning(Context& ctx) {
  const Call c =
      call(ctx, "GET", "/api/v1/clusters/" + segment(ctx.args.positionals[0]) + "/provisioning");
  if (!c.ok()) return c.exit;
  if (ctx.json || c.json.is_null()) {
    print_raw(ctx, c);  // a text/plain script is printed as it came
    return kExitOk;
  }
  // Commands are meant to be copied into a shell: print them bare, with their descriptions as
  // shell comments, rather than as an indented JSON view.
  const auto method = ctx.args.value("method");
  if (const Json* options = find_path(c.json, "options");
      options != nullptr && options->is_array()) {
    // {"options":[{"method","description","commands":[...],"notes":[...]}]}: one block per way
    // of creating the cluster (xpk, GKE node pool, TPU VMs).
    bool first = true;
    bool matched = false;
    for (const auto& o : *options) {
      const std::string name = format_value(find_path(o, "method"));
      if (method && name != *method) continue;
      matched = true;
      if (!first) ctx.out << "\n";
      first = false;
      ctx.out << "# " << name;
      if (const Json* d = find_path(o, "description"); d != nullptr && d->is_string()) {
        ctx.out << ": " << d->get<std::string>();
      }
      ctx.out << "\n";
      if (const Json* cmds = find_path(o, "commands"); cmds != nullptr && cmds->is_array()) {
        for (const auto& cmd : *cmds) ctx.out << format_value(cmd) << "\n";
      }
      if (const Json* notes = find_path(o, "notes"); notes != nullptr && notes->is_array()) {
        for (const auto& note : *notes) ctx.out << "# note: " << format_value(note) << "\n";
      }
      if (const Json* missing = find_path(o, "missing");
          missing != nullptr && missing->is_array()) {
        for (const auto& m : *missing) ctx.out << "# missing: " << format_value(m) << "\n";
      }
      if (const Json* down = find_path(o, "teardown");
          down != nullptr && down->is_array() && !down->empty()) {
        ctx.out << "# teardown (" << name << "): delete what the commands above created\n";
        for (const auto& cmd : *down) ctx.out << "# " << format_value(cmd) << "\n";
      }
    }
    if (method && !matched) {
      std::string names;
      for (const auto& o : *options)
        names += (names.empty() ? "" : ", ") + format_value(find_path(o, "method"));
      return usage_error(
          ctx, "no provisioning method '" + *method + "' for this cluster (" + names + ")");
    }
    return kExitOk;
  }
  const Json* commands = find_any(c.json, {"commands", "steps"});
  if (commands == nullptr && c.json.is_array()) commands = &c.json;
  if (commands != nullptr && commands->is_array()) {
    for (const auto& cmd : *commands) {
      if (cmd.is_string()) {
        ctx.out << cmd.get<std::string>() << "\n";
      } else if (cmd.is_object()) {
        if (const Json* d = find_any(cmd, {"description", "title", "comment"});
            d != nullptr && d->is_string()) {
          ctx.out << "# " << d->get<std::string>() << "\n";
        }
        const Json* line = find_any(cmd, {"command", "cmd", "shell"});
        ctx.out << (line != nullptr ? format_value(*line) : cmd.dump()) << "\n";
      }
    }
    return kExitOk;
  }
  if (const Json* script = find_any(c.json, {"script", "shell"});
      script != nullptr && script->is_string()) {
    ctx.out << script->get<std::string>();
    if (!script->get<std::string>().empty() && script->get<std::string>().back() != '\n')
      ctx.out << "\n";
    return kExitOk;
  }
  return print_object(ctx, c);
}

int whoami(Context& ctx) {
  const Call c = call(ctx, "GET", "/api/v1/auth/me");
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  if (!c.json.is_object()) return report_unreadable(ctx, "expected the caller's identity");
  if (format_value(find_path(c.json, "kind")) == "worker") {
    ctx.out << "worker token " << format_value(find_path(c.json, "token_id")) << " of cluster "
            << format_value(find_path(c.json, "cluster_id")) << "\n";
  } else {
    ctx.out << format_value(find_path(c.json, "username")) << " ("
            << format_value(find_path(c.json, "role")) << ") at " << ctx.config.server << "\n";
  }
  return kExitOk;
}

// ----- datasets -----

int datasets_list(Context& ctx) {
  return print_list(ctx, "/api/v1/datasets", dataset_columns(), "datasets");
}

int datasets_get(Context& ctx) {
  const Call c = call(ctx, "GET", "/api/v1/datasets/" + segment(ctx.args.positionals[0]));
  if (!c.ok()) return c.exit;
  return print_object(ctx, c);
}

int datasets_create(Context& ctx) {
  int exit = kExitOk;
  const auto name = required(ctx, "name", exit);
  if (!name) return exit;
  const auto uri = required(ctx, "uri", exit);
  if (!uri) return exit;
  Json body = Json::object();
  body["name"] = *name;
  body["uri"] = *uri;
  if (auto v = ctx.args.value("format")) body["format"] = *v;
  for (const auto& [flag, field] : {std::pair<const char*, const char*>{"records", "records"},
                                    {"bytes", "bytes"},
                                    {"tokens", "tokens"}}) {
    const auto v = int_option(ctx, flag, 0, exit);
    if (exit != kExitOk) return exit;
    if (v) body[field] = *v;
  }
  if (auto v = ctx.args.value("tokens-per-record")) {
    const auto tpr = parse_double(*v);
    if (!tpr || *tpr <= 0)
      return usage_error(ctx, "--tokens-per-record must be a number > 0, not '" + *v + "'");
    // Keep an integral value an integer in the JSON, as a YAML spec would.
    if (const auto i = parse_int(*v)) {
      body["tokens_per_record"] = *i;
    } else {
      body["tokens_per_record"] = *tpr;
    }
  }
  const Call c = call(ctx, "POST", "/api/v1/datasets", body.dump());
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  ctx.out << "created dataset " << *name << "\n";
  return print_object(ctx, c);
}

int datasets_delete(Context& ctx) {
  const std::string& name = ctx.args.positionals[0];
  const Call c = call(ctx, "DELETE", "/api/v1/datasets/" + segment(name));
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
  } else {
    ctx.out << "deleted dataset " << name << "\n";
  }
  return kExitOk;
}

// ----- models -----

int models_list(Context& ctx) {
  return print_list(ctx, "/api/v1/models", model_columns(), "models");
}

int models_get(Context& ctx) {
  const Call c = call(ctx, "GET", "/api/v1/models/" + segment(ctx.args.positionals[0]));
  if (!c.ok()) return c.exit;
  return print_object(ctx, c);
}

// The model's name when --name is not given: the file's name without directory and extension
// (configs/almodel-8b.yml -> almodel-8b).
std::string model_name_from_file(const std::string& file) {
  std::string base =
      file.substr(file.find_last_of('/') == std::string::npos ? 0 : file.find_last_of('/') + 1);
  for (const char* ext : {".yaml", ".yml", ".json"}) {
    const std::string e = ext;
    if (base.size() > e.size() && base.compare(base.size() - e.size(), e.size(), e) == 0)
      return base.substr(0, base.size() - e.size());
  }
  return base;
}

// podium models add -f FILE: a MaxText model config (.yml/.yaml, sent as text so the server
// keeps it as written) or a JSON object of the same keys (.json).
int models_add(Context& ctx) {
  int exit = kExitOk;
  const auto file = required(ctx, "file", exit);
  if (!file) return exit;
  std::string name;
  if (auto v = ctx.args.value("name")) {
    name = *v;
  } else if (*file == "-") {
    return usage_error(ctx, "--name is required when the config comes from stdin");
  } else {
    name = model_name_from_file(*file);
  }
  const auto text = read_input(ctx, *file, exit);
  if (!text) return exit;
  Json body = {{"name", name}};
  if (auto v = ctx.args.value("description")) body["description"] = *v;
  const bool json_file = file->size() > 5 && file->compare(file->size() - 5, 5, ".json") == 0;
  if (json_file) {
    Json config = Json::parse(*text, nullptr, false);
    if (config.is_discarded() || !config.is_object())
      return usage_error(ctx, *file + ": not a JSON object of MaxText model keys");
    body["config"] = std::move(config);
  } else {
    body["yaml"] = *text;
  }
  const Call c = call(ctx, "POST", "/api/v1/models", body.dump());
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
    return kExitOk;
  }
  const Json* total = find_path(c.json, "parameters.total");
  const Json* active = find_path(c.json, "parameters.active_per_token");
  ctx.out << "added model " << name;
  if (total && total->is_number())
    ctx.out << ": " << format_count(total->get<double>()) << " parameters";
  if (active && active->is_number())
    ctx.out << ", " << format_count(active->get<double>()) << " active per token";
  ctx.out << "\n";
  return kExitOk;
}

int models_delete(Context& ctx) {
  const std::string& name = ctx.args.positionals[0];
  const Call c = call(ctx, "DELETE", "/api/v1/models/" + segment(name));
  if (!c.ok()) return c.exit;
  if (ctx.json) {
    print_raw(ctx, c);
  } else {
    ctx.out << "deleted model " << name << "\n";
  }
  return kExitOk;
}

// ----- accelerators -----

int accelerators_list(Context& ctx) {
  std::string path = "/api/v1/accelerators";
  if (auto family = ctx.args.value("family")) path = with_query(path, "family", *family);
  return print_list(ctx, path, accelerator_columns(), "accelerators");
}

}  // namespace

void add_resource_commands(std::vector<Command>& out) {
  out.push_back(
      make_command("clusters", "list", "", "list clusters", {kLimit, kAll}, 0, 0, clusters_list));
  out.push_back(make_command("clusters", "get", "NAME", "show a cluster (by name or id)", {}, 1, 1,
                             clusters_get));
  out.push_back(with_required(
      make_command(
          "clusters", "create", "", "create a cluster",
          {{"name", 0, true, false, "NAME", "cluster name (required)"},
           {"accelerator", 0, true, false, "TYPE", "tpu7x-64, tpu7x-2x4x4, cpu-2, ... (required)"},
           {"num-slices", 0, true, false, "K", "number of slices (default 1)"},
           {"capacity", 0, true, false, "KIND", "spot, on-demand or reservation"},
           {"zone", 0, true, false, "ZONE", "cloud zone, e.g. us-central1-c"},
           {"project", 0, true, false, "ID", "GCP project (for the provisioning commands)"},
           {"reservation", 0, true, false, "NAME", "reservation the capacity comes from"},
           {"network", 0, true, false, "NAME", "VPC network of bare TPU VMs"},
           {"price-per-chip-hour", 0, true, false, "USD", "price used for cost figures"},
           {"label", 0, true, true, "KEY=VALUE", "a label"},
           {"executor", 0, true, false, "JSON",
            "agent (default), slurm or kubernetes, with settings (docs/executors.md)"}},
          0, 0, clusters_create,
          "Example:\n  podium clusters create --name v7-train --accelerator tpu7x-64 --capacity "
          "spot\n  podium clusters create --name a3 --accelerator h100-16 --executor "
          "'{\"kind\":\"slurm\",\"partition\":\"a3mega\"}'"),
      "--name NAME --accelerator TYPE"));
  out.push_back(make_command(
      "clusters", "update", "NAME", "change a cluster's capacity, place or GCP fields (admin)",
      {{"num-slices", 0, true, false, "K", "number of slices"},
       {"capacity", 0, true, false, "KIND", "spot, on-demand, reservation or flex"},
       {"zone", 0, true, false, "ZONE", "cloud zone"},
       {"project", 0, true, false, "ID", "GCP project (\"\" clears it)"},
       {"reservation", 0, true, false, "NAME", "reservation (\"\" clears it)"},
       {"network", 0, true, false, "NAME", "VPC network (\"\" clears it)"},
       {"executor", 0, true, false, "JSON",
        "agent, slurm or kubernetes with settings; agent clusters may name the image of "
        "their containers: '{\"kind\":\"agent\",\"image\":\"IMAGE\"}'"}},
      1, 1, clusters_update));
  out.push_back(
      make_command("clusters", "delete", "NAME", "delete a cluster", {}, 1, 1, clusters_delete));
  out.push_back(
      make_command("clusters", "worker-token", "NAME",
                   "create a worker token for a cluster (admin)", {}, 1, 1, clusters_worker_token,
                   "Prints only the token on stdout (it is shown once), for\n"
                   "  podium-worker --token \"$(podium clusters worker-token NAME)\" ..."));
  out.push_back(make_command("clusters", "workers", "NAME",
                             "list the workers registered for a cluster", {kLimit, kAll}, 1, 1,
                             clusters_workers));
  out.push_back(make_command(
      "clusters", "provisioning", "NAME", "print the commands that create the cluster for real",
      {{"method", 0, true, false, "METHOD", "only this method (xpk, gke-node-pool, tpu-vm)"}}, 1, 1,
      clusters_provisioning,
      "The commands are printed, never run: review them and run them yourself. A field the\n"
      "cluster lacks stands as a shell variable ($PROJECT) and is listed as missing; set it\n"
      "with podium clusters update NAME --project ID. Teardown commands follow as comments."));

  out.push_back(
      make_command("datasets", "list", "", "list datasets", {kLimit, kAll}, 0, 0, datasets_list));
  out.push_back(make_command("datasets", "get", "NAME", "show a dataset (by name or id)", {}, 1, 1,
                             datasets_get));
  out.push_back(with_required(
      make_command(
          "datasets", "create", "", "register a dataset",
          {{"name", 0, true, false, "NAME", "dataset name (required)"},
           {"uri", 0, true, false, "URI", "gs://..., file://... or a server-local path (required)"},
           {"format", 0, true, false, "FORMAT", "jsonl, text, arrayrecord, tfrecord or synthetic"},
           {"records", 0, true, false, "N", "number of records"},
           {"bytes", 0, true, false, "N", "size in bytes"},
           {"tokens", 0, true, false, "N", "number of tokens"},
           {"tokens-per-record", 0, true, false, "N", "average tokens per record"}},
          0, 0, datasets_create,
          "For a file:// URI or a plain path the server counts records and bytes itself."),
      "--name NAME --uri URI"));
  out.push_back(
      make_command("datasets", "delete", "NAME", "delete a dataset", {}, 1, 1, datasets_delete));

  out.push_back(make_command("whoami", "", "", "show who the token belongs to and its role", {}, 0,
                             0, whoami));

  out.push_back(make_command("models", "list", "", "list the model catalog", {kLimit, kAll}, 0, 0,
                             models_list));
  out.push_back(make_command(
      "accelerators", "list", "", "list the slice types of the accelerator catalog",
      {{"family", 0, true, false, "FAMILY", "only this family: tpu7x, v5p, v5e (v5litepod), ..."},
       kLimit,
       kAll},
      0, 0, accelerators_list));
  out.push_back(make_command("models", "get", "NAME",
                             "show a model's architecture and parameter counts", {}, 1, 1,
                             models_get));
  out.push_back(make_command("models", "show", "NAME",
                             "show a model's architecture, parameter counts and config", {}, 1, 1,
                             models_get));
  out.push_back(with_required(
      make_command(
          "models", "add", "", "add a model from its MaxText model config",
          {{"file", 'f', true, false, "FILE",
            "the MaxText model config: YAML (.yml/.yaml, - for stdin) or a JSON object (.json)"},
           {"name", 0, true, false, "NAME", "the model's name (default: the file name)"},
           {"description", 0, true, false, "TEXT", "one line for the catalog"}},
          0, 0, models_add,
          "The file uses MaxText's own keys (base_emb_dim, base_num_query_heads, num_experts,\n"
          "q_lora_rank, ...), as in MaxText's configs/models/*.yml. Example:\n"
          "  podium models add -f examples/configs/almodel-8b.yml --name almodel-8b-team\n"
          "A run of the model names it (model: NAME) and gives the same file as config_file."),
      "-f FILE"));
  out.push_back(make_command("models", "delete", "NAME",
                             "delete a model you added (built-in models cannot be deleted)", {}, 1,
                             1, models_delete));
}

}  // namespace podium::cli
