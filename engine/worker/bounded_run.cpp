#include "engine/worker/bounded_run.h"

#include <csignal>
#include <thread>
#include <vector>

namespace podium::worker {

BoundedRun run_bounded(ProcessLauncher& launcher, const LaunchSpec& spec,
                       std::chrono::milliseconds timeout, size_t max_bytes) {
  BoundedRun run;
  LaunchResult started = launcher.launch(spec);
  if (!started.child) {
    run.start_error = started.error.empty() ? "could not start" : started.error;
    return run;
  }
  ChildProcess& child = *started.child;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<OutputChunk> chunks;
  bool open = true;
  while (std::chrono::steady_clock::now() < deadline) {
    if (open) {
      chunks.clear();
      open = child.read_output(std::chrono::milliseconds(100), chunks);
      for (const auto& c : chunks) {
        if (run.output.size() < max_bytes) run.output += c.bytes;
        if (c.stream == Stream::out && run.stdout_text.size() < max_bytes)
          run.stdout_text += c.bytes;
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!open && (run.status = child.try_wait())) break;
  }
  if (!run.status) {
    child.signal_group(SIGKILL);
    child.close_output();
    for (int i = 0; i < 100 && !child.try_wait(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return run;
}

}  // namespace podium::worker
