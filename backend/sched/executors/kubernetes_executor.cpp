#include "backend/sched/executors/kubernetes_executor.h"

#include <nlohmann/json.hpp>

#include "engine/core/executors/jobset_manifest.h"
#include "engine/core/executors/jobset_status.h"

namespace podium::sched {

namespace {

using nlohmann::json;

std::string secret_name(const std::string& jobset) {
  return jobset + "-token";
}

core::JobSetRequest jobset_request_of(const EngineJobSpec& spec) {
  core::JobSetRequest r;
  r.name = KubernetesEngine::jobset_name(spec);
  r.run_id = spec.run_id;
  r.attempt_id = spec.attempt_id;
  r.accelerator = spec.accelerator;
  r.num_slices = spec.num_slices;
  r.executor = spec.executor.kubernetes;
  r.image = spec.image;
  r.server_url = spec.server_url;
  r.token_secret = secret_name(r.name);
  r.worker_image = spec.worker_image;
  r.code_bundle = spec.code_bundle;
  if (!spec.worker_path.empty() && spec.worker_image.empty()) r.worker_path = spec.worker_path;
  return r;
}

bool transient_kubectl_error(const CommandResult& r) {
  if (!r.started || r.timed_out) return true;
  for (const char* s : {"Unable to connect to the server", "connection refused", "i/o timeout",
                        "TLS handshake timeout", "ServiceUnavailable",
                        "the server is currently "
                        "unable",
                        "etcdserver: request timed out"})
    if (r.err.find(s) != std::string::npos) return true;
  return false;
}

}  // namespace

KubernetesEngine::KubernetesEngine(std::shared_ptr<CommandRunner> runner,
                                   std::map<std::string, std::string> tool_env)
    : runner_(std::move(runner)), tool_env_(std::move(tool_env)) {}

std::string KubernetesEngine::jobset_name(const EngineJobSpec& spec) {
  std::string id;
  for (char c : spec.run_id) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    id += (std::isalnum(static_cast<unsigned char>(c)) ? c : '-');
  }
  if (id.rfind("run-", 0) == 0) id = id.substr(4);
  const std::string suffix = "-" + std::to_string(spec.attempt_number);
  std::string name = "podium-" + id.substr(0, 40 - 7 - suffix.size()) + suffix;
  return name;
}

std::vector<std::string> KubernetesEngine::kubectl(const EngineJobSpec& spec) const {
  std::vector<std::string> argv = {"kubectl"};
  if (!spec.executor.kubernetes.context.empty())
    argv.push_back("--context=" + spec.executor.kubernetes.context);
  argv.push_back("--namespace=" + spec.executor.kubernetes.namespace_name);
  return argv;
}

std::string KubernetesEngine::manifest(const EngineJobSpec& spec) {
  const auto request = jobset_request_of(spec);
  json secret = core::build_token_secret(
      request.token_secret, spec.executor.kubernetes.namespace_name,
      "<this attempt's token, minted at submission>", spec.run_id, spec.attempt_id);
  return core::to_yaml(secret) + "---\n" + core::to_yaml(core::build_jobset(request));
}

SubmitOutcome KubernetesEngine::submit(const EngineJobSpec& spec, const std::string& attach_token) {
  SubmitOutcome out;
  std::string objects;
  try {
    const auto request = jobset_request_of(spec);
    const json jobset = core::build_jobset(request);
    const json secret =
        core::build_token_secret(request.token_secret, spec.executor.kubernetes.namespace_name,
                                 attach_token, spec.run_id, spec.attempt_id);
    objects = core::to_yaml(secret) + "---\n" + core::to_yaml(jobset);
    out.manifest = manifest(spec);
  } catch (const std::exception& e) {
    out.error = e.what();
    return out;
  }
  CommandSpec cmd;
  cmd.argv = kubectl(spec);
  for (const char* a : {"apply", "--server-side", "--field-manager=podium", "-f", "-"})
    cmd.argv.push_back(a);
  cmd.env = tool_env_;
  cmd.stdin_text = objects;
  cmd.timeout = std::chrono::seconds(60);
  auto r = runner_->run(cmd);
  if (!r.ok()) {
    out.error = r.describe("kubectl apply");
    out.retryable = transient_kubectl_error(r);
    return out;
  }
  out.job_id = jobset_name(spec);
  return out;
}

ObserveOutcome KubernetesEngine::observe(const EngineJobSpec& spec, const std::string& job_id,
                                         bool) {
  ObserveOutcome out;
  CommandSpec get;
  get.argv = kubectl(spec);
  for (const std::string& a :
       {std::string("get"), std::string("jobset"), job_id, std::string("--ignore-not-found"),
        std::string("-o"), std::string("json")})
    get.argv.push_back(a);
  get.env = tool_env_;
  get.timeout = std::chrono::seconds(20);
  auto r = runner_->run(get);
  if (!r.ok()) {
    out.error = r.describe("kubectl get jobset");
    return out;
  }
  json jobset = r.out.find_first_not_of(" \n\r\t") == std::string::npos
                    ? json(nullptr)
                    : json::parse(r.out, nullptr, false);
  if (jobset.is_discarded()) {
    out.error = "kubectl get jobset printed no JSON";
    return out;
  }
  CommandSpec pods;
  pods.argv = kubectl(spec);
  for (const std::string& a :
       {std::string("get"), std::string("pods"), std::string("-l"),
        "jobset.sigs.k8s.io/jobset-name=" + job_id, std::string("-o"), std::string("json")})
    pods.argv.push_back(a);
  pods.env = tool_env_;
  pods.timeout = std::chrono::seconds(20);
  auto p = runner_->run(pods);
  json pod_list = p.ok() ? json::parse(p.out, nullptr, false) : json::object();
  if (pod_list.is_discarded()) pod_list = json::object();
  out.observation = core::observe_jobset(jobset, pod_list);
  return out;
}

std::string KubernetesEngine::cancel(const EngineJobSpec& spec, const std::string& given_id) {
  // Without a job id (a submission whose answer was lost) the name is the attempt's own.
  const std::string job_id = given_id.empty() ? jobset_name(spec) : given_id;
  CommandSpec cmd;
  cmd.argv = kubectl(spec);
  for (const std::string& a : {std::string("delete"), std::string("jobset"), job_id,
                               std::string("--ignore-not-found"), std::string("--wait=false")})
    cmd.argv.push_back(a);
  cmd.env = tool_env_;
  cmd.timeout = std::chrono::seconds(30);
  auto r = runner_->run(cmd);
  if (!r.ok()) return r.describe("kubectl delete jobset");
  finished(spec, job_id);
  return "";
}

void KubernetesEngine::finished(const EngineJobSpec& spec, const std::string& job_id) {
  // The token is useless once the attempt is over; its Secret goes with it.
  CommandSpec cmd;
  cmd.argv = kubectl(spec);
  for (const std::string& a : {std::string("delete"), std::string("secret"), secret_name(job_id),
                               std::string("--ignore-not-found"), std::string("--wait=false")})
    cmd.argv.push_back(a);
  cmd.env = tool_env_;
  cmd.timeout = std::chrono::seconds(30);
  runner_->run(cmd);
}

}  // namespace podium::sched
