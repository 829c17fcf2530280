#include "engine/core/logs/failure_classifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

RankOutcome exited(int rank, int code) {
  RankOutcome r;
  r.rank = rank;
  r.exit_code = code;
  return r;
}

RankOutcome killed(int rank, int signal, bool by_podium = false) {
  RankOutcome r;
  r.rank = rank;
  r.signal = signal;
  r.stopped_by_podium = by_podium;
  return r;
}

RankOutcome vanished(int rank) {
  RankOutcome r;
  r.rank = rank;
  r.vanished = true;
  return r;
}

TEST(FailureClassifierTest, AllRanksExitZeroSucceeds) {
  AttemptEvidence e;
  e.ranks = {exited(0, 0), exited(1, 0)};
  auto c = classify_failure(e);
  EXPECT_EQ(c.outcome, AttemptOutcome::succeeded);
  EXPECT_FALSE(c.failure_class.has_value());
}

TEST(FailureClassifierTest, EachDeterministicSignatureGivesItsClass) {
  struct Case {
    FailureSignature signature;
    FailureClass expected;
  };
  for (const Case& k : {Case{FailureSignature::hbm_oom, FailureClass::oom},
                        Case{FailureSignature::mesh_unmappable, FailureClass::mesh},
                        Case{FailureSignature::mesh_product_mismatch, FailureClass::mesh},
                        Case{FailureSignature::invalid_config_key, FailureClass::config},
                        Case{FailureSignature::invalid_config_value, FailureClass::config},
                        Case{FailureSignature::data_exhausted, FailureClass::data_exhausted},
                        Case{FailureSignature::nan_loss, FailureClass::nan}}) {
    AttemptEvidence e;
    e.ranks = {exited(0, 1), killed(1, 15, /*by_podium=*/true)};
    e.signatures = {k.signature};
    auto c = classify_failure(e);
    EXPECT_EQ(c.outcome, AttemptOutcome::failed);
    EXPECT_EQ(c.failure_class, k.expected) << to_string(k.signature);
    EXPECT_EQ(c.deciding_signature, k.signature);
    EXPECT_THAT(c.exit_codes, ElementsAre(1));
  }
}

TEST(FailureClassifierTest, DeterministicSignaturesBeatGenericExitCodes) {
  // StopIteration with exit code 1 after 7 of 10 steps (domain brief §3) is data_exhausted.
  AttemptEvidence e;
  e.ranks = {exited(0, 1), exited(1, 1), exited(2, 1), exited(3, 1)};
  e.signatures = {FailureSignature::data_exhausted};
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::data_exhausted);
}

TEST(FailureClassifierTest, DeterministicOrderFollowsStartUp) {
  AttemptEvidence e;
  e.ranks = {exited(0, 1)};
  e.signatures = {FailureSignature::nan_loss, FailureSignature::hbm_oom,
                  FailureSignature::invalid_config_key, FailureSignature::mesh_unmappable};
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::config);
  e.signatures = {FailureSignature::nan_loss, FailureSignature::hbm_oom};
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::oom);
  e.signatures = {FailureSignature::data_exhausted, FailureSignature::nan_loss};
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::nan);
}

TEST(FailureClassifierTest, VanishedRankBeatsTheOthersConsequentErrors) {
  AttemptEvidence e;
  e.ranks = {exited(0, 1), vanished(1), exited(2, 1), exited(3, 134)};
  auto c = classify_failure(e);
  EXPECT_EQ(c.failure_class, FailureClass::host_lost);
  EXPECT_EQ(c.deciding_rank, 1);
  // Exit codes of ranks that ended on their own are still reported.
  EXPECT_THAT(c.exit_codes, ElementsAre(1, 1, 134));
}

TEST(FailureClassifierTest, DeterministicSignatureBeatsAVanishedHost) {
  AttemptEvidence e;
  e.ranks = {exited(0, 1), vanished(1)};
  e.signatures = {FailureSignature::hbm_oom};
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::oom);
}

