#include "engine/core/logs/failure_classifier.h"

#include <algorithm>
#include <array>
#include <utility>

namespace podium::core {
namespace {

constexpr int kSigterm = 15;
// Shells and container runtimes report "killed by SIGTERM" as exit status 128 + 15.
constexpr int kSigtermExitCode = 128 + kSigterm;

constexpr std::array<std::pair<FailureClass, std::string_view>, 10> kClassNames = {{
    {FailureClass::oom, "oom"},
    {FailureClass::mesh, "mesh"},
    {FailureClass::config, "config"},
    {FailureClass::data_exhausted, "data_exhausted"},
    {FailureClass::nan, "nan"},
    {FailureClass::preempted, "preempted"},
    {FailureClass::host_lost, "host_lost"},
    {FailureClass::error, "error"},
    {FailureClass::code_error, "code_error"},
    {FailureClass::stalled, "stalled"},
}};

// Deterministic classes in precedence order (see the header for why).
constexpr std::array<FailureClass, 5> kDeterministicOrder = {
    FailureClass::config, FailureClass::mesh, FailureClass::oom, FailureClass::nan,
    FailureClass::data_exhausted};

std::string describe_rank_end(const RankOutcome& r) {
  if (r.signal)
    return "rank " + std::to_string(r.rank) + " killed by signal " + std::to_string(*r.signal);
  if (r.exit_code)
    return "rank " + std::to_string(r.rank) + " exited with code " + std::to_string(*r.exit_code);
  return "rank " + std::to_string(r.rank) + " ended without a status";
}

bool ended_badly(const RankOutcome& r) {
  if (r.signal) return true;
  return r.exit_code && *r.exit_code != 0;
}

bool is_sigterm(const RankOutcome& r) {
  return (r.signal && *r.signal == kSigterm) || (r.exit_code && *r.exit_code == kSigtermExitCode);
}

std::string_view signature_reason(FailureSignature s) {
  switch (s) {
    case FailureSignature::hbm_oom:
      return "HBM out of memory";
    case FailureSignature::mesh_unmappable:
      return "the logical mesh does not map onto the physical torus";
    case FailureSignature::mesh_product_mismatch:
      return "the parallelism product does not match the device count";
    case FailureSignature::invalid_config_key:
      return "a config key is not a valid MaxText field";
    case FailureSignature::invalid_config_value:
      return "a config value could not be parsed";
    case FailureSignature::data_exhausted:
      return "the dataset ran out (StopIteration)";
    case FailureSignature::nan_loss:
      return "training aborted on a NaN loss";
    case FailureSignature::preempted:
      return "the job reported a preemption";
    case FailureSignature::tpu_busy:
      return "the TPU was held by another process";
    case FailureSignature::cpu_fallback:
      return "JAX fell back to CPU";
    case FailureSignature::python_code_error:
      return "a Python exception that says the code or its environment is wrong";
    case FailureSignature::code_bundle_unusable:
      return "a rank could not get the run's code bundle";
  }
  return "unknown signature";
}

}  // namespace

std::string_view to_string(FailureClass c) {
  for (const auto& [cls, name] : kClassNames) {
    if (cls == c) return name;
  }
  return "error";
}

std::optional<FailureClass> parse_failure_class(std::string_view name) {
  for (const auto& [cls, cls_name] : kClassNames) {
    if (cls_name == name) return cls;
  }
  return std::nullopt;
}

bool is_deterministic(FailureClass c) {
  return c == FailureClass::code_error ||
         std::find(kDeterministicOrder.begin(), kDeterministicOrder.end(), c) !=
             kDeterministicOrder.end();
}

std::optional<FailureClass> failure_class_of(FailureSignature signature) {
  switch (signature) {
    case FailureSignature::hbm_oom:
      return FailureClass::oom;
    case FailureSignature::mesh_unmappable:
    case FailureSignature::mesh_product_mismatch:
      return FailureClass::mesh;
    case FailureSignature::invalid_config_key:
    case FailureSignature::invalid_config_value:
      return FailureClass::config;
    case FailureSignature::data_exhausted:
      return FailureClass::data_exhausted;
    case FailureSignature::nan_loss:
      return FailureClass::nan;
    case FailureSignature::preempted:
      return FailureClass::preempted;
    case FailureSignature::python_code_error:
      // Only before the attempt's first step (classify_failure, rule 4b).
      return FailureClass::code_error;
    case FailureSignature::code_bundle_unusable:
      return FailureClass::code_error;
    case FailureSignature::tpu_busy:
    case FailureSignature::cpu_fallback:
      return std::nullopt;
  }
  return std::nullopt;
}

std::string_view to_string(AttemptOutcome o) {
  switch (o) {
    case AttemptOutcome::succeeded:
      return "succeeded";
    case AttemptOutcome::failed:
      return "failed";
    case AttemptOutcome::cancelled:
      return "cancelled";
  }
  return "failed";
}

FailureClassification classify_failure(const AttemptEvidence& evidence) {
  FailureClassification out;
  for (FailureSignature s : evidence.signatures) {
    if (is_warning_signature(s) &&
        std::find(out.warnings.begin(), out.warnings.end(), s) == out.warnings.end()) {
      out.warnings.push_back(s);
    }
  }
  // Ranks that ended on their own (not stopped by Podium, not vanished) carry the real exit codes.
  for (const RankOutcome& r : evidence.ranks) {
    if (!r.stopped_by_podium && !r.vanished && r.exit_code && *r.exit_code != 0) {
      out.exit_codes.push_back(*r.exit_code);
    }
  }
  auto fail = [&](FailureClass c, std::string reason) {
    out.outcome = AttemptOutcome::failed;
    out.failure_class = c;
    out.reason = std::move(reason);
    return out;
  };

  // 1. User cancel.
  if (evidence.user_cancelled) {
    out.outcome = AttemptOutcome::cancelled;
    out.reason = "cancelled by a user";
    return out;
  }

  // 2. Deterministic signatures.
  for (FailureClass wanted : kDeterministicOrder) {
    for (FailureSignature s : evidence.signatures) {
      if (failure_class_of(s) == wanted) {
        out.deciding_signature = s;
        return fail(wanted, std::string(signature_reason(s)));
      }
    }
  }

  // 2a. A rank could not get the run's code (fetch refused or given up, digest mismatch, archive
  // unusable): it never started, and the run's code is not to be had as named.
  if (auto excerpt = evidence.signature_excerpts.find(FailureSignature::code_bundle_unusable);
      std::find(evidence.signatures.begin(), evidence.signatures.end(),
                FailureSignature::code_bundle_unusable) != evidence.signatures.end()) {
    out.deciding_signature = FailureSignature::code_bundle_unusable;
    for (const RankOutcome& r : evidence.ranks)
      if (!r.stopped_by_podium && ended_badly(r)) {
        out.deciding_rank = r.rank;
        break;
      }
    std::string reason(signature_reason(FailureSignature::code_bundle_unusable));
    if (excerpt != evidence.signature_excerpts.end() && !excerpt->second.empty())
      reason += ": " + excerpt->second;
    return fail(FailureClass::code_error, std::move(reason));
  }

  // 2b. An external engine's verdict on its job (NODE_FAIL, PREEMPTED, a JobSet's evicted pod):
  // the engine saw the cause that the ranks' exits only reflect (a node set down SIGTERMs the
  // ranks on the healthy nodes too).
  if (evidence.engine_class) return fail(*evidence.engine_class, evidence.engine_reason);

  // 2c. A host's preemption or termination notice.
  if (!evidence.preemption_notice.empty())
    return fail(FailureClass::preempted,
                "a host reported a notice from its platform: " + evidence.preemption_notice);

  // 3. A vanished rank.
  for (const RankOutcome& r : evidence.ranks) {
    if (r.vanished && !r.stopped_by_podium) {
      out.deciding_rank = r.rank;
      return fail(FailureClass::host_lost,
                  "rank " + std::to_string(r.rank) + " stopped reporting (host or worker lost)");
    }
  }

  // 4. Preemption.
  for (FailureSignature s : evidence.signatures) {
    if (s == FailureSignature::preempted) {
      out.deciding_signature = s;
      return fail(FailureClass::preempted, std::string(signature_reason(s)));
    }
  }
  for (const RankOutcome& r : evidence.ranks) {
    if (!r.stopped_by_podium && is_sigterm(r)) {
      out.deciding_rank = r.rank;
      return fail(FailureClass::preempted,
                  "rank " + std::to_string(r.rank) + " received SIGTERM from outside Podium");
    }
  }

  // 4b. A code or environment error before the first step.
  const bool code_error_seen =
      std::find(evidence.signatures.begin(), evidence.signatures.end(),
                FailureSignature::python_code_error) != evidence.signatures.end();
  if (code_error_seen && !evidence.completed_a_step) {
    for (const RankOutcome& r : evidence.ranks) {
      if (r.stopped_by_podium || !ended_badly(r)) continue;
      out.deciding_rank = r.rank;
      out.deciding_signature = FailureSignature::python_code_error;
      std::string reason = describe_rank_end(r) + " before the first step";
      auto excerpt = evidence.signature_excerpts.find(FailureSignature::python_code_error);
      if (excerpt != evidence.signature_excerpts.end() && !excerpt->second.empty())
        reason += ": " + excerpt->second;
      return fail(FailureClass::code_error, std::move(reason));
    }
  }

  // 4c. Podium stopped a stalled attempt.
  if (!evidence.stall_cause.empty()) return fail(FailureClass::stalled, evidence.stall_cause);

  // 5. Any other bad end of a rank Podium did not stop.
  for (const RankOutcome& r : evidence.ranks) {
    if (!r.stopped_by_podium && ended_badly(r)) {
      out.deciding_rank = r.rank;
      std::string reason = describe_rank_end(r);
      if (!out.warnings.empty()) {
        reason += " (" + std::string(signature_reason(out.warnings.front())) + ")";
      }
      return fail(FailureClass::error, std::move(reason));
    }
  }

  // 6. Clean exit everywhere.
  const bool all_zero =
      !evidence.ranks.empty() &&
      std::all_of(evidence.ranks.begin(), evidence.ranks.end(), [](const RankOutcome& r) {
        return !r.vanished && !r.signal && r.exit_code && *r.exit_code == 0;
      });
  if (all_zero) {
    out.outcome = AttemptOutcome::succeeded;
    out.reason = "every rank exited 0";
    return out;
  }

  // 7. Torn down by Podium with no recorded cause, or no rank reports at all.
  if (evidence.ranks.empty()) return fail(FailureClass::error, "no rank reported an end");
  return fail(FailureClass::error, "stopped by Podium without a failing rank");
}

nlohmann::json to_json(const FailureClassification& c) {
  nlohmann::json warnings = nlohmann::json::array();
  for (FailureSignature s : c.warnings) warnings.push_back(std::string(to_string(s)));
  return {
      {"outcome", std::string(to_string(c.outcome))},
      {"failure_class",
       c.failure_class ? nlohmann::json(std::string(to_string(*c.failure_class))) : nullptr},
      {"deciding_rank", c.deciding_rank ? nlohmann::json(*c.deciding_rank) : nullptr},
      {"deciding_signature", c.deciding_signature
                                 ? nlohmann::json(std::string(to_string(*c.deciding_signature)))
                                 : nullptr},
      {"exit_codes", c.exit_codes},
      {"warnings", std::move(warnings)},
      {"reason", c.reason},
  };
}

}  // namespace podium::core