TEST(FailureClassifierTest, OutsideSigtermIsPreemption) {
  AttemptEvidence e;
  e.ranks = {killed(0, 15), killed(1, 15)};
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::preempted);
  // The shell's 128 + 15.
  e.ranks = {exited(0, 143)};
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::preempted);
  // MaxText exits 0 after saving on a preemption notice: still preempted.
  e.ranks = {exited(0, 0)};
  e.signatures = {FailureSignature::preempted};
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::preempted);
}

TEST(FailureClassifierTest, ANoticeMakesTheGangsEndAPreemption) {
  // The noticed host vanished and Podium stopped the rest of the gang: preempted, not host_lost
  // (which would be right without the notice) and not Podium's own teardown.
  AttemptEvidence e;
  e.ranks = {vanished(0), killed(1, 15, true)};
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::host_lost);
  e.preemption_notice = "preempted";
  auto c = classify_failure(e);
  EXPECT_EQ(c.failure_class, FailureClass::preempted);
  EXPECT_THAT(c.reason, HasSubstr("preempted"));
  // Every rank stopped by Podium after a TERMINATE_ON_HOST_MAINTENANCE notice.
  e.ranks = {killed(0, 15, true), killed(1, 15, true)};
  e.preemption_notice = "TERMINATE_ON_HOST_MAINTENANCE";
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::preempted);
  // A deterministic signature still wins: the same spec would fail the same way.
  e.signatures = {FailureSignature::hbm_oom};
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::oom);
}

TEST(FailureClassifierTest, PodiumsOwnSigtermIsNotPreemption) {
  // Rank 2 crashed, Podium stopped the rest of the gang with SIGTERM.
  AttemptEvidence e;
  e.ranks = {killed(0, 15, true), killed(1, 15, true), exited(2, 1)};
  auto c = classify_failure(e);
  EXPECT_EQ(c.failure_class, FailureClass::error);
  EXPECT_EQ(c.deciding_rank, 2);
  EXPECT_THAT(c.exit_codes, ElementsAre(1));
}

TEST(FailureClassifierTest, SigkillFromOutsideIsAnError) {
  AttemptEvidence e;
  e.ranks = {killed(0, 9)};
  auto c = classify_failure(e);
  EXPECT_EQ(c.failure_class, FailureClass::error);
  EXPECT_EQ(c.reason, "rank 0 killed by signal 9");
}

TEST(FailureClassifierTest, AStalledAttemptPodiumStoppedIsStalled) {
  // Podium stopped the hung gang: one rank left on SIGTERM, the SIGSTOPped one needed SIGKILL.
  AttemptEvidence e;
  e.stall_cause = "no step for 31 s after step 17 (bound 30 s: stall_seconds 30 s)";
  e.completed_a_step = true;
  e.ranks = {killed(0, 15, true), killed(1, 9, true)};
  auto c = classify_failure(e);
  EXPECT_EQ(c.outcome, AttemptOutcome::failed);
  EXPECT_EQ(c.failure_class, FailureClass::stalled);
  EXPECT_EQ(c.reason, e.stall_cause);
  EXPECT_FALSE(is_deterministic(FailureClass::stalled));
}

TEST(FailureClassifierTest, AStallDoesNotHideADeterministicCauseOrALostHost) {
  AttemptEvidence e;
  e.stall_cause = "no first step 1801 s after start";
  e.ranks = {killed(0, 15, true), killed(1, 15, true)};
  e.signatures = {FailureSignature::hbm_oom};
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::oom);
  e.signatures.clear();
  e.ranks = {killed(0, 15, true), vanished(1)};
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::host_lost);
  // A user's cancel after the stall: cancelled.
  e.user_cancelled = true;
  EXPECT_EQ(classify_failure(e).outcome, AttemptOutcome::cancelled);
}

TEST(FailureClassifierTest, UserCancelWinsOverEverything) {
  AttemptEvidence e;
  e.user_cancelled = true;
  e.ranks = {killed(0, 15, true), vanished(1)};
  e.signatures = {FailureSignature::hbm_oom};
  auto c = classify_failure(e);
  EXPECT_EQ(c.outcome, AttemptOutcome::cancelled);
  EXPECT_FALSE(c.failure_class.has_value());
}

TEST(FailureClassifierTest, WarningsAreReportedWithoutChangingTheClass) {
  AttemptEvidence e;
  e.ranks = {exited(0, 1)};
  e.signatures = {FailureSignature::tpu_busy, FailureSignature::cpu_fallback,
                  FailureSignature::tpu_busy};
  auto c = classify_failure(e);
  EXPECT_EQ(c.failure_class, FailureClass::error);
  EXPECT_THAT(c.warnings, ElementsAre(FailureSignature::tpu_busy, FailureSignature::cpu_fallback));
  EXPECT_EQ(c.reason, "rank 0 exited with code 1 (the TPU was held by another process)");
  // A successful run keeps its warnings too (it may have trained on CPU).
  e.ranks = {exited(0, 0)};
  auto ok = classify_failure(e);
  EXPECT_EQ(ok.outcome, AttemptOutcome::succeeded);
  EXPECT_EQ(ok.warnings.size(), 2u);
}

TEST(FailureClassifierTest, TeardownWithoutCauseAndNoRanks) {
  AttemptEvidence e;
  e.ranks = {killed(0, 15, true), killed(1, 15, true)};
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::error);
  EXPECT_EQ(classify_failure(AttemptEvidence{}).failure_class, FailureClass::error);
  // A rank vanished after Podium already asked it to stop: not a lost host.
  AttemptEvidence stopped;
  RankOutcome r = vanished(0);
  r.stopped_by_podium = true;
  stopped.ranks = {r};
  EXPECT_EQ(classify_failure(stopped).failure_class, FailureClass::error);
}

// Issue 27 point 4: an ImportError (or one of its kin) before the first step is the code's fault.
AttemptEvidence code_error_evidence() {
  AttemptEvidence e;
  // Rank 1 died of the exception, Podium stopped rank 0 (the gang).
  e.ranks = {killed(0, 15, /*by_podium=*/true), exited(1, 1)};
  e.signatures = {FailureSignature::python_code_error};
  e.signature_excerpts[FailureSignature::python_code_error] =
      "ModuleNotFoundError: No module named 'podium_no_such_module'";
  return e;
}

TEST(FailureClassifierTest, CodeErrorBeforeTheFirstStep) {
  auto c = classify_failure(code_error_evidence());
  EXPECT_EQ(c.outcome, AttemptOutcome::failed);
  EXPECT_EQ(c.failure_class, FailureClass::code_error);
  EXPECT_EQ(c.deciding_rank, 1);
  EXPECT_EQ(c.deciding_signature, FailureSignature::python_code_error);
  EXPECT_EQ(c.reason,
            "rank 1 exited with code 1 before the first step: ModuleNotFoundError: No module named "
            "'podium_no_such_module'");
  EXPECT_THAT(c.exit_codes, ElementsAre(1));
  EXPECT_TRUE(is_deterministic(FailureClass::code_error));
  EXPECT_EQ(to_json(c)["failure_class"], "code_error");
  // Without the excerpt the reason still says what happened.
  AttemptEvidence bare = code_error_evidence();
  bare.signature_excerpts.clear();
  EXPECT_EQ(classify_failure(bare).reason, "rank 1 exited with code 1 before the first step");
  // A rank killed by a signal it was not sent by Podium (SIGSEGV in an extension) counts too.
  AttemptEvidence segv = code_error_evidence();
  segv.ranks = {killed(0, 11)};
  EXPECT_EQ(classify_failure(segv).failure_class, FailureClass::code_error);
}

TEST(FailureClassifierTest, CodeErrorAfterTheFirstStepStaysAnError) {
  AttemptEvidence e = code_error_evidence();
  e.completed_a_step = true;
  auto c = classify_failure(e);
  EXPECT_EQ(c.failure_class, FailureClass::error);
  EXPECT_EQ(c.reason, "rank 1 exited with code 1");
}

TEST(FailureClassifierTest, CodeErrorNeedsARankThatEndedBadlyOnItsOwn) {
  // Every rank exited 0 although a TypeError line was printed (caught and logged): succeeded.
  AttemptEvidence ok = code_error_evidence();
  ok.ranks = {exited(0, 0), exited(1, 0)};
  EXPECT_EQ(classify_failure(ok).outcome, AttemptOutcome::succeeded);
  // Only Podium stopped the ranks (a teardown): no code error, the generic teardown rule.
  AttemptEvidence torn = code_error_evidence();
  torn.ranks = {killed(0, 15, true), killed(1, 15, true)};
  EXPECT_EQ(classify_failure(torn).failure_class, FailureClass::error);
  // No exception line: the generic error.
  AttemptEvidence plain = code_error_evidence();
  plain.signatures.clear();
  EXPECT_EQ(classify_failure(plain).failure_class, FailureClass::error);
}

TEST(FailureClassifierTest, InfrastructureAndSpecificSignaturesBeatACodeError) {
  // A lost host keeps its free recovery: the exception may be the consequence.
  AttemptEvidence lost = code_error_evidence();
  lost.ranks.push_back(vanished(2));
  EXPECT_EQ(classify_failure(lost).failure_class, FailureClass::host_lost);
  // SIGTERM from outside Podium: a preemption.
  AttemptEvidence preempted = code_error_evidence();
  preempted.ranks = {killed(0, 15)};
  EXPECT_EQ(classify_failure(preempted).failure_class, FailureClass::preempted);
  // A host's notice and an engine's verdict likewise.
  AttemptEvidence noticed = code_error_evidence();
  noticed.preemption_notice = "preempted";
  EXPECT_EQ(classify_failure(noticed).failure_class, FailureClass::preempted);
  AttemptEvidence engine = code_error_evidence();
  engine.engine_class = FailureClass::host_lost;
  EXPECT_EQ(classify_failure(engine).failure_class, FailureClass::host_lost);
  // MaxText's own config check raises before any step too and names the cause better.
  AttemptEvidence config = code_error_evidence();
  config.signatures.push_back(FailureSignature::invalid_config_key);
  EXPECT_EQ(classify_failure(config).failure_class, FailureClass::config);
  // A user's cancel wins over everything.
  AttemptEvidence cancelled = code_error_evidence();
  cancelled.user_cancelled = true;
  EXPECT_EQ(classify_failure(cancelled).outcome, AttemptOutcome::cancelled);
}

TEST(FailureClassifierTest, ClassifiesACodeErrorFromRealTracebackLines) {
  LogDigest d;
  d.feed("Traceback (most recent call last):");
  d.feed("  File \"<string>\", line 1, in <module>");
  d.feed("ModuleNotFoundError: No module named 'podium_no_such_module'");
  AttemptEvidence e;
  e.ranks = {exited(0, 1)};
  for (const auto& s : d.signatures()) {
    e.signatures.push_back(s.signature);
    e.signature_excerpts[s.signature] = s.first_excerpt;
  }
  auto c = classify_failure(e);
  EXPECT_EQ(c.failure_class, FailureClass::code_error);
  EXPECT_THAT(c.reason, HasSubstr("ModuleNotFoundError: No module named 'podium_no_such_module'"));
}

TEST(FailureClassifierTest, NamesRoundTripAndJson) {
  for (FailureClass c :
       {FailureClass::oom, FailureClass::mesh, FailureClass::config, FailureClass::data_exhausted,
        FailureClass::nan, FailureClass::preempted, FailureClass::host_lost, FailureClass::error,
        FailureClass::code_error, FailureClass::stalled}) {
    EXPECT_EQ(parse_failure_class(to_string(c)), c);
  }
  EXPECT_EQ(to_string(FailureClass::code_error), "code_error");
  EXPECT_FALSE(parse_failure_class("bogus").has_value());
  EXPECT_TRUE(is_deterministic(FailureClass::oom));
  EXPECT_FALSE(is_deterministic(FailureClass::preempted));
  EXPECT_FALSE(is_deterministic(FailureClass::error));

  AttemptEvidence e;
  e.ranks = {exited(0, 1)};
  e.signatures = {FailureSignature::hbm_oom, FailureSignature::tpu_busy};
  auto j = to_json(classify_failure(e));
  EXPECT_EQ(j["outcome"], "failed");
  EXPECT_EQ(j["failure_class"], "oom");
  EXPECT_EQ(j["deciding_signature"], "hbm_oom");
  EXPECT_TRUE(j["deciding_rank"].is_null());
  EXPECT_EQ(j["warnings"], nlohmann::json::array({"tpu_busy"}));
  EXPECT_EQ(j["exit_codes"], nlohmann::json::array({1}));
}

TEST(FailureClassifierTest, ClassifiesFromADigestOfRealLines) {
  LogDigest d;
  d.feed("completed step: 6, seconds: 0.7, loss: 1.0");
  d.feed("Traceback (most recent call last):");
  d.feed("  File \"/app/input_pipeline.py\", line 88, in __next__");
  d.feed("StopIteration");
  AttemptEvidence e;
  e.ranks = {exited(0, 1), exited(1, 1)};
  const auto seen = d.signatures_seen();
  e.signatures.assign(seen.begin(), seen.end());
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::data_exhausted);
}

TEST(FailureClassifierTest, EngineVerdictBeatsTheSigtermsItCaused) {
  // Slurm set a node down: both ranks got SIGTERM from outside Podium, which alone would read as
  // a preemption; the engine's NODE_FAIL says the host was lost.
  AttemptEvidence e;
  e.ranks = {killed(0, 15), killed(1, 15)};
  e.engine_class = FailureClass::host_lost;
  e.engine_reason = "Slurm: a node of the job failed or was set down (NODE_FAIL, NodeDown)";
  auto c = classify_failure(e);
  EXPECT_EQ(c.failure_class, FailureClass::host_lost);
  EXPECT_EQ(c.reason, e.engine_reason);
  // Without it, the same exits are a preemption.
  e.engine_class.reset();
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::preempted);
}

TEST(FailureClassifierTest, DeterministicLogSignatureStillBeatsTheEngine) {
  AttemptEvidence e;
  e.ranks = {exited(0, 1), killed(1, 15)};
  e.signatures = {FailureSignature::hbm_oom};
  e.engine_class = FailureClass::host_lost;
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::oom);
}

// Issue 28.3: a rank whose code bundle could not be had never started; Slurm's verdict on the
// job (FAILED, or the peers' SIGTERM from --kill-on-bad-exit) is its consequence.
TEST(FailureClassifierTest, AnUnusableCodeBundleIsACodeErrorWhateverFollowed) {
  const std::string line =
      "podium-worker: cannot start the process: code bundle unusable: the server sent 90 bytes "
      "whose digest is sha256:aa, not sha256:bb (3 downloads)";
  AttemptEvidence e;
  e.ranks = {killed(0, 15), exited(1, 127)};
  e.signatures = {FailureSignature::code_bundle_unusable};
  e.signature_excerpts[FailureSignature::code_bundle_unusable] = line;
  e.engine_class = FailureClass::host_lost;
  e.engine_reason = "Slurm: NODE_FAIL";
  e.completed_a_step = true;
  auto c = classify_failure(e);
  EXPECT_EQ(c.failure_class, FailureClass::code_error);
  EXPECT_EQ(c.deciding_signature, FailureSignature::code_bundle_unusable);
  EXPECT_EQ(c.deciding_rank, 0);  // the first rank that ended badly on its own
  EXPECT_EQ(c.reason, "a rank could not get the run's code bundle: " + line);
  EXPECT_EQ(to_json(c)["deciding_signature"], "code_bundle_unusable");
  EXPECT_EQ(failure_class_of(FailureSignature::code_bundle_unusable), FailureClass::code_error);
  EXPECT_EQ(parse_failure_signature("code_bundle_unusable"),
            FailureSignature::code_bundle_unusable);
  // Without the signature the same ends are the engine's verdict.
  e.signatures.clear();
  EXPECT_EQ(classify_failure(e).failure_class, FailureClass::host_lost);
}

}  // namespace
}  // namespace podium::core
